import type { Queryable, SecretBox } from '@scada/platform';
import { centralSite, type ConnectionRequest, type ConnectionResponse } from '@scada/contracts';
import { securityPurposes, type SealedSecurity, type SecurityChange, type StoredTls } from '../domain/connection_security.ts';

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
    site: (r.site as string | undefined) ?? centralSite,
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
    hasPassword: r.password_sealed !== null && r.password_sealed !== undefined,
    tls:
      r.tls_sealed === null || r.tls_sealed === undefined
        ? null
        : {
            caSubject: r.tls_ca_subject as string,
            caExpires: (r.tls_ca_expires as Date).toISOString(),
            clientCertSubject: (r.tls_client_subject as string | null) ?? null,
            clientCertExpires: r.tls_client_expires ? (r.tls_client_expires as Date).toISOString() : null,
            serverName: (r.tls_server_name as string | null) ?? null,
          },
    enableReports: (r.enable_reports as string[] | null | undefined) ?? [],
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

/** The security columns and the values a change sets them to (those it leaves as they are are absent). */
function securityColumns(change: SecurityChange): [string, unknown][] {
  const columns: [string, unknown][] = [];
  if (change.passwordSealed !== undefined) columns.push(['password_sealed', change.passwordSealed]);
  if (change.tls !== undefined) {
    const tls: StoredTls | null = change.tls;
    columns.push(
      ['tls_sealed', tls?.sealed ?? null],
      ['tls_ca_subject', tls?.caSubject ?? null],
      ['tls_ca_expires', tls?.caExpires ?? null],
      ['tls_client_subject', tls?.clientSubject ?? null],
      ['tls_client_expires', tls?.clientExpires ?? null],
      ['tls_server_name', tls?.serverName ?? null],
    );
  }
  return columns;
}

/**
 * Inserts or replaces a connection's own fields and changes its security settings as `security` says;
 * false when the id is not in this space (update). A replacement that changes the address, the port or
 * the security settings counts up the link revision: the replica holding the connection associates anew.
 */
export async function saveConnection(
  db: Queryable,
  space: string,
  id: string,
  c: ConnectionRequest,
  actor: string,
  create: boolean,
  security: SecurityChange = {},
): Promise<boolean> {
  // A replacement without a site (or a list of report blocks) keeps the stored one (null here); a new
  // connection is central unless it names one, and enables no report block unless it lists some.
  const reports = c.enableReports ?? (create ? [] : null);
  const values = [
    space,
    id,
    c.projectId,
    c.name,
    c.ip,
    c.port,
    c.protocol,
    c.dsc ?? null,
    actor,
    c.site ?? (create ? centralSite : null),
    reports === null ? null : JSON.stringify(reports),
  ];
  const columns = securityColumns(security);
  const extra = columns.map(([, v]) => v);
  if (create) {
    const names = columns.map(([n]) => `, ${n}`).join('');
    const places = columns.map((_, i) => `, $${values.length + 1 + i}`).join('');
    await db.query(
      `insert into protocol.connections (space, id, project_id, name, ip, port, protocol, dsc, created_by, creation_date, last_modified_by, last_modified_date, site, enable_reports${names})
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), $9, now(), $10, $11::jsonb${places})`,
      [...values, ...extra],
    );
    return true;
  }
  const sets = columns.map(([n], i) => `, ${n} = $${values.length + 1 + i}`).join('');
  const { rowCount } = await db.query(
    `update protocol.connections set project_id = $3, name = $4, ip = $5, port = $6, protocol = $7, dsc = $8,
       last_modified_by = $9, last_modified_date = now(), site = coalesce($10, site), enable_reports = coalesce($11::jsonb, enable_reports)${sets},
       link_revision = link_revision + case when ip is distinct from $5 or port is distinct from $6 or site is distinct from coalesce($10, site) or ${columns.length > 0} then 1 else 0 end
     where space = $1 and id = $2`,
    [...values, ...extra],
  );
  return rowCount === 1;
}

/** The sealed security settings of a connection (to associate with), or null when it is gone. */
export async function sealedSecurity(db: Queryable, space: string, id: string): Promise<SealedSecurity | null> {
  const { rows } = await db.query<{ password_sealed: string | null; tls_sealed: string | null; tls_server_name: string | null }>(
    'select password_sealed, tls_sealed, tls_server_name from protocol.connections where space = $1 and id = $2',
    [space, id],
  );
  const r = rows[0];
  return r ? { passwordSealed: r.password_sealed, tlsSealed: r.tls_sealed, serverName: r.tls_server_name } : null;
}

/** Deletes a connection with its file; false when it is not in this space. */
export async function deleteConnection(db: Queryable, space: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from protocol.connections where space = $1 and id = $2', [space, id]);
  return rowCount === 1;
}

/**
 * Seals again under the current key what an older key sealed (after a rotation: SECRETS_PREVIOUS_KEY
 * still opens it); answers how many connections were sealed again.
 */
export async function resealSecurity(db: Queryable, box: SecretBox): Promise<number> {
  const { rows } = await db.query<{ space: string; id: string; password_sealed: string | null; tls_sealed: string | null }>(
    'select space, id, password_sealed, tls_sealed from protocol.connections where password_sealed is not null or tls_sealed is not null',
  );
  let count = 0;
  for (const r of rows) {
    const stale = (v: string | null) => v !== null && !box.isCurrent(v);
    if (!stale(r.password_sealed) && !stale(r.tls_sealed)) continue;
    const again = (v: string | null, purpose: string) => (v === null || !stale(v) ? v : box.seal(box.open(v, purpose), purpose));
    const where = { space: r.space, id: r.id };
    await db.query(
      'update protocol.connections set password_sealed = $3, tls_sealed = $4 where space = $1 and id = $2 and password_sealed is not distinct from $5 and tls_sealed is not distinct from $6',
      [
        r.space,
        r.id,
        again(r.password_sealed, securityPurposes(where).password),
        again(r.tls_sealed, securityPurposes(where).tls),
        r.password_sealed,
        r.tls_sealed,
      ],
    );
    count++;
  }
  return count;
}
