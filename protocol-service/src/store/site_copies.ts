/**
 * A site's copy of its connections. The hub is where connections are configured; a site keeps the rows of
 * its own connections (the connection with its sealed password and TLS settings, the SCL file with its
 * chunks and browse parts, the report blocks to enable) in its own store, so it holds its sessions across
 * an uplink outage and its own restarts. A digest per connection tells the site what changed; rows travel
 * as PostgreSQL's JSON of them and are put back with `json_populate_record`, column for column, so the copy
 * is the hub's row whatever columns later migrations add.
 */
import { createHash } from 'node:crypto';
import type { Queryable, Store } from '@scada/platform';

/** A connection of a site with the digest of what the site keeps of it. */
export type SiteCopyVersion = { space: string; id: string; version: string };

/** What the digest covers: the row's change time and the fields a replacement may leave it with, the file, the report blocks. */
const versionOf = `md5(concat_ws('|', extract(epoch from c.last_modified_date)::text, c.started::text, c.link_revision::text, c.site,
    coalesce(c.password_sealed, ''), coalesce(c.tls_sealed, ''),
    coalesce((select f.sha256 from protocol.scl_files f where f.space = c.space and f.connection_id = c.id), ''),
    coalesce((select string_agg(s.rcb || s.options::text, ',' order by s.rcb) from protocol.report_subscriptions s
               where s.space = c.space and s.connection_id = c.id), '')))`;

/** Every connection of a site, with its digest. */
export async function siteVersions(db: Queryable, site: string): Promise<SiteCopyVersion[]> {
  const { rows } = await db.query<SiteCopyVersion>(
    `select c.space, c.id::text as id, ${versionOf} as version from protocol.connections c where c.site = $1 order by c.space, c.id`,
    [site],
  );
  return rows;
}

/** One digest of a site's connections as a whole, the same at the hub and at the site for the same rows. */
export function configurationDigest(versions: readonly SiteCopyVersion[]): string {
  const lines = versions.map((v) => `${v.space}/${v.id}=${v.version}`).sort();
  return createHash('sha256').update(lines.join('\n')).digest('base64url');
}

/** The rows of one connection of a site; null when it is not (or no longer) the site's. */
export async function siteCopy(
  db: Queryable,
  site: string,
  space: string,
  id: string,
): Promise<{ version: string; rows: Record<string, unknown[]>; chunks: number; parts: number[] } | null> {
  const { rows } = await db.query<{ version: string; row: unknown }>(
    `select ${versionOf} as version, row_to_json(c) as row from protocol.connections c where c.site = $1 and c.space = $2 and c.id = $3`,
    [site, space, id],
  );
  if (!rows[0]) return null;
  const of = async (table: string, columns = '*') =>
    (
      await db.query<{ row: unknown }>(
        `select row_to_json(t) as row from (select ${columns} from protocol.${table} where space = $1 and connection_id = $2) t`,
        [space, id],
      )
    ).rows.map((r) => r.row);
  const chunks = await db.query<{ n: number }>(
    'select count(*)::int as n from protocol.scl_file_chunks where space = $1 and connection_id = $2',
    [space, id],
  );
  const parts = await db.query<{ part: number }>(
    'select part from protocol.scl_browse_parts where space = $1 and connection_id = $2 order by part',
    [space, id],
  );
  return {
    version: rows[0].version,
    rows: { connections: [rows[0].row], scl_files: await of('scl_files'), report_subscriptions: await of('report_subscriptions') },
    chunks: chunks.rows[0]?.n ?? 0,
    parts: parts.rows.map((r) => r.part),
  };
}

/** One chunk or browse part of a site connection's file, as JSON of its row; null when it is not there. */
export async function siteCopyPart(
  db: Queryable,
  site: string,
  space: string,
  id: string,
  table: 'scl_file_chunks' | 'scl_browse_parts',
  key: number,
): Promise<unknown> {
  const keyColumn = table === 'scl_file_chunks' ? 'idx' : 'part';
  const { rows } = await db.query<{ row: unknown }>(
    `select row_to_json(t) as row from protocol.${table} t
      where t.space = $1 and t.connection_id = $2 and t.${keyColumn} = $3
        and exists (select 1 from protocol.connections c where c.space = $1 and c.id = $2 and c.site = $4)`,
    [space, id, key, site],
  );
  return rows[0]?.row ?? null;
}

const columnsOf = new Map<string, string[]>();

async function columns(db: Queryable, table: string): Promise<string[]> {
  let names = columnsOf.get(table);
  if (!names) {
    const { rows } = await db.query<{ name: string }>(
      `select column_name as name from information_schema.columns
        where table_schema = 'protocol' and table_name = $1 and is_generated = 'NEVER' and identity_generation is null order by ordinal_position`,
      [table],
    );
    names = rows.map((r) => r.name);
    columnsOf.set(table, names);
  }
  return names;
}

/**
 * Puts a connection's rows in place at the site, in one transaction: the connection row updated in place
 * (its session, lease and delivery positions stay), its file, browse parts and report blocks replaced.
 */
export async function applySiteCopy(
  store: Store,
  copy: { rows: Record<string, unknown[]> },
  chunks: unknown[],
  parts: unknown[],
): Promise<void> {
  const connection = copy.rows.connections?.[0];
  if (!connection) return;
  const { space, id } = connection as { space: string; id: string };
  const names = await columns(store, 'connections');
  const list = names.map((n) => `"${n}"`).join(', ');
  const updates = names
    .filter((n) => n !== 'space' && n !== 'id')
    .map((n) => `"${n}" = excluded."${n}"`)
    .join(', ');
  const put = async (tx: Queryable, table: string, rows: unknown[]) => {
    if (rows.length === 0) return;
    const cols = (await columns(tx, table)).map((n) => `"${n}"`).join(', ');
    await tx.query(
      `insert into protocol.${table} (${cols}) select ${cols} from json_populate_recordset(null::protocol.${table}, $1::json)`,
      [JSON.stringify(rows)],
    );
  };
  await store.transaction(async (tx) => {
    await tx.query(
      `insert into protocol.connections (${list}) select ${list} from json_populate_record(null::protocol.connections, $1::json)
       on conflict (space, id) do update set ${updates}`,
      [JSON.stringify(connection)],
    );
    await tx.query('delete from protocol.scl_files where space = $1 and connection_id = $2', [space, id]);
    await tx.query('delete from protocol.report_subscriptions where space = $1 and connection_id = $2', [space, id]);
    await put(tx, 'scl_files', copy.rows.scl_files ?? []);
    await put(tx, 'scl_file_chunks', chunks);
    await put(tx, 'scl_browse_parts', parts);
    await put(tx, 'report_subscriptions', copy.rows.report_subscriptions ?? []);
  });
}

/** Removes a connection the hub no longer gives the site. */
export async function dropSiteCopy(db: Queryable, space: string, id: string): Promise<void> {
  await db.query('delete from protocol.connections where space = $1 and id = $2', [space, id]);
}
