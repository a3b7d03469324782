-- Alarm states and their journal. The definitions are the config service's; the evaluator (the replica
-- that holds a connection's session) keeps here what each alarm of the connection is now, so that a
-- replica taking the connection over goes on from it: an active alarm is neither lost nor raised twice.
-- Operators' transitions (acknowledge, shelve, …) change the same rows, each under a row lock, and every
-- transition appends a row to the journal, which nothing updates or deletes.

create table protocol.alarm_states (
  space text not null,
  alarm_id uuid not null,
  connection_id uuid not null,
  group_id uuid not null,
  project_id uuid not null,
  name text not null,
  reference text not null,
  priority integer not null,
  message text not null,
  state text not null check (state in ('normal', 'unacknowledged', 'acknowledged', 'rtn_unacknowledged', 'shelved', 'out_of_service')),
  -- Whether the condition holds (kept while shelved or out of service, for when the alarm comes back).
  active boolean not null default false,
  -- When the condition began to hold, while an on-delay runs (null: it does not hold, or the alarm came).
  pending_since timestamptz,
  value jsonb,
  since timestamptz not null,
  raised_at timestamptz,
  shelved_until timestamptz,
  shelve_reason text,
  by text,
  -- When a value last arrived for the attribute (stale alarms).
  last_value_at timestamptz,
  primary key (space, alarm_id)
);
create index alarm_states_connection on protocol.alarm_states (space, connection_id);
create index alarm_states_not_normal on protocol.alarm_states (space, priority, since) where state <> 'normal';

create table protocol.alarm_journal (
  seq bigserial primary key,
  space text not null,
  alarm_id uuid not null,
  from_state text not null,
  to_state text not null,
  at timestamptz not null,
  by text,
  value jsonb,
  comment text
);
create index alarm_journal_space on protocol.alarm_journal (space, at, seq);
create index alarm_journal_alarm on protocol.alarm_journal (space, alarm_id, seq);
