import { deadlines } from '@scada/contracts';
import { PGlite, type PGliteOptions, type Results, type Transaction } from '@electric-sql/pglite';
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { privateFolder, tightenTree } from '../private_dir.ts';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { type FolderLock, lockFolder } from './lock_file.ts';
import { releaseFileBundle } from './file_bundle.ts';
import { unpackStoreTemplate } from './template_tar.ts';
import { OwnerOnlyNodeFS, ownerOnlyDatabaseFolder } from './owner_only_fs.ts';
import { asConstraintViolation, type QueryResult, type Queryable, type Store, StoreUnavailableError, type Transactional } from './store.ts';

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
};

/**
 * Parsers that make PGlite answer like `PgStore`: int8 as a string (PGlite gives a number, or a bigint
 * past 2^53), bytea as a Buffer (PGlite gives a Uint8Array), date as its text (PGlite gives a Date).
 * Arrays follow their element's parser.
 */
const pgCompatibleParsers: NonNullable<PGliteOptions['parsers']> = {
  20: (value: string) => value,
  17: (value: string) => Buffer.from(value.slice(2), 'hex'),
  1082: (value: string) => value,
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
function startParams(options: Pick<PGliteStoreOptions, 'sharedBuffersMB' | 'maxConnections'>): string[] {
  const { sharedBuffersMB, maxConnections } = options;
  const settings = embeddedSettings.map((s) =>
    sharedBuffersMB !== undefined && s.startsWith('shared_buffers=') ? `shared_buffers=${sharedBuffersMB}MB` : s,
  );
  if (maxConnections !== undefined) settings.push(`max_connections=${maxConnections}`);
  return [...PGlite.defaultStartParams, ...settings.flatMap((s) => ['-c', s])];
}

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

/** The open transaction of the current async call chain, so a store call inside it fails fast. */
type TxScope = { open: boolean };

function toResult<R>(result: Results | Results[]): QueryResult<R> {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  // rowCount is per statement (rows of a SELECT, rows changed by an UPDATE); affectedRows sums a whole exec.
  return { rows: (last?.rows ?? []) as R[], rowCount: last?.rowCount ?? last?.affectedRows ?? 0 };
}

/** Runs a statement like `pg` does: without parameters, as a simple query that may hold several statements. */
async function run<R>(db: PGlite | Transaction, sql: string, params: unknown[] | undefined): Promise<QueryResult<R>> {
  try {
    if (params === undefined || params.length === 0) return toResult<R>(await db.exec(sql));
    return toResult<R>(await db.query(sql, params));
  } catch (err) {
    // PGlite attaches the parameters to its errors; they must not travel on into logs (see log.ts).
    if (err && typeof err === 'object' && 'params' in err) delete (err as { params?: unknown }).params;
    throw asConstraintViolation(err);
  }
}

/** Which of the embedded store's queues a piece of work waits in: `bulk` work lets every other go first. */
type Lane = 'urgent' | 'bulk';

/** Bulk work that has waited this long takes the next turn whatever else waits, so it is never starved. */
export const bulkPatienceMs = 1000;

/** Urgent turns run one after another for up to this long before the event loop gets a turn of its own. */
export const urgentSliceMs = 20;

/**
 * Whose turn it is on the embedded store: one statement or transaction at a time, from two queues. The
 * next turn goes to the oldest urgent waiter, else to the oldest bulk one (or to a bulk one that has
 * waited `bulkPatienceMs`). PGlite runs a statement synchronously and answers through promises only, so
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
  readonly #urgent: (() => void)[] = [];
  readonly #bulk: { since: number; start: () => void }[] = [];

  /** Runs `work` in a turn of `lane`. */
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
    if (lane === 'urgent' && !this.#busy && !this.#scheduled && this.#urgent.length === 0 && this.#bulk.length === 0) {
      this.#busy = true;
      this.#runStart = performance.now();
      return Promise.resolve();
    }
    return new Promise<void>((start) => {
      if (lane === 'bulk') this.#bulk.push({ since: performance.now(), start });
      else this.#urgent.push(start);
      this.#next();
    });
  }

  /**
   * The next waiter to start, taken from its queue. A bulk turn taken ahead of urgent work (its patience
   * ran out) is followed by an urgent one, if any waits: on a store that never catches up every bulk
   * waiter has waited that long, and bulk would otherwise take every turn.
   */
  #pick(now: number): (() => void) | undefined {
    const oldestBulk = this.#bulk[0];
    const overdue = oldestBulk !== undefined && now - oldestBulk.since >= bulkPatienceMs && !this.#overdueTaken;
    const bulkFirst = oldestBulk !== undefined && (this.#urgent.length === 0 || overdue);
    this.#overdueTaken = bulkFirst && this.#urgent.length > 0;
    return bulkFirst ? this.#bulk.shift()?.start : this.#urgent.shift();
  }

  #next(): void {
    if (this.#busy || this.#scheduled || (this.#urgent.length === 0 && this.#bulk.length === 0)) return;
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
 * The embedded store: PostgreSQL compiled to WebAssembly, in this process, one connection. Statements
 * and transactions of many callers take turns (`Turns`): a transaction holds the database until it
 * ends, and a statement outside it waits, so it never runs inside someone else's transaction; bulk work
 * (`bulk()`) waits while any other is waiting. File-backed under `<dataDir>/pgdata`, guarded by
 * `<dataDir>/pgdata.lock`.
 */
export class PGliteStore implements Store {
  readonly kind = 'pglite' as const;
  readonly #db: PGlite;
  readonly #lock: FolderLock | undefined;
  readonly #scope: AsyncLocalStorage<TxScope> | undefined;
  readonly #timeoutMs: number;
  readonly #turns = new Turns();
  readonly #bulk: Transactional;
  #closing: Promise<void> | undefined;

  private constructor(db: PGlite, lock: FolderLock | undefined, options: PGliteStoreOptions) {
    this.#timeoutMs = options.timeoutMs ?? deadlines.standardMs;
    this.#scope = options.checkNesting ? new AsyncLocalStorage<TxScope>() : undefined;
    this.#db = db;
    this.#lock = lock;
    this.#bulk = {
      query: (sql, params) => this.#query(sql, params, 'bulk'),
      transaction: (fn) => this.#transaction(fn, 'bulk'),
    };
  }

  /**
   * Opens (or creates) the database in `<dataDir>/pgdata`. Refuses with `FolderLockedError` when another
   * live process holds the folder; takes over the lock of a process that died. The database's files and
   * folders are owner-only: those an older version left open are tightened at open, and those made while
   * it runs are made so (`owner_only_fs.ts`).
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
      const db = await PGlite.create({
        fs: new OwnerOnlyNodeFS(pgdata),
        parsers: pgCompatibleParsers,
        loadDataDir: fresh ? options.template : undefined,
        startParams: startParams(options),
      });
      // Started (initdb, when it ran, is done with them): PostgreSQL's share and lib files read on demand.
      const onDemand = releaseFileBundle(db.Module.FS);
      const ms = Math.round(performance.now() - started);
      const from = !fresh ? undefined : unpacked ? options.templateFile : options.template ? 'template' : 'initdb';
      options.log?.info({ store: 'pglite', dataDir: pgdata, created: fresh, from, ms, onDemand }, 'opened the embedded store');
      return new PGliteStore(db, lock, options);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  /** A database in memory, gone when closed: for tests. */
  static async memory(options: PGliteStoreOptions = {}): Promise<PGliteStore> {
    const db = await PGlite.create({
      parsers: pgCompatibleParsers,
      loadDataDir: options.template,
      startParams: startParams(options),
    });
    return new PGliteStore(db, undefined, options);
  }

  /** The database's data folder as an uncompressed tar: the `template` another store can start from. */
  async dump(): Promise<Blob> {
    this.#refuseInsideTransaction();
    return this.#guard(() => this.#turns.run('urgent', () => this.#db.dumpDataDir('none')));
  }

  /** Runs one statement in its turn, once no transaction holds the database. */
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    return this.#query<R>(sql, params, 'urgent');
  }

  /** Runs `fn` alone on the database between BEGIN and COMMIT, in its turn; ROLLBACK and rethrow when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#transaction(fn, 'urgent');
  }

  /** The same database, whose statements and transactions wait while any other caller's do. */
  bulk(): Transactional {
    return this.#bulk;
  }

  async #query<R extends Record<string, unknown> = Record<string, unknown>>(
    sql: string,
    params: unknown[] | undefined,
    lane: Lane,
  ): Promise<QueryResult<R>> {
    this.#refuseInsideTransaction();
    return this.#guard(() => this.#turns.run(lane, () => run<R>(this.#db, sql, params)));
  }

  async #transaction<T>(fn: (tx: Queryable) => Promise<T>, lane: Lane): Promise<T> {
    this.#refuseInsideTransaction();
    return this.#guard(() =>
      this.#turns.run(lane, () =>
        this.#db.transaction(async (tx) => {
          const scope: TxScope = { open: true };
          try {
            const work = () => fn(new PGliteTransaction(tx));
            return await (this.#scope ? this.#scope.run(scope, work) : work());
          } finally {
            scope.open = false;
          }
        }),
      ),
    );
  }

  /** True when `select 1` (waiting its turn) answers within the store's timeout; never throws. */
  async ping(): Promise<boolean> {
    if (this.#closing !== undefined || this.#scope?.getStore()?.open === true) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((done) => {
      timer = setTimeout(() => done(false), this.#timeoutMs);
    });
    const probe = this.#turns
      .run('urgent', () => this.#db.query('select 1'))
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
      if (!this.#db.closed) await this.#db.close();
    } finally {
      await this.#lock?.release();
    }
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
    return run<R>(this.#tx, sql, params);
  }
}
