/**
 * Stores for tests: every test gets its own fresh database. PostgreSQL when `DATABASE_URL` is set, as a
 * new database made for the test and dropped after it (test files run in parallel and other suites share
 * the server); the embedded store otherwise.
 *
 * A fresh PGlite runs initdb: about 2.5 s and 200 MB. Tests start from a template instead (a data
 * folder dumped once, kept in the system temp folder and shared by every test file and run): about 0.4 s.
 * Test platforms start from a template with every migration applied (`migratedTemplate` in platform.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Store } from '@scada/platform';
import { PgStore, PGliteStore } from '@scada/platform/testing';

/** Where the shared dumps are kept: the temp folder when this module was loaded. */
const dumpFolder = tmpdir();

/** A store made for one test, and how to get rid of it. */
export type TestStore = {
  store: Store;
  /** The PostgreSQL URL of the test's own database (postgres only). */
  url?: string;
  /** The data folder (file-backed pglite only). */
  dataDir?: string;
  /** Closes the store and deletes its database or folder. */
  cleanup(): Promise<void>;
};

/** One kind of store the contract runs against. */
export type StoreTarget = {
  name: 'pglite' | 'postgres';
  make(options?: { log?: Logger }): Promise<TestStore>;
};

/**
 * The store to test against: the one the environment names, as for a test platform: PostgreSQL when
 * `DATABASE_URL` is set, the embedded one otherwise (the suite runs once on each, so each pass tests
 * its own store and neither repeats the other's).
 */
export function storeTargets(): StoreTarget[] {
  const url = process.env.DATABASE_URL;
  if (url !== undefined && url !== '') return [{ name: 'postgres', make: (options) => freshPostgres(url, options?.log) }];
  return [{ name: 'pglite', make: (options) => memoryPGlite(options?.log) }];
}

/**
 * How the test stores compile PostgreSQL's WebAssembly: as a platform does by default
 * (`EMBEDDED_STORE_COMPILER=baseline`: V8's baseline compiler only), unless the environment names the
 * optimising one. Also the cheaper for a test process (about 1.3 CPU-s less to start a store).
 */
const baselineCompiler = process.env.EMBEDDED_STORE_COMPILER !== 'optimizing';

/** Sets V8's flag as `runProcess` does for a platform on the embedded store (`processV8Flags`), before a store compiles. */
export function compileStoresAsPlatform(baseline = baselineCompiler): void {
  if (baseline) setFlagsFromString('--liftoff-only');
}

/**
 * Where the test stores' PostgreSQL runs: on a worker thread when the environment says
 * `EMBEDDED_STORE_THREAD=worker` (the store tests pass both ways), on the test's thread otherwise.
 */
export const testStoreThread: 'main' | 'worker' = process.env.EMBEDDED_STORE_THREAD === 'worker' ? 'worker' : 'main';

/** An in-memory PGlite started from the template. */
export async function memoryPGlite(log?: Logger): Promise<TestStore> {
  compileStoresAsPlatform();
  const store = await PGliteStore.memory({ log, template: await pgliteTemplate(), checkNesting: true, thread: testStoreThread });
  return { store, cleanup: () => store.close() };
}

/**
 * A dump of a freshly initialised PGlite data folder, cached as `<tmp>/scada-pglite-<version>.tar`.
 * Made once (2.5 s) by whichever test needs it first.
 */
export function pgliteTemplate(): Promise<Blob> {
  return cachedDump('', async () => {
    const db = await PGlite.create();
    try {
      return await db.dumpDataDir('none');
    } finally {
      await db.close();
    }
  });
}

/**
 * A data-folder dump kept as `<tmp>/scada-pglite-<version><suffix>.tar`, built by `build` when missing.
 * Written to a temporary name and renamed, so parallel test files never read half a file.
 */
export async function cachedDump(suffix: string, build: () => Promise<Blob>): Promise<Blob> {
  // The temp folder as the process started: a test that points TMPDIR elsewhere (to watch its own
  // temporary files) must still find the dumps every other test file shares.

  // The package does not export its package.json: find it beside the entry point.
  const manifest = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
  const path = join(dumpFolder, `scada-pglite-${version}${suffix}.tar`);
  try {
    return new Blob([await readFile(path)]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const dump = await build();
  const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
  await rename(partial, path);
  return dump;
}

/** A new database on the server of `adminUrl`, named at random, dropped (with FORCE) by cleanup. */
export async function freshPostgres(adminUrl: string, log?: Logger): Promise<TestStore> {
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const store = await PgStore.connect(url.toString(), { log, max: 20, applicationName: 'scada-test' });
  return {
    store,
    url: url.toString(),
    cleanup: async () => {
      await store.close();
      await admin(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

async function admin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
