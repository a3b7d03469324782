/**
 * What runs PGlite's statements, wherever it runs (the main thread's store, the store's worker thread):
 * its start parameters, the parsers that make it answer like `pg`, and one statement run as `pg` runs it.
 * Kept apart from `pglite_store.ts` so that the worker thread loads only this and PGlite.
 */
import { PGlite, type PGliteOptions, type Results, type Transaction } from '@electric-sql/pglite';
import { asConstraintViolation, copySql, type QueryResult, type Step } from './store.ts';

/**
 * Parsers that make PGlite answer like `PgStore`: int8 as a string (PGlite gives a number, or a bigint
 * past 2^53), bytea as a Buffer (PGlite gives a Uint8Array), date as its text (PGlite gives a Date).
 * Arrays follow their element's parser.
 */
export const pgCompatibleParsers: NonNullable<PGliteOptions['parsers']> = {
  20: (value: string) => value,
  17: (value: string) => Buffer.from(value.slice(2), 'hex'),
  1082: (value: string) => value,
};

/**
 * Serializers that make PGlite take parameters as `pg` does, at `pg`'s cost: a bytea parameter (a Buffer or
 * any Uint8Array) as its hex text in one native call. PGlite's own turns every byte into a string of its own,
 * which for a 2 MiB upload is millions of small strings on the store's thread.
 */
export const pgCompatibleSerializers: NonNullable<PGliteOptions['serializers']> = {
  17: (value: unknown) => {
    if (!(value instanceof Uint8Array)) throw new TypeError('a bytea parameter must be bytes');
    return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  },
};

/**
 * PostgreSQL's memory settings for the embedded store, sized for one connection on a small box: its
 * defaults (128 MB of shared buffers, 64 MB for index builds) are a server's, and every page PGlite's
 * WebAssembly memory touches stays resident for the life of the process (bench/README.md, "Footprint").
 */
export const embeddedSettings = ['shared_buffers=16MB', 'work_mem=2MB', 'maintenance_work_mem=8MB', 'temp_buffers=2MB'];

/**
 * PGlite's own start parameters with {@link embeddedSettings} after them (a `-c` on the command line wins
 * over the data folder's postgresql.conf), the shared buffers as `sharedBuffersMB` says when given, and
 * `max_connections` when `maxConnections` is given.
 */
export function startParams(options: { sharedBuffersMB?: number; maxConnections?: number }): string[] {
  const { sharedBuffersMB, maxConnections } = options;
  const settings = embeddedSettings.map((s) =>
    sharedBuffersMB !== undefined && s.startsWith('shared_buffers=') ? `shared_buffers=${sharedBuffersMB}MB` : s,
  );
  if (maxConnections !== undefined) settings.push(`max_connections=${maxConnections}`);
  return [...PGlite.defaultStartParams, ...settings.flatMap((s) => ['-c', s])];
}

function toResult<R>(result: Results | Results[]): QueryResult<R> {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  // rowCount is per statement (rows of a SELECT, rows changed by an UPDATE); affectedRows sums a whole exec.
  return { rows: (last?.rows ?? []) as R[], rowCount: last?.rowCount ?? last?.affectedRows ?? 0 };
}

/** Runs a statement like `pg` does: without parameters, as a simple query that may hold several statements. */
export async function runStatement<R>(db: PGlite | Transaction, sql: string, params: unknown[] | undefined): Promise<QueryResult<R>> {
  try {
    if (params === undefined || params.length === 0) return toResult<R>(await db.exec(sql));
    return toResult<R>(await db.query(sql, params));
  } catch (err) {
    throw mapped(err);
  }
}

/** An error of PGlite as the store answers it: without the parameters, a broken constraint as a `ConstraintViolation`. */
function mapped(err: unknown): unknown {
  // PGlite attaches the parameters to its errors; they must not travel on into logs (see log.ts).
  if (err && typeof err === 'object' && 'params' in err) delete (err as { params?: unknown }).params;
  return asConstraintViolation(err);
}

/**
 * Appends rows from COPY text (`Queryable.copyRows`): PGlite reads a COPY's data from `/dev/blob`, a file
 * it makes of the blob given with the statement. Answers how many rows went in.
 */
export async function copyRows(
  db: PGlite | Transaction,
  table: string,
  columns: readonly string[],
  text: string | Uint8Array,
): Promise<number> {
  try {
    const result = await db.query(copySql(table, columns, "'/dev/blob'"), [], { blob: new Blob([text as BlobPart]) });
    return result.affectedRows ?? 0;
  } catch (err) {
    throw mapped(err);
  }
}

/**
 * Runs the steps of `Transactional.transactionOf` in one transaction of PGlite's: BEGIN, each step, COMMIT,
 * or ROLLBACK and the step's error (a deferred constraint's failing the COMMIT as a `ConstraintViolation`).
 */
export async function runSteps(db: PGlite, steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]> {
  try {
    return await db.transaction(async (tx) => {
      const results: QueryResult<Record<string, unknown>>[] = [];
      for (const step of steps) {
        if ('copy' in step) {
          const { table, columns, text } = step.copy;
          results.push({ rows: [], rowCount: await copyRows(tx, table, columns, text) });
        } else results.push(await runStatement<Record<string, unknown>>(tx, step.sql, step.params));
      }
      return results;
    });
  } catch (err) {
    throw mapped(err);
  }
}
