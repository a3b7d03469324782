import { deadlines } from '@scada/contracts';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { privateFolder, tightenTree } from '../private_dir.ts';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { type FolderLock, lockFolder } from './lock_file.ts';
import { releaseFileBundle } from './file_bundle.ts';
import { workerEntry } from '../worker_entry.ts';
import { unpackStoreTemplate } from './template_tar.ts';
import { OwnerOnlyNodeFS, ownerOnlyDatabaseFolder } from './owner_only_fs.ts';
import { Worker } from 'node:worker_threads';
import { copyRows, pgCompatibleParsers, pgCompatibleSerializers, runStatement, runSteps, startParams } from './pglite_run.ts';
import {
  asConstraintViolation,
  type ConstraintViolation,
  type QueryResult,
  type Queryable,
  type Step,
  type Store,
  StoreOverloadedError,
  StoreUnavailableError,
  type Transactional,
} from './store.ts';
import type { FromStoreWorker, SentError, StoreRequest, StoreWorkerData, ToStoreWorker } from './pglite_worker.ts';

/** Options of {@link PGliteStore.open} and {@link PGliteStore.memory}. */
export type PGliteStoreOptions = {
  log?: Logger;
  /**
   * A data folder dumped by `dumpDataDir('none')`, used instead of running initdb when the database is
   * new: about 0.4 s instead of 2.5 s. Tests use it; a service does not need it.
   */
  template?: Blob;
  /**
   * A file holding such a dump (`.tar`, or `.tar.gz` gzip-compressed), unpacked into the data folder when
   * the database is new and the file exists: the edge bundles carry one made at build time with every
   * migration applied (`storeTemplateFile`), so a first start neither runs initdb (seconds, and some
   * 800 MiB at its peak) nor the migrations. It is unpacked by Node onto the disk, not handed to PGlite as
   * `loadDataDir`, which would pass every file through its WebAssembly memory (90 MiB more, kept).
   */
  templateFile?: string;
  /** How long `ping()` waits; the process's standard deadline (`BUS_TIMEOUT_MS`), 5 s when not given. */
  timeoutMs?: number;
  /**
   * Refuse at once a store call made inside a transaction of the same store, which would otherwise
   * wait forever for the one connection. It follows each transaction's async context
   * (`AsyncLocalStorage`), which on Node 20 makes every promise of the process cost more: a tenth of a
   * gateway's throughput when it shares the process. A check for programming errors, on in the tests
   * (which run every store path), off when a service runs.
   */
  checkNesting?: boolean;
  /**
   * PostgreSQL's shared buffers in MB (16 unless told): the pages of tables and indexes it keeps in its own
   * memory, every one of them resident once touched. An edge site's store holds little (its connections
   * and their files) and takes 1: 15 MiB less for the site's process (bench/README.md, "An edge box");
   * the pages it does not keep are read again from the operating system's cache.
   */
  sharedBuffersMB?: number;
  /**
   * PostgreSQL's `max_connections` (100 unless told). PGlite serves one connection, but PostgreSQL sizes
   * the process slots and lock tables of its shared memory by it and writes them all at start: 2 keeps
   * 4 MiB of PGlite's WebAssembly memory untouched (bench/README.md, "An edge box"). Only for a store
   * with few tables (an edge site's): the lock table shrinks with it.
   */
  maxConnections?: number;
  /**
   * Where PostgreSQL runs: `main`, this thread, the default, or `worker`, a worker thread of its own
   * (`pglite_worker.ts`), which takes the store's CPU off the event loop and costs memory of its own (a
   * second JavaScript heap: bench/README.md, "The store on a worker thread"). The turns, the transactions'
   * guard and the errors are the same either way. `openStore` chooses by `EMBEDDED_STORE_THREAD`.
   */
  thread?: StoreThread;
  /** How many callers may wait for a turn in each lane; one more is refused ({@link StoreOverloadedError}). */
  turnLimits?: { urgent: number; bulk: number };
  /** Tests only: a worker store's thread can be made to end as a crashed one would (`endWorkerForTests`). */
  testHooks?: boolean;
  /**
   * Called once when a worker store's thread ends without being closed (a crash, running out of memory):
   * the store answers {@link StoreUnavailableError} from then on, and the process is of no more use.
   */
  onLost?: (err: StoreUnavailableError) => void;
};

