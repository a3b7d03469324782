-- What the holding replica warns about a session (model mismatch, buffer overflow), and the control log:
-- every write and control an operator sent to a device, with its outcome and the device's reason, kept
-- for the space's editors (IEC 62443-3-3 SR 2.8, auditable events).
alter table protocol.session_states add column if not exists warnings jsonb not null default '[]'::jsonb;

create table if not exists protocol.control_log (
  space text not null,
  connection_id uuid not null,
  id bigint generated always as identity,
  at timestamptz not null default now(),
  user_id text,
  username text,
  action text not null,
  reference text not null,
  value jsonb,
  outcome text not null,
  status integer not null,
  device_error jsonb,
  detail text,
  primary key (space, connection_id, id),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);
create index if not exists control_log_newest on protocol.control_log (space, connection_id, at desc, id desc);
