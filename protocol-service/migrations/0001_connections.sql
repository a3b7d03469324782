-- IEC 61850 connections with their SCL files. Every row carries its space and every key starts with it.
-- Files are kept as chunks (the same 256 KiB chunks they travel in), so no step ever holds a whole
-- large file; uploads are staged the same way until the create or update that names them commits.

create table protocol.connections (
  space text not null,
  id uuid not null,
  project_id uuid not null,
  name text not null,
  ip text not null,
  port integer not null check (port between 0 and 65535),
  protocol text not null check (protocol = 'IEC 61850'),
  dsc text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id)
);
create unique index connections_name on protocol.connections (space, project_id, name);
create index connections_list on protocol.connections (space, name collate "C", id);

create table protocol.scl_files (
  space text not null,
  connection_id uuid not null,
  name text not null,
  size bigint not null,
  sha256 text not null,
  edition text not null,
  chunks integer not null,
  warnings jsonb not null,
  connection_warnings jsonb not null,
  browse jsonb not null,
  primary key (space, connection_id),
  foreign key (space, connection_id) references protocol.connections (space, id) on delete cascade
);

create table protocol.scl_file_chunks (
  space text not null,
  connection_id uuid not null,
  idx integer not null,
  data bytea not null,
  primary key (space, connection_id, idx),
  foreign key (space, connection_id) references protocol.scl_files (space, connection_id) on delete cascade
);

create table protocol.upload_chunks (
  space text not null,
  upload_id uuid not null,
  idx integer not null,
  data bytea not null,
  staged timestamptz not null default now(),
  primary key (space, upload_id, idx)
);
create index upload_chunks_staged on protocol.upload_chunks (staged);
