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
  /**
   * Appends rows to `table` (its `columns`, in order) from `text` in COPY's text format: one line a row,
   * fields split by a tab, `\N` for null, backslash, tab, newline and carriage return escaped with a
   * backslash ({@link copyField}). Answers how many rows it added. Only a transaction of the embedded
   * store has it: there the rows skip the JSON a statement's parameter would carry them in (its text
   * parsed into jsonb, then every field out of it as text again), the larger part of a row's cost. A
   * broken constraint fails it as a statement's would. `table` and `columns` are identifiers written in
   * the code, never a caller's input.
   */
  copyRows?(table: string, columns: readonly string[], text: string): Promise<number>;
}

/** One field of a COPY text row ({@link Queryable.copyRows}): null as `\N`, text escaped, anything else as JSON. */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (ch) => copyEscapes[ch]!) : text;
}

const copyEscapes: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The COPY statement of {@link Queryable.copyRows}, reading from `source`. */
export function copySql(table: string, columns: readonly string[], source: string): string {
  return `copy ${table} (${columns.join(', ')}) from ${source}`;
}

/** One statement of {@link Transactional.transactionOf}: a query with its parameters, or rows from COPY text ({@link Queryable.copyRows}). */
export type Step =
  | { sql: string; params?: unknown[] }
  | {
      /**
       * `text` as `copyRows` takes it, or already as UTF-8 bytes. The embedded store's worker is sent the text
       * as bytes, moved rather than copied: bytes given that are the whole of their buffer are moved as they
       * are, so the caller gives them up.
       */
      copy: { table: string; columns: readonly string[]; text: string | Uint8Array };
    };

/** Something SQL and transactions can run on: a store, or its lane for work that can wait ({@link Store.bulk}). */
export interface Transactional extends Queryable {
  /**
   * Runs `steps` in one transaction, one after another, none of them needing another's answer: committed
   * when all went through, rolled back and the error thrown when one fails. Answers each step's result (a
   * COPY's as its `rowCount`, without rows). Only the embedded store has it: there the whole transaction is
   * one turn and, on a worker store, one message to the worker, instead of a turn held across a round
   * trip through the event loop for every statement (which, on a busy event loop, kept every other caller
   * waiting while the worker sat idle).
   */
  transactionOf?(steps: Step[]): Promise<QueryResult<Record<string, unknown>>[]>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (the error is
   * rethrown). Statements inside must use the given `tx`.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** A store of the platform. */
export interface Store extends Transactional {
  readonly kind: 'postgres' | 'pglite';
  /**
   * The same store for bulk work, which can wait: a batch of history rows, a long history read. The
   * embedded store runs one statement or transaction at a time; there, bulk work waits while any other
   * caller's does (a lease renewal, a sign-in, a session written), so those wait at most for the one
   * piece of bulk work already running, never behind a queue of it; bulk work that has waited a whole
   * second goes next all the same, so it is never starved. On PostgreSQL it is the store itself: the pool
   * runs both side by side.
   */
  bulk(): Transactional;
  /**
   * The same store for the few statements that must not wait behind other work: a lease's renewal, which
   * lapses if it comes late. The embedded store gives such work the next turn, ahead of every caller
   * already waiting (it waits only for the statement or transaction running); keep it to short statements
   * a few times a minute. On PostgreSQL it is the store itself.
   */
  first(): Transactional;
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

/**
 * The store's own queue is full: the embedded store refuses a caller past the bound of its lane at once
 * (`PGliteStore`'s turns) instead of letting it wait. A kind of {@link StoreUnavailableError} (the store
 * cannot take the work now), answered as 503 `overloaded` with `Retry-After`.
 */
export class StoreOverloadedError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOverloadedError';
  }
}

/** The kinds of integrity constraint a statement can break (SQLSTATE class 23). */
export type ConstraintKind = 'unique' | 'foreign_key' | 'not_null' | 'check' | 'exclusion' | 'other';

const constraintKinds: Record<string, ConstraintKind> = {
  '23505': 'unique',
  '23503': 'foreign_key',
  '23502': 'not_null',
  '23514': 'check',
  '23P01': 'exclusion',
};

/**
 * A statement broke an integrity constraint: both stores answer it as this one error, so a handler asks
 * `err instanceof ConstraintViolation && err.kind === 'unique'` instead of reading SQLSTATEs. The message
 * names the kind and the constraint, never the values (the driver's detail, which holds them, stays in
 * `cause`). `code` keeps the SQLSTATE.
 */
export class ConstraintViolation extends Error {
  readonly kind: ConstraintKind;
  readonly constraint: string | undefined;
  readonly code: string;

  constructor(code: string, constraint: string | undefined, options?: { cause?: unknown }) {
    const kind = constraintKinds[code] ?? 'other';
    super(`${kind.replace('_', ' ')} constraint ${constraint ?? '(unnamed)'} was violated`, options);
    this.name = 'ConstraintViolation';
    this.kind = kind;
    this.constraint = constraint;
    this.code = code;
  }
}

/** A driver error of SQLSTATE class 23 as a {@link ConstraintViolation}; any other error as it is. */
export function asConstraintViolation(err: unknown): unknown {
  if (err instanceof ConstraintViolation || err === null || typeof err !== 'object') return err;
  const { code, constraint } = err as { code?: unknown; constraint?: unknown };
  if (typeof code !== 'string' || !code.startsWith('23')) return err;
  return new ConstraintViolation(code, typeof constraint === 'string' ? constraint : undefined, { cause: err });
}
