/**
 * The history's recording on the embedded store, as the all-in-one runs it: a file-backed store on a
 * worker thread, the history's migrations applied, and batches of 500 report events (one analogue value
 * each, as the soak's device reports them) recorded by `record()`. After a warm-up of the same work, the
 * timed part prints one JSON line: values recorded, and the CPU of the process (both threads), of the
 * main thread alone and of the rest (the store's worker and the runtime's helpers), each in µs a value.
 * CPU, not wall time: on a shared machine it is the steadier number.
 *
 * Run as `node --import tsx bench/store_ingest_work.ts` (`BENCH_STORE_BATCHES`, 40 unless told: 20,000
 * values timed; `EMBEDDED_STORE_THREAD=main` for the store on the main thread; `BENCH_STORE_JSON=1` for
 * the points carried as a JSON parameter, a statement at a time, as before).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { loadMigrations, type DurableEvent, type Transactional } from '@scada/platform';
import { PGliteStore } from '@scada/platform/testing';
import { Partitions, record } from '@scada/history/parts';

const batches = Number(process.env.BENCH_STORE_BATCHES ?? 40);
const eventsPerBatch = Number(process.env.BENCH_STORE_EVENTS ?? 500);
const encoder = new TextEncoder();
const rcb = 'SIMLD0/LLN0$RP$urcb01';

/** CPU of the whole process and of this (the main) thread, in µs. */
function cpu(): { all: number; main: number } {
  const u = process.cpuUsage();
  // utime and stime of this thread, in clock ticks (100 a second on Linux).
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { all: u.user + u.system, main: ticks * 10_000 };
}

const connectionId = randomUUID();
let seqNum = 0;
let clock = Date.now() - 3_600_000;

function report(): DurableEvent {
  seqNum++;
  clock += 1;
  const at = new Date(clock).toISOString();
  return {
    subject: 'events.protocol.report',
    data: encoder.encode(
      JSON.stringify({
        space: 'default',
        connectionId,
        rcb,
        rptId: 'r',
        seqNum: seqNum % 65536,
        entryId: null,
        at,
        values: [
          {
            connectionId,
            reference: 'SIMLD0/GGIO1$MX$AnIn1',
            value: { mag: { f: seqNum }, q: { validity: 'good' }, t: at },
            quality: { validity: 'good', detail: [], source: 'process', test: false, operatorBlocked: false },
            timestamp: at,
            timestampSource: 'attribute',
            receivedAt: at,
            rcb,
            reason: ['data-change'],
            seqNum: seqNum % 65536,
          },
        ],
      }),
    ),
  };
}

if (process.env.EMBEDDED_STORE_COMPILER !== 'optimizing') setFlagsFromString('--liftoff-only');
// The database with the history's schema is made once in memory on this thread and dumped, and the
// measured store opens from that dump: its thread's CPU profile (`--cpu-prof`) is then the recording's.
const seed = await PGliteStore.memory();
await seed.query('create schema if not exists history');
for (const m of await loadMigrations(new URL('../history-service/migrations/', import.meta.url))) await seed.query(m.sql);
const template = await seed.dump();
await seed.close();
const dataDir = await mkdtemp(join(tmpdir(), 'scada-store-ingest-'));
const store = await PGliteStore.open(dataDir, { template, thread: process.env.EMBEDDED_STORE_THREAD === 'main' ? 'main' : 'worker' });
try {
  const partitions = new Partitions(store);
  await partitions.upkeep(Date.now(), 30, 1);
  // `BENCH_STORE_JSON=1`: the points as a JSON parameter and the transaction a statement at a time, as
  // before COPY text (`copyRows`) and one request a transaction (`transactionOf`) were used.
  const bulk = store.bulk();
  const lane: Transactional =
    process.env.BENCH_STORE_JSON === '1'
      ? {
          query: (sql, params) => bulk.query(sql, params),
          transaction: (fn) => bulk.transaction((tx) => fn({ query: (sql, params) => tx.query(sql, params) })),
        }
      : bulk;
  // The events are made before each run, so that only their recording is timed.
  const run = async (n: number) => {
    const made = Array.from({ length: n }, () => Array.from({ length: eventsPerBatch }, report));
    const before = cpu();
    const started = performance.now();
    for (const batch of made) await record(lane, partitions, batch, { retentionDays: 30 });
    return { before, started };
  };
  await run(Math.max(4, batches / 4));
  const { before, started } = await run(batches);
  const ms = performance.now() - started;
  const after = cpu();
  const values = batches * eventsPerBatch;
  const { rows } = await store.query<{ n: string }>('select count(*)::text as n from history.points');
  const per = (us: number) => Math.round((us / values) * 10) / 10;
  console.log(
    JSON.stringify({
      values,
      stored: Number(rows[0]!.n),
      cpuUsPerValue: per(after.all - before.all),
      mainUsPerValue: per(after.main - before.main),
      restUsPerValue: per(after.all - before.all - (after.main - before.main)),
      wallUsPerValue: per(ms * 1000),
    }),
  );
} finally {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
}
