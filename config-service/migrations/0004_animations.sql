-- Animations: an SVG drawing and its bindings, in a project. The SVG was checked by the service before it
-- is stored; the bindings and the placeholders they may name are kept as JSON. An animation may draw a
-- faceplate (a symbol whose placeholders boards fill). A project, or a faceplate, is not deleted while
-- animations refer to it.

create table config.animations (
  space text not null,
  id uuid not null,
  project_id uuid not null,
  name text not null,
  dsc text,
  svg text not null,
  bindings jsonb not null,
  placeholders jsonb not null,
  faceplate_id uuid,
  created_by text not null,
  creation_date timestamptz not null,
  last_modified_by text not null,
  last_modified_date timestamptz not null,
  primary key (space, id),
  foreign key (space, project_id) references config.projects (space, id),
  foreign key (space, faceplate_id) references config.faceplates (space, id)
);
create unique index animations_name on config.animations (space, project_id, name collate "C");
create index animations_order on config.animations (space, name collate "C", id);