/** Where the embedded store's PostgreSQL runs: this thread, or a worker thread of its own. */
export type StoreThread = 'main' | 'worker';

/**
 * Unpacks a template file, when one is named and exists, into the (empty) data folder, every file and
 * folder owner-only; answers whether it did. It is unpacked beside the folder and renamed into place, so
 * a start stopped half-way leaves no folder that looks like a database.
 */
async function unpackTemplate(file: string | undefined, pgdata: string): Promise<boolean> {
  if (file === undefined || !existsSync(file)) return false;
  const staging = `${pgdata}.unpacking`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  try {
    // Synchronous: nothing else runs yet while the store opens on a first start.
    unpackStoreTemplate(file, staging);
    // Made owner-only as they are written; narrowed again in case the umask or the file system widened them.
    await tightenTree(staging);
    await rm(pgdata, { recursive: true, force: true });
    await rename(staging, pgdata);
    return true;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

export { embeddedSettings } from './pglite_run.ts';

/** The open transaction of the current async call chain, so a store call inside it fails fast. */
type TxScope = { open: boolean };

/**
 * Which of the embedded store's queues a piece of work waits in: `first` work (a lease's renewal) goes
 * ahead of every other, `bulk` work lets every other go first.
 */
type Lane = 'first' | 'urgent' | 'bulk';

/** Bulk work that has waited this long takes the next turn whatever else waits, so it is never starved. */
export const bulkPatienceMs = 1000;

/** Urgent turns run one after another for up to this long before the event loop gets a turn of its own. */
export const urgentSliceMs = 20;

/**
 * How many callers may wait for a turn in each lane unless the store is told otherwise (`turnLimits`): past
 * it a caller is refused at once with {@link StoreOverloadedError} (503 `overloaded` with `Retry-After` at
 * the gateway), rather than joining a queue it would wait seconds in. Urgent work is short statements
 * (a few hundred a second on a busy core); bulk work is the history's batches and reads, each up to a
 * second, so a few dozen waiting are already more than a caller's deadline.
 */
export const defaultTurnLimits = { urgent: 1000, bulk: 64 } as const;

/**
 * Whose turn it is on the embedded store: one statement or transaction at a time, from three queues. The
 * next turn goes to the oldest `first` waiter (a lease's renewal: it waits only for the turn running, never
 * behind a queue of urgent work or an overdue bulk turn, and is handed its turn directly), else to the
 * oldest urgent waiter, else to the oldest bulk one (or to a bulk one that has waited `bulkPatienceMs`). PGlite runs a statement synchronously and answers through promises only, so
 * a queue of work handed on in promise callbacks would hold the event loop until it was empty (timers,
 * sockets and lease renewals waiting seconds behind it). So a turn is handed on directly only to urgent
 * work (short statements: a lease, a sign-in, a session) and only within `urgentSliceMs` of the first
 * turn of the run; any other, and every bulk turn even on an idle store, is handed out from a callback of
 * its own (`setImmediate`), and the process's timers and I/O run before it.
 */
class Turns {
  #busy = false;
  #scheduled = false;
  /** When the current run of turns began (the first of them started). */
  #runStart = 0;
  /** The last turn went to bulk work ahead of waiting urgent work. */
  #overdueTaken = false;
  readonly #first: (() => void)[] = [];
  readonly #urgent: (() => void)[] = [];
  readonly #bulk: { since: number; start: () => void }[] = [];
  readonly #limits: { urgent: number; bulk: number };

  constructor(limits: { urgent: number; bulk: number } = defaultTurnLimits) {
    this.#limits = limits;
  }

  /** Runs `work` in a turn of `lane`; refuses at once with {@link StoreOverloadedError} when the lane is full. */
  async run<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
    await this.#take(lane);
    try {
      return await work();
    } finally {
      this.#busy = false;
      this.#next();
    }
  }

  #take(lane: Lane): Promise<void> {
    // Urgent work on an idle store starts at once; bulk work always after the event loop's next turn, so
    // that one part after another of a bulk job (the history's batch) lets timers run between them.
    if (lane !== 'bulk' && !this.#busy && !this.#scheduled && this.#waiting() === 0) {
      this.#busy = true;
      this.#runStart = performance.now();
      return Promise.resolve();
    }
    const waiting = lane === 'bulk' ? this.#bulk.length : lane === 'urgent' ? this.#urgent.length : this.#first.length;
    if (waiting >= this.#limits[lane === 'bulk' ? 'bulk' : 'urgent']) {
      return Promise.reject(
        new StoreOverloadedError(`the embedded store has ${waiting} callers waiting in its ${lane} lane, as many as it takes`),
      );
    }
    return new Promise<void>((start) => {
      if (lane === 'bulk') this.#bulk.push({ since: performance.now(), start });
      else if (lane === 'urgent') this.#urgent.push(start);
      else this.#first.push(start);
      this.#next();
    });
  }

  /**
   * The next waiter to start, taken from its queue. A bulk turn taken ahead of urgent work (its patience
   * ran out) is followed by an urgent one, if any waits: on a store that never catches up every bulk
   * waiter has waited that long, and bulk would otherwise take every turn.
   */
  #pick(now: number): (() => void) | undefined {
    if (this.#first.length > 0) return this.#first.shift();
    const oldestBulk = this.#bulk[0];
    const overdue = oldestBulk !== undefined && now - oldestBulk.since >= bulkPatienceMs && !this.#overdueTaken;
    const bulkFirst = oldestBulk !== undefined && (this.#urgent.length === 0 || overdue);
    this.#overdueTaken = bulkFirst && this.#urgent.length > 0;
    return bulkFirst ? this.#bulk.shift()?.start : this.#urgent.shift();
  }

  #waiting(): number {
    return this.#first.length + this.#urgent.length + this.#bulk.length;
  }

  #next(): void {
    if (this.#busy || this.#scheduled || this.#waiting() === 0) return;
    // A lease's renewal is one short statement every few seconds: handed its turn at once, whatever ran before.
    if (this.#first.length > 0) {
      this.#busy = true;
      this.#runStart = performance.now();
      this.#first.shift()!();
      return;
    }
    const now = performance.now();
    const oldestBulk = this.#bulk[0];
    const urgentNext =
      this.#urgent.length > 0 && (oldestBulk === undefined || this.#overdueTaken || now - oldestBulk.since < bulkPatienceMs);
    if (urgentNext && now - this.#runStart < urgentSliceMs) {
      this.#overdueTaken = false;
      this.#busy = true;
      this.#urgent.shift()!();
      return;
    }
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const start = this.#pick(performance.now());
      if (start === undefined) return;
      this.#busy = true;
      this.#runStart = performance.now();
      start();
    });
  }
}

