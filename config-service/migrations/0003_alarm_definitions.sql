-- Alarm definitions: alarm groups in a project (a name and the range of priorities their alarms take),
-- and alarms in a group, each on a data attribute of a connection (which the protocol service owns: it is
-- named, not referenced). As for the other resources, a group is not deleted while it has alarms, nor a
-- project while it has groups. The states of the alarms are the protocol service's (protocol.alarm_states).

create table config.alarm_groups (
  space text not null,
  id uuid not null,
  project_id uuid not null,
  name text not null,
  min_priority integer not null check (min_priority between 1 and 255),
  max_priority integer not null check (max_priority between 1 and 255),
  dsc text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, project_id) references config.projects (space, id),
  check (min_priority <= max_priority)
);
create unique index alarm_groups_name on config.alarm_groups (space, project_id, name collate "C");
create index alarm_groups_order on config.alarm_groups (space, name collate "C", id);

create table config.alarms (
  space text not null,
  id uuid not null,
  group_id uuid not null,
  name text not null,
  connection_id uuid not null,
  reference text not null,
  type text not null check (type in ('state', 'analog', 'quality', 'stale')),
  priority integer not null check (priority between 1 and 255),
  message text not null,
  alarm_when boolean,
  hh double precision,
  h double precision,
  l double precision,
  ll double precision,
  deadband double precision check (deadband >= 0),
  stale_seconds integer check (stale_seconds >= 1),
  on_delay_ms integer check (on_delay_ms >= 0),
  dsc text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, group_id) references config.alarm_groups (space, id)
);
create unique index alarms_name on config.alarms (space, group_id, name collate "C");
create index alarms_order on config.alarms (space, name collate "C", id);
