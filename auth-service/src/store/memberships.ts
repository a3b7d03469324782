import type { RoleResponse } from '@scada/contracts';
import type { Queryable } from '@scada/platform';

/*
 * A user's roles and spaces one at a time, their default space, and the deletion of several users at
 * once. Each change also marks the user as changed (audit fields), so that the change shows on the user.
 */

function toRole(r: Record<string, unknown>): RoleResponse {
  return {
    id: r.id as RoleResponse['id'],
    name: r.name as RoleResponse['name'],
    createdBy: (r.created_by as string | null) ?? null,
    creationDate: (r.creation_date as Date).toISOString(),
    lastModifiedBy: (r.last_modified_by as string | null) ?? null,
    lastModifiedDate: (r.last_modified_date as Date).toISOString(),
  };
}

/** The built-in roles, or the ones named, in order of power. */
export async function listRoles(db: Queryable, only?: readonly string[]): Promise<RoleResponse[]> {
  const order = `array_position(array['viewer', 'operator', 'editor', 'admin'], id)`;
  const { rows } = only
    ? await db.query(`select * from auth.roles where id = any($1::text[]) order by ${order}`, [only])
    : await db.query(`select * from auth.roles order by ${order}`);
  return rows.map(toRole);
}

/** Marks a user changed by `actor` now. */
async function touch(db: Queryable, userId: string, actor: string | null): Promise<void> {
  await db.query('update auth.users set last_modified_by = $2, last_modified_date = now() where id = $1', [userId, actor]);
}

/** Gives a user a role; false when they had it. */
export async function grantRole(db: Queryable, userId: string, role: string, actor: string | null): Promise<boolean> {
  const { rowCount } = await db.query('insert into auth.user_roles (user_id, role) values ($1, $2) on conflict do nothing', [userId, role]);
  if (rowCount === 1) await touch(db, userId, actor);
  return rowCount === 1;
}

/** Takes a role from a user; false when they did not have it. */
export async function revokeRole(db: Queryable, userId: string, role: string, actor: string | null): Promise<boolean> {
  const { rowCount } = await db.query('delete from auth.user_roles where user_id = $1 and role = $2', [userId, role]);
  if (rowCount === 1) await touch(db, userId, actor);
  return rowCount === 1;
}

/** Gives a user a space; false when they had it. */
export async function grantSpace(db: Queryable, userId: string, spaceId: string, actor: string | null): Promise<boolean> {
  const { rowCount } = await db.query('insert into auth.user_spaces (user_id, space_id) values ($1, $2) on conflict do nothing', [
    userId,
    spaceId,
  ]);
  if (rowCount === 1) await touch(db, userId, actor);
  return rowCount === 1;
}

/** Takes a space from a user; false when they did not have it. */
export async function revokeSpace(db: Queryable, userId: string, spaceId: string, actor: string | null): Promise<boolean> {
  const { rowCount } = await db.query('delete from auth.user_spaces where user_id = $1 and space_id = $2', [userId, spaceId]);
  if (rowCount === 1) await touch(db, userId, actor);
  return rowCount === 1;
}

/** Records the space a user's requests work in when they name none. */
export async function chooseDefaultSpace(db: Queryable, userId: string, spaceId: string, actor: string | null): Promise<void> {
  await db.query('update auth.users set default_space = $2, last_modified_by = $3, last_modified_date = now() where id = $1', [
    userId,
    spaceId,
    actor,
  ]);
}

/** Usernames of the users of a space, administrators (who are in every space) included, by name. */
export async function usernamesIn(db: Queryable, spaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ username: string }>(
    `select u.username from auth.users u
      where exists (select 1 from auth.user_spaces s where s.user_id = u.id and s.space_id = $1)
         or exists (select 1 from auth.user_roles r where r.user_id = u.id and r.role = 'admin')
      order by u.username_key`,
    [spaceId],
  );
  return rows.map((r) => r.username);
}

/**
 * Locks every enabled administrator's row for the rest of the transaction and answers their ids, so that
 * two changes that each leave one administrator cannot both pass their check.
 */
export async function lockEnabledAdmins(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select u.id from auth.users u where u.enabled
        and exists (select 1 from auth.user_roles r where r.user_id = u.id and r.role = 'admin')
      order by u.id for update`,
  );
  return rows.map((r) => r.id);
}

/** The ids among `ids` that name a user. */
export async function existingUserIds(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('select id from auth.users where id = any($1::text[])', [ids]);
  return new Set(rows.map((r) => r.id));
}

/** Deletes users (roles, spaces and sessions go with them). */
export async function deleteUserRows(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query('delete from auth.users where id = any($1::text[])', [ids]);
}
