import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Migration, Queryable, Store } from './store.ts';

/** The first half of every migration lock key: marks the advisory locks this module takes. */
const lockClass = 0x5cada;

/** A schema name we create and interpolate (quoted) into SQL: a lower-case identifier of at most 63 bytes. */
const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Brings `schema` up to date: in one transaction, under an advisory lock on the schema name, creates the
 * schema and its `schema_migrations` table when missing, then applies the migrations not recorded there,
 * in id order, recording each. Running it twice, or from two replicas at once, applies each migration
 * once; a migration that fails rolls back the whole run. Answers the ids it applied.
 */
export async function migrate(store: Store, schema: string, migrations: Migration[], log?: Logger): Promise<string[]> {
  if (!schemaPattern.test(schema)) throw new Error(`migrate: "${schema}" is not a schema name (lower-case letters, digits and _)`);
  const ordered = orderMigrations(schema, migrations);
  const applied = await store.transaction(async (tx) => {
    // Held to the end of the transaction: a second replica waits here, then finds the work done.
    await tx.query('select pg_advisory_xact_lock($1::int4, $2::int4)', [lockClass, lockKey(schema)]);
    await tx.query(`create schema if not exists "${schema}"`);
    await tx.query(
      `create table if not exists "${schema}".schema_migrations (id text primary key, applied_at timestamptz not null default now())`,
    );
    const done = await recordedIds(tx, schema);
    const missing = ordered.filter((m) => !done.has(m.id));
    for (const m of missing) await apply(tx, schema, m, log);
    const unknown = [...done].filter((id) => !ordered.some((m) => m.id === id));
    if (unknown.length > 0) log?.warn({ schema, unknown }, 'the database holds migrations this version does not know');
    return missing.map((m) => m.id);
  });
  log?.info({ schema, applied, known: ordered.length }, applied.length > 0 ? 'migrated' : 'schema up to date');
  return applied;
}

/** The migrations sorted by id; refuses duplicate or empty ids. */
function orderMigrations(schema: string, migrations: Migration[]): Migration[] {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (m.id === '') throw new Error(`migrate ${schema}: a migration has an empty id`);
    if (ids.has(m.id)) throw new Error(`migrate ${schema}: migration ${m.id} is listed twice`);
    ids.add(m.id);
  }
  return [...migrations].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A stable 32-bit key for the schema name, the same in every process. */
function lockKey(schema: string): number {
  return createHash('sha256').update(schema).digest().readInt32BE(0);
}

async function recordedIds(tx: Queryable, schema: string): Promise<Set<string>> {
  const { rows } = await tx.query<{ id: string }>(`select id from "${schema}".schema_migrations`);
  return new Set(rows.map((r) => r.id));
}

async function apply(tx: Queryable, schema: string, m: Migration, log?: Logger): Promise<void> {
  const started = performance.now();
  try {
    await tx.query(m.sql);
  } catch (err) {
    // Keeps the error itself (and its SQLSTATE code); only says which migration it came from.
    if (err instanceof Error) err.message = `migration ${schema}/${m.id} failed: ${err.message}`;
    throw err;
  }
  await tx.query(`insert into "${schema}".schema_migrations (id) values ($1)`, [m.id]);
  log?.debug({ schema, migration: m.id, ms: Math.round(performance.now() - started) }, 'applied migration');
}
