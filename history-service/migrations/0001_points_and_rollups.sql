-- Every recorded value, one row each, in range partitions by day of the platform's time of receipt
-- (`received_at`); the partitions are made and dropped by the service (src/partitions.ts).
-- A value is recorded once: by connection, reference, block (`rcb`, '' for a value read on request),
-- the report's place (`seq`: `e:<EntryID>` for a buffered block, `s:<SqNum>` for an unbuffered one,
-- `r` for a read) and its receipt time. A redelivered event carries the same receipt time, so it finds
-- its row; an unbuffered block's SqNum that wrapped around does not, as its receipt time is another.
create table history.points (
  connection_id uuid not null,
  reference text not null,
  received_at timestamptz not null,
  rcb text not null,
  seq text not null,
  space text not null,
  seq_num integer,
  device_time timestamptz,
  -- A number as a number; anything else (booleans, strings, structures) as JSON in `value`.
  num double precision,
  value jsonb,
  quality jsonb,
  -- The quality's validity, ranked: 0 good (or none given), 1 questionable, 2 reserved, 3 invalid.
  validity smallint not null
) partition by range (received_at);

-- Uniqueness (the partition key must be part of it) and the range reads of one attribute, in one index.
create unique index points_once on history.points (connection_id, reference, received_at, rcb, seq);
create index points_time on history.points using brin (received_at);

-- Rollups per minute and per hour, kept as points arrive: every point counts, numbers also to min, max
-- and sum; `last_*` is the value received last.
create table history.rollup_minute (
  connection_id uuid not null,
  reference text not null,
  bucket timestamptz not null,
  space text not null,
  count integer not null,
  numbers integer not null,
  min double precision,
  max double precision,
  sum double precision,
  first_at timestamptz not null,
  last_at timestamptz not null,
  last_num double precision,
  last_value jsonb,
  worst smallint not null,
  primary key (connection_id, reference, bucket)
);

create table history.rollup_hour (like history.rollup_minute including all);

-- The sessions' states as the protocol service announced them: the gaps of a trend.
create table history.sessions (
  connection_id uuid not null,
  since timestamptz not null,
  state text not null,
  space text not null,
  last_error text,
  primary key (connection_id, since, state)
);