/**
 * Where the embedded store's statements run: PGlite in this thread ({@link ThreadEngine}) or in a worker
 * thread ({@link WorkerEngine}). Errors come out mapped as `runStatement` maps them.
 */
interface Engine {
  /** How many of PGlite's bundled files are read on demand instead of held in memory (`file_bundle.ts`). */
  readonly onDemand: number;
  run<R>(sql: string, params: unknown[] | undefined): Promise<QueryResult<R>>;
  /** BEGIN, `fn` with a `tx` that refuses statements once the transaction ended, COMMIT or ROLLBACK. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** BEGIN, every step, COMMIT, or ROLLBACK when one fails: on a worker store, one request. */
  steps(steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]>;
  dump(): Promise<Blob>;
  close(): Promise<void>;
}

/** PGlite in this thread. */
class ThreadEngine implements Engine {
  readonly #db: PGlite;
  readonly onDemand: number;

  /** With `releaseBundle`, PGlite's file bundle is given back and its files read on demand (`file_bundle.ts`). */
  constructor(db: PGlite, releaseBundle = false) {
    this.#db = db;
    this.onDemand = releaseBundle ? releaseFileBundle(db.Module.FS) : 0;
  }

  run<R>(sql: string, params: unknown[] | undefined): Promise<QueryResult<R>> {
    return runStatement<R>(this.#db, sql, params);
  }

  /** A constraint checked at COMMIT (a deferred one) fails it as a {@link ConstraintViolation}, as a statement's would. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction((tx) => fn(new PGliteTransaction(tx)));
    } catch (err) {
      throw asConstraintViolation(err);
    }
  }

  steps(steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]> {
    return runSteps(this.#db, steps);
  }

  dump(): Promise<Blob> {
    return this.#db.dumpDataDir('none');
  }

  async close(): Promise<void> {
    if (!this.#db.closed) await this.#db.close();
  }
}

/** An error sent by the store's worker, with its fields again, and a broken constraint as a {@link ConstraintViolation}. */
function received(sent: SentError): unknown {
  const err = Object.assign(new Error(sent.message), sent.fields);
  err.name = sent.name;
  return asConstraintViolation(err);
}

/** A bytea value arrives as a Uint8Array (a Buffer does not survive the copy between threads): a Buffer again, as `pg` gives. */
function asBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value) && value.some((v) => v instanceof Uint8Array || Array.isArray(v))) return value.map(asBuffers);
  return value;
}

