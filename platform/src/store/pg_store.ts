import { deadlines } from '@scada/contracts';
import pg from 'pg';
import type { Logger } from 'pino';
import { asConstraintViolation, type QueryResult, type Queryable, type Store, StoreUnavailableError, type Transactional } from './store.ts';

/** Options of {@link PgStore.connect}. */
export type PgStoreOptions = {
  /** Most connections the pool opens (default 10). */
  max?: number;
  log?: Logger;
  /** Shown in `pg_stat_activity` (default `scada-platform`). */
  applicationName?: string;
  /**
   * How long opening a connection, and `ping()`, may take before they fail; the process's standard
   * deadline (`BUS_TIMEOUT_MS`), 5 s when not given.
   */
  timeoutMs?: number;
};

/**
 * Type parsers shared with the embedded store: `date` and `interval` (and their arrays) as the text
 * PostgreSQL sends, since `pg` would make a date a Date at local midnight and an interval an object.
 * The rest are pg's defaults: int8 and numeric as strings, timestamptz as Date, json parsed.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 1082 || oid === 1186) return (value: string) => value;
    // 1009 is text[]: the arrays keep their elements' text.
    if (oid === 1182 || oid === 1187) return pg.types.getTypeParser(1009 as never, 'text');
    return pg.types.getTypeParser(oid as never, format ?? 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** Node socket errors that mean the server cannot be reached. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
/** SQLSTATEs of a server that is shutting down, starting, or out of connections. */
const serverCodes = new Set(['57P01', '57P02', '57P03', '53300']);
/** pg and pg-pool report lost or impossible connections with plain errors; these are their messages. */
const connectionMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/**
 * True when `err` says PostgreSQL cannot be reached or used right now (refused, shutting down, connection
 * lost or timed out), as opposed to an error of the statement itself.
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (socketCodes.has(code) || serverCodes.has(code) || code.startsWith('08'))) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  if (connectionMessages.some((m) => err.message.includes(m))) return true;
  return err.cause !== undefined && isConnectionError(err.cause);
}

/**
 * Turns connection failures into {@link StoreUnavailableError} and broken constraints into
 * `ConstraintViolation`; passes every other error through unchanged.
 */
function translate(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  if (!isConnectionError(err)) return asConstraintViolation(err);
  return new StoreUnavailableError(`PostgreSQL is not reachable: ${(err as Error).message}`, { cause: err });
}

function toResult<R>(result: pg.QueryResult | pg.QueryResult[]): QueryResult<R> {
  // Several statements without parameters give one result each: the last one speaks for them.
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  return { rows: (last?.rows ?? []) as R[], rowCount: last?.rowCount ?? 0 };
}

/** The URL without its password, for log lines. */
function describeUrl(url: string): Record<string, string> {
  try {
    const u = new URL(url);
    return { host: u.hostname, port: u.port || '5432', database: u.pathname.slice(1), user: decodeURIComponent(u.username) };
  } catch {
    return { url: '[unparsable]' };
  }
}

/**
 * The store on PostgreSQL, through a `pg` pool. Connections are opened on demand, so a PostgreSQL that is
 * down fails calls promptly with {@link StoreUnavailableError} and one that comes back is used again.
 * Broken constraints are `ConstraintViolation`s; other SQL errors pass through unchanged. A statement
 * without parameters may hold several statements (migrations); its result is the last one's.
 */
export class PgStore implements Store {
  readonly kind = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #log: Logger | undefined;
  readonly #timeoutMs: number;
  #closing: Promise<void> | undefined;

  private constructor(pool: pg.Pool, log: Logger | undefined, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#pool = pool;
    this.#log = log;
  }

