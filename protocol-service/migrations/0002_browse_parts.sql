-- The browse tree of a file is kept in parts, one per IED plus one for the rest (edition, subnetworks,
-- enumerations), each compressed: a station file of hundreds of IEDs expands to a tree several times its
-- size, which neither one row nor one answer should carry. `json_bytes` is a part's uncompressed size, so
-- that a browse too large for one answer is refused before anything is read.
create table protocol.scl_browse_parts (
  space text not null,
  connection_id uuid not null,
  part integer not null,
  ied_name text,
  json_bytes integer not null,
  data bytea not null,
  primary key (space, connection_id, part),
  foreign key (space, connection_id) references protocol.scl_files (space, connection_id) on delete cascade
);
create index scl_browse_parts_ied on protocol.scl_browse_parts (space, connection_id, ied_name);

-- Files stored before this migration keep their tree in `browse`; new files leave it empty.
alter table protocol.scl_files alter column browse drop not null;