function withBuffers<R>(result: QueryResult<R>): QueryResult<R> {
  for (const row of result.rows as Record<string, unknown>[]) {
    for (const key in row) {
      const value = row[key];
      if (typeof value === 'object' && value !== null) row[key] = asBuffers(value);
    }
  }
  return result;
}

/**
 * PGlite in a worker thread of its own: each request is a message, answered by one; the main thread's
 * turns send one at a time. A worker that ends (a crash, running out of memory) fails the requests it had
 * and every one after it with {@link StoreUnavailableError}, never a wait.
 */
class WorkerEngine implements Engine {
  readonly #worker: Worker;
  onDemand = 0;
  readonly #waiting = new Map<number, { resolve(value: unknown): void; reject(err: unknown): void }>();
  #next = 0;
  /** Why the worker can no longer answer, once it ended. */
  #ended: StoreUnavailableError | undefined;
  #lastError: unknown;
  /** Settles when the transaction in progress, if any, has ended (the turns run one at a time). */
  #inTransaction: Promise<void> | undefined;
  /** Set once `close()` was asked: the thread's end is then no loss. */
  #closing = false;
  readonly #onLost: ((err: StoreUnavailableError) => void) | undefined;

  private constructor(worker: Worker, onLost: ((err: StoreUnavailableError) => void) | undefined) {
    this.#worker = worker;
    this.#onLost = onLost;
  }

