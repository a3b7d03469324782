import type { Queryable } from '@scada/platform';

/** What is kept of a parsed file besides its bytes. */
export type FileFacts = { name: string; size: number; sha256: string; edition: string; chunks: number; warnings: unknown; connectionWarnings: unknown; browse: unknown };

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
    const { rows } = await db.query<{ data: Buffer }>('select data from protocol.upload_chunks where space = $1 and upload_id = $2 and idx = $3', [space, uploadId, i]);
    if (!rows[0]) throw new Error(`chunk ${i} of upload ${uploadId} is missing`);
    yield rows[0].data;
  }
}

/** Number of chunks staged for an upload. */
export async function stagedCount(db: Queryable, space: string, uploadId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>('select count(*) as n from protocol.upload_chunks where space = $1 and upload_id = $2', [space, uploadId]);
  return Number(rows[0]?.n ?? 0);
}

/** Replaces a connection's file with a staged upload, inside the caller's transaction. */
export async function adoptUpload(db: Queryable, space: string, connectionId: string, uploadId: string, facts: FileFacts): Promise<void> {
  await db.query('delete from protocol.scl_files where space = $1 and connection_id = $2', [space, connectionId]);
  await db.query(
    `insert into protocol.scl_files (space, connection_id, name, size, sha256, edition, chunks, warnings, connection_warnings, browse)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [space, connectionId, facts.name, facts.size, facts.sha256, facts.edition, facts.chunks, JSON.stringify(facts.warnings), JSON.stringify(facts.connectionWarnings), JSON.stringify(facts.browse)],
  );
  await db.query(
    `insert into protocol.scl_file_chunks (space, connection_id, idx, data)
     select space, $2, idx, data from protocol.upload_chunks where space = $1 and upload_id = $3`,
    [space, connectionId, uploadId],
  );
  await db.query('delete from protocol.upload_chunks where space = $1 and upload_id = $2', [space, uploadId]);
}

/** Refreshes the connection checks of a kept file after the connection's address changed. */
export async function setConnectionWarnings(db: Queryable, space: string, connectionId: string, warnings: unknown): Promise<void> {
  await db.query('update protocol.scl_files set connection_warnings = $3 where space = $1 and connection_id = $2', [space, connectionId, JSON.stringify(warnings)]);
}

/** The browse tree kept with a connection's file, or null. */
export async function browseOf(db: Queryable, space: string, connectionId: string): Promise<unknown> {
  const { rows } = await db.query('select browse from protocol.scl_files where space = $1 and connection_id = $2', [space, connectionId]);
  return rows[0]?.browse ?? null;
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
  const { rowCount } = await db.query('delete from protocol.upload_chunks where staged < now() - make_interval(secs => $1)', [maxAgeSeconds]);
  return rowCount;
}
