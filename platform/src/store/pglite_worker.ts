/**
 * The embedded store's worker thread (`PGliteStore`'s `thread: 'worker'`): PGlite opens, runs initdb or
 * loads its template, and runs every statement here, so PostgreSQL's CPU is off the process's event loop.
 * The main thread keeps the turns, the transactions' guard and the error mapping; it sends one statement
 * at a time and a transaction as BEGIN, its statements and COMMIT or ROLLBACK, in its turn. The main
 * thread imports this module only to learn its URL (in a bundle, the URL of the chunk it became), so it
 * does nothing unless it runs as the store's worker.
 *
 * Messages: in `{id, op: 'query' | 'copy' | 'steps' | 'commit' | 'dump' | 'close' | 'exit', …}`; out `{type: 'ready'}` or
 * `{type: 'failed', error}` once, then `{id, ok: true, value}` or `{id, ok: false, error}` for each.
 */
import { PGlite, type Results } from '@electric-sql/pglite';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { OwnerOnlyNodeFS } from './owner_only_fs.ts';
import { releaseFileBundle } from './file_bundle.ts';
import { copyRows, pgCompatibleParsers, pgCompatibleSerializers, runStatement, runSteps, startParams } from './pglite_run.ts';
import type { Step } from './store.ts';

/** Where this module is: the file the store's worker thread starts. */
export const storeWorkerUrl = import.meta.url;

/** What the store puts in `workerData` to start its worker. */
export const storeWorkerMarker = 'scada-store-worker';

/** How the worker opens its database: a data folder (already locked, tightened and unpacked by the main thread) or memory. */
export type StoreWorkerData = {
  kind: typeof storeWorkerMarker;
  pgdata?: string;
  template?: Blob;
  sharedBuffersMB?: number;
  maxConnections?: number;
  /** Tests only: the worker accepts `exit`, and ends as a crashed one would. */
  testHooks?: boolean;
};

/** What the main thread asks of the worker. */
export type StoreRequest =
  | { op: 'query'; sql: string; params?: unknown[] }
  | { op: 'copy'; table: string; columns: readonly string[]; text: string | Uint8Array }
  | { op: 'steps'; steps: Step[] }
  | { op: 'commit' | 'dump' | 'close' | 'exit' };

/** A request from the main thread: what it asks, and the number its answer carries. */
export type ToStoreWorker = StoreRequest & { id: number };

/** An error as it crosses to the main thread: its name, message and own fields (SQLSTATE, constraint, …). */
export type SentError = { name: string; message: string; fields: Record<string, unknown> };

/** An answer to the main thread. */
export type FromStoreWorker =
  | { type: 'ready'; onDemand: number }
  | { type: 'failed'; error: SentError }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SentError };

/** An error's name, message and own plain fields; PGlite's parameters were already taken off by `runStatement`. */
export function sendable(err: unknown): SentError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (key === 'params' || key === 'query' || key === 'queryOptions') continue;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { name: err.name, message: err.message, fields };
}

/**
 * As {@link pgCompatibleParsers}, but a bytea value gets a buffer of its own: a small Buffer is a view of
 * the thread's shared 8 KiB pool, and the copy to the main thread would carry the whole pool with it.
 */
const workerParsers: typeof pgCompatibleParsers = {
  ...pgCompatibleParsers,
  17: (value: string) => {
    const bytes = Buffer.allocUnsafeSlow((value.length - 2) / 2);
    bytes.write(value.slice(2), 'hex');
    return bytes;
  },
};

/**
 * Lets the worker's port go once it has said its last word. Deno's `parentPort` has no `close` (the main
 * thread ends the worker right after in any case): there, nothing to do, rather than an uncaught error.
 */
function closePort(port: NonNullable<typeof parentPort>): void {
  if (typeof (port as { close?: unknown }).close === 'function') port.close();
}

async function serve(data: StoreWorkerData, port: NonNullable<typeof parentPort>): Promise<void> {
  let db: PGlite;
  try {
    db = await PGlite.create({
      ...(data.pgdata !== undefined ? { fs: new OwnerOnlyNodeFS(data.pgdata) } : {}),
      parsers: workerParsers,
      serializers: pgCompatibleSerializers,
      loadDataDir: data.template,
      startParams: startParams({ sharedBuffersMB: data.sharedBuffersMB, maxConnections: data.maxConnections }),
    });
  } catch (err) {
    port.postMessage({ type: 'failed', error: sendable(err) } satisfies FromStoreWorker);
    closePort(port);
    return;
  }
  // One request at a time, in the order sent: the main thread's turns already order them.
  let chain = Promise.resolve();
  port.on('message', (msg: ToStoreWorker) => {
    chain = chain.then(async () => {
      try {
        port.postMessage({ id: msg.id, ok: true, value: await answer(db, msg) } satisfies FromStoreWorker);
      } catch (err) {
        port.postMessage({ id: msg.id, ok: false, error: sendable(err) } satisfies FromStoreWorker);
      }
      if (msg.op === 'close') closePort(port);
    });
  });
  // A data folder's store started (initdb, when it ran, is done with them): PostgreSQL's share and lib
  // files read on demand, as on the main thread.
  const onDemand = data.pgdata !== undefined ? releaseFileBundle(db.Module.FS) : 0;
  port.postMessage({ type: 'ready', onDemand } satisfies FromStoreWorker);
}

async function answer(db: PGlite, msg: ToStoreWorker): Promise<unknown> {
  switch (msg.op) {
    case 'query':
      return runStatement(db, msg.sql, msg.params);
    case 'copy':
      return copyRows(db, msg.table, msg.columns, msg.text);
    case 'steps':
      return runSteps(db, msg.steps);
    case 'commit': {
      // As PGlite's own transaction: a COMMIT of a failed transaction rolls back, and says so as an error.
      const [result] = (await db.exec('COMMIT')) as (Results & { command?: string })[];
      if (result?.command === 'ROLLBACK') {
        throw Object.assign(new Error('Transaction was rolled back instead of committed'), { code: '25P02', severity: 'ERROR' });
      }
      return null;
    }
    case 'dump':
      return db.dumpDataDir('none');
    case 'close':
      if (!db.closed) await db.close();
      return null;
    case 'exit':
      if ((workerData as StoreWorkerData).testHooks === true) process.exit(70);
      throw new Error('exit is a test hook');
  }
}

const data = workerData as StoreWorkerData | null;
if (!isMainThread && data?.kind === storeWorkerMarker && parentPort) await serve(data, parentPort);
