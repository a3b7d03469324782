/**
 * The embedded store opened from a data folder reads PostgreSQL's share and lib files (PGlite's file
 * bundle: time zones and their abbreviations, text-search dictionaries, PL/pgSQL) on demand once it has
 * started, instead of keeping the whole bundle in memory: everything that needs them still answers, on a
 * new database and on the next open. An edge site's store (`SITE=`) runs with shared memory for PGlite's
 * one connection and the smallest shared buffers, and works the same.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@scada/platform';
import { PGliteStore } from '@scada/platform/testing';
import { compileStoresAsPlatform } from '@scada/testkit/stores';
import { pino } from 'pino';
import t, { type Test } from 'tap';

// The WebAssembly compiled as a started platform compiles it (`EMBEDDED_STORE_COMPILER`).
compileStoresAsPlatform();
const folder = await mkdtemp(join(tmpdir(), 'scada-store-bundle-'));
t.teardown(() => rm(folder, { recursive: true, force: true }));
const lines: { msg?: string; onDemand?: number }[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
/** How many of the bundle's files the last open left to be read on demand, as its log line says. */
const onDemand = () => lines.filter((l) => l.msg === 'opened the embedded store').at(-1)?.onDemand ?? 0;

/**
 * The data folder of the first test, a database made by initdb there. The tests after it open it again
 * rather than each running initdb on a folder of its own (2-3 CPU-s each): what they test is a started
 * store's reading of the bundle, the same on a database it opens as on one it created, which the first
 * test shows. Run alone, each creates it.
 */
const plain = join(folder, 'plain');

/** What reads files of the bundle after the start: each a different one, each read for the first time. */
async function usesTheBundle(t: Test, store: Store): Promise<void> {
  const zones = await store.query<{ berlin: string; tokyo: string }>(
    `select (timestamptz '2026-07-01 12:00:00+00' at time zone 'Europe/Berlin')::text as berlin,
            (timestamptz '2026-01-01 00:00:00+00' at time zone 'Asia/Tokyo')::text as tokyo`,
  );
  t.same(zones.rows, [{ berlin: '2026-07-01 14:00:00', tokyo: '2026-01-01 09:00:00' }], 'time zones');
  const words = await store.query<{ v: string }>(`select to_tsvector('english', 'the running dogs')::text as v`);
  t.same(words.rows, [{ v: "'dog':3 'run':2" }], 'a text-search dictionary (a library of the bundle)');
  await store.query(`create or replace function twice(x int) returns int language plpgsql as $$ begin return 2 * x; end $$`);
  t.same((await store.query('select twice(21) as n')).rows, [{ n: 42 }], 'PL/pgSQL');
  const abbreviations = await store.query<{ n: number }>(`select count(*)::int as n from pg_timezone_abbrevs where abbrev = 'CEST'`);
  t.same(abbreviations.rows, [{ n: 1 }], 'the time zone abbreviations');
}

t.test('a store opened from a data folder, new and again', async (t) => {
  const dataDir = plain;
  const first = await PGliteStore.open(dataDir, { log });
  t.ok(onDemand() > 100, `the bundle's files read on demand (${onDemand()})`);
  await usesTheBundle(t, first);
  await first.close();
  const again = await PGliteStore.open(dataDir, { log });
  t.ok(onDemand() > 100, 'and on the next open');
  await usesTheBundle(t, again);
  await again.close();
});

t.test("an edge site's store: one connection's shared memory, 1 MB of shared buffers", async (t) => {
  const store = await openStore({ dataDir: plain, site: 'substation-1' }, log);
  try {
    const settings = await store.query<{ name: string; setting: string; unit: string | null }>(
      `select name, setting, unit from pg_settings where name in ('max_connections', 'shared_buffers') order by name`,
    );
    t.same(settings.rows, [
      { name: 'max_connections', setting: '2', unit: null },
      { name: 'shared_buffers', setting: '128', unit: '8kB' },
    ]);
    await usesTheBundle(t, store);
  } finally {
    await store.close();
  }
});

t.test("two stores open at once in one process, one on a worker thread: each reads its own bundle's files", async (t) => {
  const main = await PGliteStore.open(plain, { log });
  t.ok(onDemand() > 100, 'the main thread store reads on demand');
  // A new database, made by initdb on the worker thread: the worker's copy of the bundle is let go after it.
  const worker = await PGliteStore.open(join(folder, 'beside-worker'), { log, thread: 'worker' });
  t.ok(onDemand() > 100, "and the worker's copy too");
  try {
    await usesTheBundle(t, worker);
    await usesTheBundle(t, main);
    const zone = await worker.query<{ t: string }>(
      `set time zone 'America/Sao_Paulo'; select (timestamptz '2026-01-01 12:00:00+00')::text as t`,
    );
    t.same(zone.rows, [{ t: '2026-01-01 09:00:00-03' }], 'a session time zone read for the first time, on the worker');
  } finally {
    await worker.close();
    await main.close();
  }
});
