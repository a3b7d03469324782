/**
 * A fixed piece of the embedded store's work, run in a process of its own by `footprint.bench.ts` with
 * each `EMBEDDED_STORE_COMPILER` it compares: what compiling PGlite's WebAssembly with V8's baseline
 * compiler only costs in CPU against compiling its hot code with the optimising compiler too.
 * The store is opened from the all-in-one bundle's template (every migration applied), then, after a
 * warm-up of the same work, timed: values ingested as the history does (batches through
 * `jsonb_to_recordset` into a day partition with its unique index), reads of one attribute's range with
 * an aggregate, and single-row reads and updates by key. Prints one JSON line: CPU ms of each part
 * (`process.cpuUsage`, which on a shared machine is steadier than wall time) and the resident memory.
 *
 * Run as `EMBEDDED_STORE_COMPILER=baseline|optimizing node --import tsx bench/footprint_store_work.ts <template file>`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGliteStore } from '@scada/platform/testing';

const templateFile = process.argv[2];
const batches = Number(process.env.BENCH_STORE_BATCHES ?? 10);
const batchRows = 2000;
const day = Date.UTC(2026, 0, 1);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Runs `fn` and answers the CPU it took, in ms. */
async function cpuOf(fn: () => Promise<void>): Promise<number> {
  const before = cpuMs();
  await fn();
  return cpuMs() - before;
}

const dataDir = await mkdtemp(join(tmpdir(), 'scada-store-work-'));
// As a platform process chooses for itself when it starts on the embedded store (`processV8Flags`).
if (process.env.EMBEDDED_STORE_COMPILER !== 'optimizing') setFlagsFromString('--liftoff-only');
// The all-in-one's choice (`EMBEDDED_STORE_THREAD`, `auto`: a worker); the process's CPU counts both threads.
const store = await PGliteStore.open(dataDir, { templateFile, thread: process.env.EMBEDDED_STORE_THREAD === 'main' ? 'main' : 'worker' });
try {
  await store.query(
    `create table history.bench_points partition of history.points for values from ('${new Date(day).toISOString()}') to ('${new Date(day + 86_400_000).toISOString()}')`,
  );
  const connection = randomUUID();
  let seq = 0;
  const ingest = async () => {
    for (let b = 0; b < batches; b++) {
      const rows = Array.from({ length: batchRows }, (_, i) => {
        seq++;
        return {
          c: connection,
          r: `LD0/MMXU1.TotW.mag.f${i % 20}`,
          at: new Date(day + seq * 10).toISOString(),
          s: `s:${seq}`,
          n: Math.sin(seq / 100) * 1000,
        };
      });
      await store.query(
        `insert into history.points (connection_id, reference, received_at, t, rcb, seq, space, num, validity)
         select c, r, at, at, 'rcb', s, 'bench', n, 0 from jsonb_to_recordset($1::jsonb) as x(c uuid, r text, at timestamptz, s text, n double precision)`,
        [JSON.stringify(rows)],
      );
    }
  };
  const reads = async () => {
    for (let i = 0; i < 100; i++) {
      await store.query(
        `select date_trunc('minute', t) as m, min(num), max(num), avg(num), count(*) from history.points
         where connection_id = $1 and reference = $2 and t >= $3 group by 1 order by 1`,
        [connection, `LD0/MMXU1.TotW.mag.f${i % 20}`, new Date(day).toISOString()],
      );
    }
  };
  await store.query('create table public.bench_kv (k integer primary key, v text not null, n integer not null default 0)');
  await store.query(`insert into public.bench_kv (k, v) select g, md5(g::text) from generate_series(1, 1000) g`);
  const keyed = async () => {
    for (let i = 0; i < 1000; i++) {
      const k = (i * 7919) % 1000;
      await store.transaction(async (tx) => {
        await tx.query('select v, n from public.bench_kv where k = $1', [k]);
        await tx.query('update public.bench_kv set n = n + 1 where k = $1', [k]);
      });
    }
  };
  // The warm-up: the same work once, so that the timed part measures code as it runs once it is hot.
  await ingest();
  await reads();
  await keyed();
  const result = { ingestMs: await cpuOf(ingest), readsMs: await cpuOf(reads), keyedMs: await cpuOf(keyed) };
  console.log(JSON.stringify(result));
} finally {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
}