  /** Starts the worker and waits until its database is open; rejects with the worker's error when it cannot open it. */
  static async start(data: Omit<StoreWorkerData, 'kind'>, onLost?: (err: StoreUnavailableError) => void): Promise<WorkerEngine> {
    const { storeWorkerUrl, storeWorkerMarker } = await import('./pglite_worker.ts');
    const worker = new Worker(workerEntry(storeWorkerUrl, 'pglite_worker_tsx.mjs'), {
      workerData: { ...data, kind: storeWorkerMarker } satisfies StoreWorkerData,
    });
    const engine = new WorkerEngine(worker, onLost);
    const opened = new Promise<void>((resolve, reject) => {
      const onMessage = (msg: FromStoreWorker) => {
        if ('type' in msg) {
          worker.off('message', onMessage);
          if (msg.type === 'ready') {
            engine.onDemand = msg.onDemand;
            resolve();
          } else reject(received(msg.error));
        }
      };
      worker.on('message', onMessage);
      worker.once('exit', (code) =>
        reject(new StoreUnavailableError(`the embedded store's worker ended as it opened (exit code ${code})`)),
      );
      worker.once('error', reject);
    });
    worker.on('message', (msg: FromStoreWorker) => engine.#answered(msg));
    worker.on('error', (err) => {
      engine.#lastError = err;
    });
    worker.on('exit', (code) => engine.#end(code));
    try {
      await opened;
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return engine;
  }

  #answered(msg: FromStoreWorker): void {
    if ('type' in msg) return;
    const waiter = this.#waiting.get(msg.id);
    if (waiter === undefined) return;
    this.#waiting.delete(msg.id);
    if (msg.ok) waiter.resolve(msg.value);
    else waiter.reject(received(msg.error));
  }

  #end(code: number): void {
    const first = this.#ended === undefined;
    this.#ended ??= new StoreUnavailableError(`the embedded store's worker thread ended (exit code ${code})`, { cause: this.#lastError });
    for (const waiter of this.#waiting.values()) waiter.reject(this.#ended);
    this.#waiting.clear();
    if (first && !this.#closing) this.#onLost?.(this.#ended);
  }

  #ask<T>(request: StoreRequest, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    const id = ++this.#next;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.#worker.postMessage({ ...request, id } satisfies ToStoreWorker, transfer);
      } catch (err) {
        // Not sent (a parameter that cannot be copied to another thread, such as a function): no answer will come.
        this.#waiting.delete(id);
        reject(err);
      }
    });
  }

  async run<R>(sql: string, params: unknown[] | undefined): Promise<QueryResult<R>> {
    return withBuffers(await this.#ask<QueryResult<R>>({ op: 'query', sql, params }));
  }

  /** A whole transaction of known statements, in one request to the worker. */
  async steps(steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]> {
    // COPY text crosses as UTF-8 bytes whose buffer is moved to the worker: neither thread copies it again,
    // and the worker makes its blob of them as they are (a string would be serialised, then encoded there).
    const transfer: ArrayBuffer[] = [];
    // Bytes given as they are are moved too, when they are the whole of their buffer: the caller gave them up.
    const sent = steps.map((step): Step => {
      if (!('copy' in step)) return step;
      const bytes = typeof step.copy.text === 'string' ? Buffer.from(step.copy.text) : step.copy.text;
      // A small text's Buffer is a view of the thread's shared pool, which cannot be moved: sent as a string.
      // Nor can a shared buffer, or one already listed (the same bytes in two steps).
      if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength) return step;
      if (!(bytes.buffer instanceof ArrayBuffer) || transfer.includes(bytes.buffer)) return step;
      transfer.push(bytes.buffer as ArrayBuffer);
      return { copy: { ...step.copy, text: bytes } };
    });
    const results = await this.#ask<QueryResult<Record<string, unknown>>[]>({ op: 'steps', steps: sent }, transfer);
    return results.map(withBuffers);
  }

  /** Rows from COPY text, in the worker (the text crosses as one string). */
  copy(table: string, columns: readonly string[], text: string): Promise<number> {
    return this.#ask<number>({ op: 'copy', table, columns, text });
  }

  /**
   * As PGlite's own transaction, its statements sent one by one: BEGIN, `fn`'s, then COMMIT, or ROLLBACK when
   * `fn` throws. A close waits for it to end, as PGlite's close waits for its own transaction.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let ended = () => {};
    this.#inTransaction = new Promise<void>((done) => {
      ended = done;
    });
    try {
      await this.run('BEGIN', undefined);
      const tx = new WorkerTransaction(this);
      try {
        const result = await fn(tx);
        tx.end();
        await this.#ask({ op: 'commit' });
        return result;
      } catch (err) {
        if (tx.end() && this.#ended === undefined) await this.run('ROLLBACK', undefined);
        throw err;
      }
    } finally {
      this.#inTransaction = undefined;
      ended();
    }
  }

  async dump(): Promise<Blob> {
    return this.#ask<Blob>({ op: 'dump' });
  }

  /** Closes the database in the worker and waits for the thread to end. */
  async close(): Promise<void> {
    this.#closing = true;
    // The transaction that holds the database ends first: its next statements would otherwise come after the close.
    await this.#inTransaction;
    if (this.#ended === undefined) {
      const exited = new Promise((done) => this.#worker.once('exit', done));
      try {
        await this.#ask({ op: 'close' });
      } finally {
        await this.#worker.terminate();
        await exited;
      }
    }
  }

  /** Tests only (`testHooks`): the worker ends at once, as a crashed one would. */
  async endForTests(): Promise<void> {
    const exited = new Promise((done) => this.#worker.once('exit', done));
    await this.#ask({ op: 'exit' }).catch(() => undefined);
    await exited;
  }
}

/** The `tx` of a worker store's transaction: its statements go to the worker until the transaction ends. */
class WorkerTransaction implements Queryable {
  readonly #engine: WorkerEngine;
  #open = true;

  constructor(engine: WorkerEngine) {
    this.#engine = engine;
  }

  /** Ends the transaction for its statements; answers whether it was still open. */
  end(): boolean {
    const was = this.#open;
    this.#open = false;
    return was;
  }

  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    // PGlite's own words for a statement on a transaction that ended.
    if (!this.#open) throw new Error('Transaction is closed');
    return this.#engine.run<R>(sql, params);
  }

  async copyRows(table: string, columns: readonly string[], text: string): Promise<number> {
    if (!this.#open) throw new Error('Transaction is closed');
    return this.#engine.copy(table, columns, text);
  }
}

/**
 * The embedded store: PostgreSQL compiled to WebAssembly, in this process, one connection, run in this
 * thread or in a worker thread of its own (`thread`). Statements and transactions of many callers take
 * turns (`Turns`): a transaction holds the database until it ends, and a statement outside it waits, so
 * it never runs inside someone else's transaction; bulk work (`bulk()`) waits while any other is waiting.
 * File-backed under `<dataDir>/pgdata`, guarded by `<dataDir>/pgdata.lock`.
 */
export class PGliteStore implements Store {
  readonly kind = 'pglite' as const;
  /** Where the statements run: this thread or a worker. */
  readonly thread: StoreThread;
  readonly #db: Engine;
  readonly #lock: FolderLock | undefined;
  readonly #scope: AsyncLocalStorage<TxScope> | undefined;
  readonly #timeoutMs: number;
  readonly #turns: Turns;
  readonly #bulk: Transactional;
  readonly #first: Transactional;
  readonly #testHooks: boolean;
  #closing: Promise<void> | undefined;

  private constructor(db: Engine, lock: FolderLock | undefined, options: PGliteStoreOptions) {
    this.#timeoutMs = options.timeoutMs ?? deadlines.standardMs;
    this.#scope = options.checkNesting ? new AsyncLocalStorage<TxScope>() : undefined;
    this.#db = db;
    this.thread = db instanceof WorkerEngine ? 'worker' : 'main';
    this.#lock = lock;
    this.#turns = new Turns(options.turnLimits);
    this.#testHooks = options.testHooks === true;
    this.#bulk = {
      query: (sql, params) => this.#query(sql, params, 'bulk'),
      transaction: (fn) => this.#transaction(fn, 'bulk'),
      transactionOf: (steps) => this.#transactionOf(steps, 'bulk'),
    };
    this.#first = {
      query: (sql, params) => this.#query(sql, params, 'first'),
      transaction: (fn) => this.#transaction(fn, 'first'),
      transactionOf: (steps) => this.#transactionOf(steps, 'first'),
    };
  }

  /**
   * Opens (or creates) the database in `<dataDir>/pgdata`. Refuses with `FolderLockedError` when another
   * live process holds the folder; takes over the lock of a process that died. The database's files and
   * folders are owner-only: those an older version left open are tightened at open, and those made while
   * it runs are made so (`owner_only_fs.ts`). The folder is locked, tightened and unpacked from its
   * template in this thread; a worker store's PGlite opens it in the worker.
   */
  static async open(dataDir: string, options: PGliteStoreOptions = {}): Promise<PGliteStore> {
    const folder = resolve(dataDir);
    await privateFolder(folder, options.log);
    const lock = await lockFolder(folder, 'pgdata');
    try {
      const pgdata = join(folder, 'pgdata');
      const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
      const started = performance.now();
      await ownerOnlyDatabaseFolder(pgdata, options.log);
      const unpacked = fresh && options.template === undefined && (await unpackTemplate(options.templateFile, pgdata));
      const template = fresh ? options.template : undefined;
      const { sharedBuffersMB, maxConnections, testHooks } = options;
      const engine =
        options.thread === 'worker'
          ? await WorkerEngine.start({ pgdata, template, sharedBuffersMB, maxConnections, testHooks }, options.onLost)
          : new ThreadEngine(
              await PGlite.create({
                fs: new OwnerOnlyNodeFS(pgdata),
                parsers: pgCompatibleParsers,
                serializers: pgCompatibleSerializers,
                loadDataDir: template,
                startParams: startParams({ sharedBuffersMB, maxConnections }),
              }),
              // Started (initdb, when it ran, is done with them): PostgreSQL's share and lib files read on demand.
              true,
            );
      const ms = Math.round(performance.now() - started);
      const from = !fresh ? undefined : unpacked ? options.templateFile : options.template ? 'template' : 'initdb';
      options.log?.info(
        { store: 'pglite', dataDir: pgdata, created: fresh, from, ms, thread: options.thread ?? 'main', onDemand: engine.onDemand },
        'opened the embedded store',
      );
      return new PGliteStore(engine, lock, options);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  /** A database in memory, gone when closed: for tests. */
  static async memory(options: PGliteStoreOptions = {}): Promise<PGliteStore> {
    const { sharedBuffersMB, maxConnections, testHooks } = options;
    const engine =
      options.thread === 'worker'
        ? await WorkerEngine.start({ template: options.template, sharedBuffersMB, maxConnections, testHooks }, options.onLost)
        : new ThreadEngine(
            await PGlite.create({
              parsers: pgCompatibleParsers,
              serializers: pgCompatibleSerializers,
              loadDataDir: options.template,
              startParams: startParams({ sharedBuffersMB, maxConnections }),
            }),
          );
    return new PGliteStore(engine, undefined, options);
  }

  /** The database's data folder as an uncompressed tar: the `template` another store can start from. */
  async dump(): Promise<Blob> {
    this.#refuseInsideTransaction();
    return this.#guard(() => this.#turns.run('urgent', () => this.#db.dump()));
  }

  /** Runs one statement in its turn, once no transaction holds the database. */
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    return this.#query<R>(sql, params, 'urgent');
  }

  /** Runs `fn` alone on the database between BEGIN and COMMIT, in its turn; ROLLBACK and rethrow when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#transaction(fn, 'urgent');
  }

  /** Runs `steps` in one transaction, in one turn (and on a worker store, one request to it). */
  transactionOf(steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]> {
    return this.#transactionOf(steps, 'urgent');
  }

  /** The same database, whose statements and transactions wait while any other caller's do. */
  bulk(): Transactional {
    return this.#bulk;
  }

  /** The same database, whose statements and transactions go ahead of every other waiting. */
  first(): Transactional {
    return this.#first;
  }

  async #query<R extends Record<string, unknown> = Record<string, unknown>>(
    sql: string,
    params: unknown[] | undefined,
    lane: Lane,
  ): Promise<QueryResult<R>> {
    this.#refuseInsideTransaction();
    return this.#guard(() => this.#turns.run(lane, () => this.#db.run<R>(sql, params)));
  }

  async #transaction<T>(fn: (tx: Queryable) => Promise<T>, lane: Lane): Promise<T> {
    this.#refuseInsideTransaction();
    return this.#guard(() =>
      this.#turns.run(lane, () =>
        this.#db.transaction(async (tx) => {
          const scope: TxScope = { open: true };
          try {
            const work = () => fn(tx);
            return await (this.#scope ? this.#scope.run(scope, work) : work());
          } finally {
            scope.open = false;
          }
        }),
      ),
    );
  }

  async #transactionOf(steps: Step[], lane: Lane): Promise<QueryResult<Record<string, unknown>>[]> {
    this.#refuseInsideTransaction();
    return this.#guard(() => this.#turns.run(lane, () => this.#db.steps(steps)));
  }

  /** True when `select 1` (waiting its turn) answers within the store's timeout; never throws. */
  async ping(): Promise<boolean> {
    if (this.#closing !== undefined || this.#scope?.getStore()?.open === true) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((done) => {
      timer = setTimeout(() => done(false), this.#timeoutMs);
    });
    const probe = this.#turns
      .run('urgent', () => this.#db.run('select 1', []))
      .then(
        () => true,
        () => false,
      );
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the statements in flight, closes the database and removes the lock file. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    try {
      await this.#db.close();
    } finally {
      await this.#lock?.release();
    }
  }

  /** Tests only (`testHooks`, `thread: 'worker'`): the store's worker thread ends at once, as a crashed one would. */
  async endWorkerForTests(): Promise<void> {
    if (!this.#testHooks || !(this.#db instanceof WorkerEngine)) throw new Error('endWorkerForTests needs a worker store with testHooks');
    await this.#db.endForTests();
  }

  /**
   * PGlite has one connection: a store call made inside a transaction, instead of a call on its `tx`,
   * would wait for that transaction to end, forever. PostgreSQL would run it on another connection.
   */
  #refuseInsideTransaction(): void {
    if (this.#scope?.getStore()?.open === true) {
      throw new Error(
        "a store call inside a transaction of the same store: use the transaction's tx (PGlite has one connection and would wait forever)",
      );
    }
  }

  /** A closed or closing database is unavailable; every other error passes through unchanged. */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) throw new StoreUnavailableError('the embedded store is closed');
    try {
      return await fn();
    } catch (err) {
      if (err instanceof Error && /^PGlite is clos(ed|ing)$/.test(err.message)) {
        throw new StoreUnavailableError('the embedded store is closed', { cause: err });
      }
      throw err;
    }
  }
}

/** The `tx` of {@link PGliteStore.transaction}; PGlite's own transaction refuses statements once it ended. */
class PGliteTransaction implements Queryable {
  readonly #tx: Transaction;

  constructor(tx: Transaction) {
    this.#tx = tx;
  }

  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    return runStatement<R>(this.#tx, sql, params);
  }

  copyRows(table: string, columns: readonly string[], text: string): Promise<number> {
    return copyRows(this.#tx, table, columns, text);
  }
}
