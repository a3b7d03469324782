/**
 * The store: one interface over PostgreSQL (`pg_store.ts`, pooled) and PGlite (`pglite_store.ts`,
 * embedded and file-backed). Domain code writes SQL against it and never knows which one it has.
 * Every service owns one PostgreSQL schema and addresses its tables schema-qualified (`auth.users`).
 */

/** The result of one statement. */
export type QueryResult<R> = { rows: R[]; rowCount: number };

/** Something SQL can run on: the store itself, or a transaction. Parameters are `$1`, `$2`, … */
export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/** A store of the platform. */
export interface Store extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (the error is
   * rethrown). Statements inside must use the given `tx`.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** True when the store answers a trivial query. */
  ping(): Promise<boolean>;
  /** Waits for the statements in flight and releases every connection and file. */
  close(): Promise<void>;
}

/** One migration of a service's schema. `id` orders them and is recorded once applied. */
export type Migration = { id: string; sql: string };

/** Failure to reach or use the store, as opposed to a domain error. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
