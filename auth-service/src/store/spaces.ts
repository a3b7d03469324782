import type { Queryable } from '@scada/platform';
import type { SpaceResponse } from '@scada/contracts';

function toSpace(r: Record<string, unknown>): SpaceResponse {
  return {
    id: r.id as string,
    name: r.name as string,
    createdBy: (r.created_by as string | null) ?? null,
    creationDate: (r.creation_date as Date).toISOString(),
    lastModifiedBy: (r.last_modified_by as string | null) ?? null,
    lastModifiedDate: (r.last_modified_date as Date).toISOString(),
  };
}

/** Every space, or the ones given, by name. */
export async function listSpaces(db: Queryable, only?: string[]): Promise<SpaceResponse[]> {
  const { rows } = only
    ? await db.query('select * from auth.spaces where id = any($1::text[]) order by name, id', [only])
    : await db.query('select * from auth.spaces order by name, id');
  return rows.map(toSpace);
}

/** One space. */
export async function findSpace(db: Queryable, id: string): Promise<SpaceResponse | null> {
  const { rows } = await db.query('select * from auth.spaces where id = $1', [id]);
  return rows[0] ? toSpace(rows[0]) : null;
}

/** Inserts a space; false when the name is taken. */
export async function insertSpace(db: Queryable, id: string, name: string, actor: string | null): Promise<boolean> {
  const { rowCount } = await db.query(
    'insert into auth.spaces (id, name, created_by, last_modified_by) values ($1, $2, $3, $3) on conflict do nothing',
    [id, name, actor],
  );
  return rowCount === 1;
}

/** Renames a space; answers false when the name is taken by another. */
export async function renameSpace(db: Queryable, id: string, name: string, actor: string | null): Promise<boolean> {
  const { rows } = await db.query('select 1 from auth.spaces where name = $1 and id <> $2', [name, id]);
  if (rows.length > 0) return false;
  await db.query('update auth.spaces set name = $2, last_modified_by = $3, last_modified_date = now() where id = $1', [id, name, actor]);
  return true;
}

/** Users for whom this is the only space. */
export async function usersOnlyIn(db: Queryable, spaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    `select count(*) as n from auth.user_spaces us where us.space_id = $1
       and not exists (select 1 from auth.user_spaces o where o.user_id = us.user_id and o.space_id <> $1)`,
    [spaceId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Deletes a space (memberships go with it). */
export async function deleteSpaceRow(db: Queryable, id: string): Promise<void> {
  await db.query('delete from auth.spaces where id = $1', [id]);
}
