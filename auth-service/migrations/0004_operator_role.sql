-- The operator role, between viewer and editor: it reads what a viewer reads and acknowledges and shelves
-- alarms (the alarms' own operations name it); everything else it may not change.
alter table auth.user_roles drop constraint if exists user_roles_role_check;
alter table auth.user_roles add constraint user_roles_role_check check (role in ('viewer', 'operator', 'editor', 'admin'));
insert into auth.roles (id, name) values ('operator', 'operator') on conflict (id) do nothing;