  /**
   * Creates the pool for `url` and checks it once: an unreachable server is logged, not thrown, since
   * the pool connects again on each use.
   */
  static async connect(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const log = options.log?.child({ store: 'postgres' });
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.timeoutMs ?? deadlines.standardMs,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: options.applicationName ?? 'scada-platform',
      types,
    });
    // Without a listener, an idle connection that the server drops would crash the process.
    // Only the message and SQLSTATE: the error carries the client, with its connection parameters.
    pool.on('error', (err) =>
      log?.warn({ error: err.message, code: (err as { code?: string }).code }, 'idle PostgreSQL connection failed; the pool replaces it'),
    );
    const store = new PgStore(pool, log, options.timeoutMs ?? deadlines.standardMs);
    const target = describeUrl(url);
    try {
      const { rows } = await pool.query<{ server_version: string }>('show server_version');
      log?.info({ ...target, version: rows[0]?.server_version }, 'connected to PostgreSQL');
    } catch (err) {
      log?.warn({ ...target, err: translate(err) }, 'PostgreSQL is not reachable yet; calls fail until it is');
    }
    return store;
  }

  /** Runs one statement on any free connection of the pool. */
  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    try {
      return toResult<R>(await this.#pool.query(sql, params));
    } catch (err) {
      throw translate(err);
    }
  }

  /**
   * Runs `fn` on one dedicated connection between BEGIN and COMMIT; ROLLBACK when it throws, and the
   * error rethrown as it was. The connection always goes back to the pool, or is destroyed when broken.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.#checkout();
    let broken: unknown;
    // A checked-out connection has no listener of pg-pool: one that dies between statements would crash the process.
    const onError = (err: Error): void => {
      broken = err;
      this.#log?.warn({ err }, 'PostgreSQL connection failed inside a transaction');
    };
    client.on('error', onError);
    const tx = new PgTransaction(client);
    try {
      await tx.query('BEGIN');
      const value = await fn(tx);
      tx.end();
      const commit = await client.query('COMMIT').catch((err: unknown) => Promise.reject(translate(err)));
      // COMMIT of a transaction in which a statement failed answers ROLLBACK instead of an error.
      if (commit.command === 'ROLLBACK') throw new Error('Transaction was rolled back instead of committed');
      return value;
    } catch (err) {
      if (err instanceof StoreUnavailableError) broken ??= err;
      if (!tx.ended) broken ??= await this.#rollback(client, tx);
      throw err;
    } finally {
      client.removeListener('error', onError);
      client.release(broken instanceof Error ? broken : broken !== undefined);
    }
  }

  /** Bulk work runs on the pool beside every other: PostgreSQL runs statements of many connections at once. */
  bulk(): Transactional {
    return this;
  }

  /** Work that must not wait behind other work: on the pool it is the store itself, as bulk work is. */
  first(): Transactional {
    return this;
  }

  /** True when `select 1` answers within the store's timeout; never throws. */
  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#timeoutMs);
    });
    const probe = this.#pool.query('select 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the connections in use to come back, then closes them all. Safe to call again. */
  close(): Promise<void> {
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }

  async #checkout(): Promise<pg.PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (err) {
      throw translate(err);
    }
  }

  /** Rolls back; answers the error when that fails too, so the connection is destroyed. */
  async #rollback(client: pg.PoolClient, tx: PgTransaction): Promise<unknown> {
    tx.end();
    try {
      await client.query('ROLLBACK');
      return undefined;
    } catch (err) {
      this.#log?.warn({ err }, 'ROLLBACK failed; the connection is dropped');
      return err ?? new Error('ROLLBACK failed');
    }
  }
}

/** The `tx` of {@link PgStore.transaction}: refuses statements once the transaction is over. */
class PgTransaction implements Queryable {
  readonly #client: pg.PoolClient;
  #ended = false;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  get ended(): boolean {
    return this.#ended;
  }

  end(): void {
    this.#ended = true;
  }

  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    // The connection may serve someone else by now: a late statement must not run there.
    if (this.#ended) throw new Error('the transaction is over: run statements before its function resolves');
    try {
      return toResult<R>(await this.#client.query(sql, params));
    } catch (err) {
      throw translate(err);
    }
  }
}
