-- Live MMS sessions. `started` is what operators asked for and survives restarts; the lease says which
-- replica holds a started connection's association now (one at a time: a replica holds it only while its
-- lease, renewed against the database clock, has not expired); the session row is what that replica
-- reports about it; report subscriptions are re-enabled after every reconnect.
alter table protocol.connections add column started boolean not null default false;

create table protocol.session_leases (
  space text not null,
  connection_id uuid not null,
  owner text not null,
  expires_at timestamptz not null,
  primary key (space, connection_id),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);
create index session_leases_owner on protocol.session_leases (owner);

create table protocol.session_states (
  space text not null,
  connection_id uuid not null,
  owner text not null,
  state text not null,
  since timestamptz not null,
  last_error text,
  reconnects integer not null default 0,
  identity jsonb,
  updated_at timestamptz not null default now(),
  primary key (space, connection_id),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);

create table protocol.report_subscriptions (
  space text not null,
  connection_id uuid not null,
  rcb text not null,
  options jsonb not null,
  primary key (space, connection_id, rcb),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);
