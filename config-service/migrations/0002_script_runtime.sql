-- Scripts that run (the script runtime): the phase offset of a periodic script, whether each script is
-- scheduled and which replica holds it (one at a time: a replica fires a script only while its lease,
-- renewed against the database clock, has not expired, as the protocol service holds connections), the
-- state a script keeps between runs, and its last runs. Everything hangs under its script and goes with it.

alter table config.scripts add column if not exists offset_ms integer check (offset_ms >= 0);

-- A row while the script is scheduled. `last_due_at` is the last time it was due that a holder dealt with
-- (ran it or counted it skipped): a replica taking it over counts the times due since then as missed.
create table if not exists config.script_schedules (
  space text not null,
  script_id uuid not null,
  scheduled_at timestamptz not null default now(),
  owner text,
  expires_at timestamptz,
  last_due_at timestamptz,
  missed bigint not null default 0,
  overlapped bigint not null default 0,
  primary key (space, script_id),
  foreign key (space, script_id) references config.scripts (space, id) on delete cascade
);
create index if not exists script_schedules_owner on config.script_schedules (owner);

-- What `ins.state.set` left: JSON text of at most 64 KiB.
create table if not exists config.script_states (
  space text not null,
  script_id uuid not null,
  state text not null,
  updated_at timestamptz not null default now(),
  primary key (space, script_id),
  foreign key (space, script_id) references config.scripts (space, id) on delete cascade
);

-- The last runs of each script (the service keeps the newest 100).
create table if not exists config.script_runs (
  space text not null,
  script_id uuid not null,
  id bigint generated always as identity,
  started_at timestamptz not null,
  duration_ms double precision not null,
  outcome text not null,
  trigger text not null check (trigger in ('schedule', 'hand')),
  by_whom text not null,
  error jsonb,
  logs jsonb,
  primary key (space, script_id, id),
  foreign key (space, script_id) references config.scripts (space, id) on delete cascade
);
