-- What the replica holding a connection has delivered, so that whichever replica holds it next resumes
-- there: per buffered report block the EntryID of the last entry delivered, and the last value of every
-- reported attribute (served, stale, at once after a takeover). `device` names the device that sent them
-- (a hash of its identity and model check): another device there makes them meaningless.
create table if not exists protocol.report_positions (
  space text not null,
  connection_id uuid not null,
  rcb text not null,
  entry_id text not null,
  device text not null,
  primary key (space, connection_id, rcb),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);

create table if not exists protocol.last_values (
  space text not null,
  connection_id uuid not null,
  reference text not null,
  rcb text not null,
  value jsonb not null,
  device text not null,
  primary key (space, connection_id, reference),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);
