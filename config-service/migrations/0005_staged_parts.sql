-- Messages larger than one bus message while they travel (platform/src/staging.ts): a request the gateway
-- staged before sending its reference (an animation with a 2 MiB SVG), or a reply staged for the caller
-- to read back. Kept per space, dropped once used; what nobody used is swept after ten minutes.

create table config.staged_parts (
  space text not null,
  id uuid not null,
  idx integer not null,
  data bytea not null,
  staged timestamptz not null default now(),
  primary key (space, id, idx)
);
create index staged_parts_age on config.staged_parts (staged);
