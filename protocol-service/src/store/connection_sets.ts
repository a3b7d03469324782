import type { Queryable } from '@scada/platform';

/** Which connections of a space: by ids, or a project's (all of them, or the one of a name). */
export type ConnectionSet = { ids: readonly string[] } | { projectId: string; name?: string };

function where(set: ConnectionSet): { sql: string; params: unknown[] } {
  if ('ids' in set) return { sql: 'c.id = any($2::uuid[])', params: [set.ids] };
  return set.name === undefined
    ? { sql: 'c.project_id = $2', params: [set.projectId] }
    : { sql: 'c.project_id = $2 and c.name = $3', params: [set.projectId, set.name] };
}

/** The ids of the connections of a set that the space holds. */
export async function connectionIds(db: Queryable, space: string, set: ConnectionSet): Promise<string[]> {
  const w = where(set);
  const { rows } = await db.query<{ id: string }>(`select c.id from protocol.connections c where c.space = $1 and ${w.sql} order by c.id`, [
    space,
    ...w.params,
  ]);
  return rows.map((r) => r.id);
}

/**
 * The status of each connection of a set, by id: connected while it is started, its lease is live and the
 * lease holder reports the association as connected (the rule of a single connection's status).
 */
export async function connectionStatuses(
  db: Queryable,
  space: string,
  set: ConnectionSet,
): Promise<Record<string, 'Connected' | 'Disconnected'>> {
  const w = where(set);
  const { rows } = await db.query<{ id: string; connected: boolean | null }>(
    `select c.id, (c.started and s.state = 'connected' and l.owner = s.owner and l.expires_at >= now()) as connected
       from protocol.connections c
       left join protocol.session_states s on s.space = c.space and s.connection_id = c.id
       left join protocol.session_leases l on l.space = c.space and l.connection_id = c.id
      where c.space = $1 and ${w.sql} order by c.id`,
    [space, ...w.params],
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.connected ? 'Connected' : 'Disconnected']));
}

/** Which of the connections are held by a replica now (a live lease), by id. */
export async function heldConnections(db: Queryable, space: string, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ connection_id: string }>(
    'select connection_id from protocol.session_leases where space = $1 and connection_id = any($2::uuid[]) and expires_at >= now()',
    [space, ids],
  );
  return rows.map((r) => r.connection_id);
}

/** Deletes connections with their files, leases, session records and report blocks. */
export async function deleteConnections(db: Queryable, space: string, ids: readonly string[]): Promise<void> {
  await db.query('delete from protocol.connections where space = $1 and id = any($2::uuid[])', [space, ids]);
}
