import { gunzipSync, gzipSync } from 'node:zlib';
import type { SclBrowseTree, SclIssue } from '@scada/contracts';
import type { Queryable } from '@scada/platform';

/** One part of a file's browse tree: the tree without IEDs (`iedName` null) or one IED's subtree. */
export type BrowsePart = { iedName: string | null; jsonBytes: number; data: Buffer };

/** What is kept of a parsed file besides its bytes. */
export type FileFacts = {
  name: string;
  size: number;
  sha256: string;
  edition: string;
  chunks: number;
  /** The parser's warnings, as the API answers them. */
  warnings: SclIssue[];
  connectionWarnings: unknown;
  browse: BrowsePart[];
};

/**
 * Packs a part of a browse tree for keeping, as the API answers it: its JSON, compressed. The parser's
 * parts (`@scada/iec61850`'s `BrowseTree` without IEDs, or one `BrowseIed`) are taken as the contract's
 * `SclBrowseTree` and its IED: the compiler holds the two shapes together here.
 */
export function packBrowsePart(iedName: string | null, tree: SclBrowseTree | SclBrowseTree['ieds'][number]): BrowsePart {
  const json = Buffer.from(JSON.stringify(tree));
  return { iedName, jsonBytes: json.length, data: gzipSync(json) };
}

/** Stages one chunk of an upload (idempotent for a retried chunk). */
export async function stageChunk(db: Queryable, space: string, uploadId: string, index: number, data: Buffer): Promise<void> {
  await db.query(
    'insert into protocol.upload_chunks (space, upload_id, idx, data) values ($1, $2, $3, $4) on conflict (space, upload_id, idx) do update set data = excluded.data',
    [space, uploadId, index, data],
  );
}

/** The chunks of a staged upload, read one at a time. */
export async function* stagedChunks(db: Queryable, space: string, uploadId: string, count: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < count; i++) {
    const { rows } = await db.query<{ data: Buffer }>(
      'select data from protocol.upload_chunks where space = $1 and upload_id = $2 and idx = $3',
      [space, uploadId, i],
    );
    if (!rows[0]) throw new Error(`chunk ${i} of upload ${uploadId} is missing`);
    yield rows[0].data;
  }
}

