import type { Queryable } from '@scada/platform';
import type { ConnectionRequest, ConnectionResponse } from '@scada/contracts';

const select = `select c.*, f.name as file_name, f.size as file_size, f.sha256, f.edition, f.warnings, f.connection_warnings
  from protocol.connections c left join protocol.scl_files f on f.space = c.space and f.connection_id = c.id`;

function toConnection(r: Record<string, unknown>): ConnectionResponse {
  return {
    id: r.id as string,
    name: r.name as string,
    ip: r.ip as string,
    port: r.port as number,
    projectId: r.project_id as string,
    protocol: 'IEC 61850',
    ...(r.dsc === null || r.dsc === undefined ? {} : { dsc: r.dsc as string }),
    createdBy: r.created_by as string,
    creationDate: (r.creation_date as Date).toISOString(),
    lastModifiedBy: r.last_modified_by as string,
    lastModifiedDate: (r.last_modified_date as Date).toISOString(),
    sclFile:
      r.file_name === null || r.file_name === undefined
        ? null
        : {
            name: r.file_name as string,
            size: Number(r.file_size),
            sha256: r.sha256 as string,
            edition: r.edition as string,
            warnings: r.warnings as never,
            connectionWarnings: r.connection_warnings as never,
          },
  };
}

/** Connections of a space (of one project when given), by name. */
export async function listConnections(db: Queryable, space: string, projectId?: string): Promise<ConnectionResponse[]> {
  const { rows } =
    projectId === undefined
      ? await db.query(`${select} where c.space = $1 order by c.name collate "C", c.id`, [space])
      : await db.query(`${select} where c.space = $1 and c.project_id = $2 order by c.name collate "C", c.id`, [space, projectId]);
  return rows.map(toConnection);
}

/** One connection of a space. */
export async function findConnection(db: Queryable, space: string, id: string): Promise<ConnectionResponse | null> {
  const { rows } = await db.query(`${select} where c.space = $1 and c.id = $2`, [space, id]);
  return rows[0] ? toConnection(rows[0]) : null;
}

/** Inserts or replaces a connection's own fields; false when the id is not in this space (update). */
export async function saveConnection(
  db: Queryable,
  space: string,
  id: string,
  c: ConnectionRequest,
  actor: string,
  create: boolean,
): Promise<boolean> {
  const values = [space, id, c.projectId, c.name, c.ip, c.port, c.protocol, c.dsc ?? null, actor];
  if (create) {
    await db.query(
      `insert into protocol.connections (space, id, project_id, name, ip, port, protocol, dsc, created_by, creation_date, last_modified_by, last_modified_date)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), $9, now())`,
      values,
    );
    return true;
  }
  const { rowCount } = await db.query(
    `update protocol.connections set project_id = $3, name = $4, ip = $5, port = $6, protocol = $7, dsc = $8,
       last_modified_by = $9, last_modified_date = now() where space = $1 and id = $2`,
    values,
  );
  return rowCount === 1;
}

/** Deletes a connection with its file; false when it is not in this space. */
export async function deleteConnection(db: Queryable, space: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from protocol.connections where space = $1 and id = $2', [space, id]);
  return rowCount === 1;
}
