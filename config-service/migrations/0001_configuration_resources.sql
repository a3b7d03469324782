-- Projects, dashboard board groups and boards, faceplates and placeholders, scripts.
--
-- Every row carries its space, and every key starts with it: the primary keys are (space, id) and each
-- child points at its parent through (space, parent_id), so a row can only ever hang under a parent of
-- its own space. Parents cannot be deleted while they have children (no cascade; the service answers
-- 409 naming them). Names compare exactly and order by code point (collation "C"), the same on every
-- server whatever its locale.

create table config.projects (
  space text not null,
  id uuid not null,
  name text not null,
  is_active boolean not null,
  dsc text,
  address text,
  longitude double precision,
  latitude double precision,
  icon_file_id text,
  properties text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id)
);
-- Unique names per space; also the order of the list.
create unique index projects_name on config.projects (space, name collate "C");

create table config.board_groups (
  space text not null,
  id uuid not null,
  name text not null,
  color text,
  rank integer check (rank >= 0),
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id)
);
create unique index board_groups_name on config.board_groups (space, name collate "C");
create index board_groups_order on config.board_groups (space, rank nulls last, name collate "C");

create table config.boards (
  space text not null,
  id uuid not null,
  group_id uuid not null,
  name text not null,
  type text not null check (type in ('Animation', 'Html', 'Iframe')),
  header boolean not null,
  x integer check (x >= 0),
  y integer check (y >= 0),
  width integer check (width >= 1),
  height integer check (height >= 1),
  iframe_url text,
  animation_params text,
  animation_id text,
  custom_html_id text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, group_id) references config.board_groups (space, id)
);
-- Unique names per group; serves the list of a group and the parent check of a group's deletion.
create unique index boards_name on config.boards (space, group_id, name collate "C");

create table config.faceplates (
  space text not null,
  id uuid not null,
  project_id uuid not null,
  name text not null,
  color text,
  dsc text,
  svg_file_id text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, project_id) references config.projects (space, id)
);
create unique index faceplates_name on config.faceplates (space, project_id, name collate "C");
create index faceplates_order on config.faceplates (space, name collate "C", id);

create table config.placeholders (
  space text not null,
  id uuid not null,
  faceplate_id uuid not null,
  name text not null,
  type text not null check (type in ('number', 'text', 'tag', 'combo', 'color', 'animation')),
  dsc text,
  sort_order integer,
  group_name text,
  props text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, faceplate_id) references config.faceplates (space, id)
);
create unique index placeholders_name on config.placeholders (space, faceplate_id, name collate "C");
create index placeholders_order on config.placeholders (space, faceplate_id, sort_order nulls last, name collate "C");

-- The code is kept as bytes: exactly what was sent, NUL characters included (a text column refuses them).
create table config.scripts (
  space text not null,
  id uuid not null,
  project_id uuid not null,
  name text not null,
  type text not null check (type in ('Periodic', 'Daily', 'Once', 'None')),
  log boolean not null,
  code bytea not null,
  time timestamptz,
  delay integer check (delay >= 0),
  period integer check (period >= 100),
  dsc text,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, project_id) references config.projects (space, id)
);
create unique index scripts_name on config.scripts (space, project_id, name collate "C");
create index scripts_order on config.scripts (space, name collate "C", id);