/** Number of chunks staged for an upload. */
export async function stagedCount(db: Queryable, space: string, uploadId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    'select count(*) as n from protocol.upload_chunks where space = $1 and upload_id = $2',
    [space, uploadId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Replaces a connection's file with a staged upload, inside the caller's transaction. */
export async function adoptUpload(db: Queryable, space: string, connectionId: string, uploadId: string, facts: FileFacts): Promise<void> {
  await db.query('delete from protocol.scl_files where space = $1 and connection_id = $2', [space, connectionId]);
  await db.query(
    `insert into protocol.scl_files (space, connection_id, name, size, sha256, edition, chunks, warnings, connection_warnings)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      space,
      connectionId,
      facts.name,
      facts.size,
      facts.sha256,
      facts.edition,
      facts.chunks,
      JSON.stringify(facts.warnings),
      JSON.stringify(facts.connectionWarnings),
    ],
  );
  for (const [part, p] of facts.browse.entries()) {
    await db.query(
      'insert into protocol.scl_browse_parts (space, connection_id, part, ied_name, json_bytes, data) values ($1, $2, $3, $4, $5, $6)',
      [space, connectionId, part, p.iedName, p.jsonBytes, p.data],
    );
  }
  await db.query(
    `insert into protocol.scl_file_chunks (space, connection_id, idx, data)
     select space, $2, idx, data from protocol.upload_chunks where space = $1 and upload_id = $3`,
    [space, connectionId, uploadId],
  );
  await db.query('delete from protocol.upload_chunks where space = $1 and upload_id = $2', [space, uploadId]);
}

/** Refreshes the connection checks of a kept file after the connection's address changed. */
export async function setConnectionWarnings(db: Queryable, space: string, connectionId: string, warnings: unknown): Promise<void> {
  await db.query('update protocol.scl_files set connection_warnings = $3 where space = $1 and connection_id = $2', [
    space,
    connectionId,
    JSON.stringify(warnings),
  ]);
}

/** Why a browse could not be answered from what is kept. */
export type BrowseRefusal = { refused: 'unknown_ied' } | { refused: 'too_large'; jsonBytes: number; ieds: string[] };

/**
 * The browse tree kept with a connection's file (every IED, or the one named), null without a file, or
 * why not: the IED is not in the file, or the tree is larger than `maxJsonBytes` (decided from the sizes
 * kept with the parts, before any part is read).
 */
export async function browseOf(
  db: Queryable,
  space: string,
  connectionId: string,
  options: { iedName?: string; maxJsonBytes: number },
): Promise<{ tree: { ieds: unknown[] } & Record<string, unknown> } | BrowseRefusal | null> {
  const { rows: sizes } = await db.query<{ part: number; ied_name: string | null; json_bytes: number }>(
    'select part, ied_name, json_bytes from protocol.scl_browse_parts where space = $1 and connection_id = $2 order by part',
    [space, connectionId],
  );
  if (sizes.length === 0) {
    // A file kept before the tree was stored in parts.
    const { rows } = await db.query<{ browse: ({ ieds: { name: string }[] } & Record<string, unknown>) | null }>(
      'select browse from protocol.scl_files where space = $1 and connection_id = $2',
      [space, connectionId],
    );
    const tree = rows[0]?.browse;
    if (!tree) return null;
    if (options.iedName === undefined) return { tree };
    const ieds = tree.ieds.filter((i) => i.name === options.iedName);
    return ieds.length ? { tree: { ...tree, ieds } } : { refused: 'unknown_ied' };
  }
  const wanted = sizes.filter((p) => p.ied_name === null || options.iedName === undefined || p.ied_name === options.iedName);
  if (options.iedName !== undefined && wanted.length === 1) return { refused: 'unknown_ied' };
  const jsonBytes = wanted.reduce((sum, p) => sum + p.json_bytes, 0);
  if (jsonBytes > options.maxJsonBytes)
    return { refused: 'too_large', jsonBytes, ieds: sizes.flatMap((p) => (p.ied_name === null ? [] : [p.ied_name])) };
  const { rows } = await db.query<{ ied_name: string | null; data: Buffer }>(
    'select ied_name, data from protocol.scl_browse_parts where space = $1 and connection_id = $2 and part = any($3::int[]) order by part',
    [space, connectionId, wanted.map((p) => p.part)],
  );
  const parts = rows.map((r) => JSON.parse(gunzipSync(r.data).toString('utf8')) as unknown);
  const tree = parts[0] as { ieds: unknown[] } & Record<string, unknown>;
  return { tree: { ...tree, ieds: parts.slice(1) } };
}

/** One chunk of a stored file with the file's name, size and chunk count; null when there is none. */
export async function fileChunk(db: Queryable, space: string, connectionId: string, index: number) {
  const { rows } = await db.query<{ name: string; size: string | number; chunks: number; data: Buffer | null }>(
    `select f.name, f.size, f.chunks, c.data from protocol.scl_files f
       left join protocol.scl_file_chunks c on c.space = f.space and c.connection_id = f.connection_id and c.idx = $3
     where f.space = $1 and f.connection_id = $2`,
    [space, connectionId, index],
  );
  const r = rows[0];
  return r ? { name: r.name, size: Number(r.size), chunks: r.chunks, data: r.data ?? Buffer.alloc(0) } : null;
}

/** Deletes staged uploads nobody committed within `maxAgeSeconds`. */
export async function dropStaleUploads(db: Queryable, maxAgeSeconds: number): Promise<number> {
  const { rowCount } = await db.query('delete from protocol.upload_chunks where staged < now() - make_interval(secs => $1)', [
    maxAgeSeconds,
  ]);
  return rowCount;
}
