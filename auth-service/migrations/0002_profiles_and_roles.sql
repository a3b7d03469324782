-- Profiles and roles as entities. A user may choose a default space (the space their requests work in
-- when they name none; forgotten when the space goes), and an administrator's password reset marks the
-- account until the user chooses a password of their own. The three built-in roles become rows, created
-- with the schema, so that a user's roles answer as entities with audit fields; roles stay global.
alter table auth.users add column default_space text references auth.spaces (id) on delete set null;
alter table auth.users add column require_password_reset boolean not null default false;

create table auth.roles (
  id text primary key,
  name text not null,
  created_by text,
  creation_date timestamptz not null default now(),
  last_modified_by text,
  last_modified_date timestamptz not null default now()
);
insert into auth.roles (id, name) values ('viewer', 'viewer'), ('editor', 'editor'), ('admin', 'admin');
alter table auth.user_roles add constraint user_roles_role_fkey foreign key (role) references auth.roles (id);
