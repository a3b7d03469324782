/**
 * The history service's numbers, on the embedded store and, with DATABASE_URL set, on PostgreSQL (the
 * platform in this process, in-process bus; with NATS_URL also on NATS), in one run:
 *
 * - ingest: report events of 20 values each published as fast as the bus takes them, until every value
 *   is recorded (points, both rollups, one transaction per batch, acknowledged after it), as values/s,
 *   in rounds interleaved with two baselines of the same rows in the same batches of 10,000: a bare
 *   multi-row INSERT into a table of the same shape with its indexes (day partitions, the unique index,
 *   BRIN; no ON CONFLICT, no rollup, nothing decoded: the rows are made beforehand), the one the goal
 *   is measured against, and the same INSERT into a plain table with no index and no partition;
 * - read: 24 h of a 1 Hz signal read back as at most 2,000 points (`maxPoints=2000` through the gateway),
 *   p50 and p95 of sequential requests;
 * - storage: the bytes of the points' partitions and the rollups per million values recorded;
 * - sustained: `BENCH_HISTORY_RATE` (5000) values/s published at a steady pace for
 *   `BENCH_HISTORY_SECONDS` (5; 60 for the issue's figure) while a client follows `/api/live` for the
 *   connection's values and another reads its history (the last 10 minutes of one attribute, at most
 *   1,000 points) every 250 ms: values/s recorded in the period, how long after the last publish every
 *   value was recorded, the values the live client received, and p50 / p95 of the history reads.
 *
 * `BENCH_HISTORY_VALUES` (100000) values are ingested, in `BENCH_HISTORY_ROUNDS` (3) rounds (each
 * round ingest, bare, plain, the order turned every round); `BENCH_HISTORY_READS` (50) reads are timed;
 * `BENCH_HISTORY_EMBEDDED=0` leaves the embedded store out.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Store } from '@scada/platform';
import type { BenchPlatform } from '@scada/testkit/bench_platform';
import { createDatabase } from '@scada/testkit/platform';
import { startBenchPlatform } from '@scada/testkit/bench_platform';
import { reportOf } from './reports.ts';

const total = Number(process.env.BENCH_HISTORY_VALUES ?? 100_000);
const reads = Number(process.env.BENCH_HISTORY_READS ?? 50);
const rounds = Number(process.env.BENCH_HISTORY_ROUNDS ?? 3);
const sustainSeconds = Number(process.env.BENCH_HISTORY_SECONDS ?? 5);
const sustainRate = Number(process.env.BENCH_HISTORY_RATE ?? 5000);
const perReport = 20;
const batchValues = 500 * perReport;

type Row = {
  mode: string;
  ingest: number;
  bare: number;
  plain: number;
  p50: number;
  p95: number;
  points: number;
  bytesPerMillion: number;
  sustained: Sustained;
};
type Sustained = {
  rate: number;
  recorded: number;
  lagMs: number;
  live: number;
  readP50: number;
  readP95: number;
  reads: number;
  readErrors: number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function until(what: string, probe: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const recorded = async (store: Store, connectionId: string) =>
  Number(
    (await store.query<{ n: string | null }>('select sum(count) as n from history.rollup_hour where connection_id = $1', [connectionId]))
      .rows[0]?.n ?? 0,
  );

/**
 * The baseline's table: `shaped`, the points' table made by the history's own migrations in a schema of
 * its own (day partitions for the rows' days, the unique index on the time axis, BRIN); otherwise a plain
 * table.
 */
async function bareTable(store: Store, shaped: boolean, days: number[]): Promise<string> {
  await store.query('drop schema if exists history_bench_bare cascade');
  await store.query('create schema history_bench_bare');
  if (!shaped) {
    await store.query(`create table history_bench_bare.points (
      connection_id uuid, reference text, received_at timestamptz, rcb text, seq text, space text, seq_num integer,
      device_time timestamptz, num double precision, value jsonb, quality jsonb, validity smallint, t timestamptz)`);
    return 'history_bench_bare.points';
  }
  const sql = await readFile(new URL('../history-service/migrations/0001_points_and_rollups.sql', import.meta.url), 'utf8');
  const points = sql.slice(0, sql.indexOf('-- Rollups per minute')).replaceAll('history.', 'history_bench_bare.');
  await store.query(points);
  // The time axis column (added last, as the bare rows give it) and the uniqueness index led by it.
  const axis = await readFile(new URL('../history-service/migrations/0002_device_time_axis.sql', import.meta.url), 'utf8');
  await store.query(axis.slice(0, axis.indexOf('-- The rollups are by')).replaceAll('history.', 'history_bench_bare.'));
  for (const day of new Set(days)) {
    const from = new Date(day).toISOString();
    const to = new Date(day + 86_400_000).toISOString();
    await store.query(
      `create table history_bench_bare.p${day} partition of history_bench_bare.points for values from ('${from}') to ('${to}')`,
    );
  }
  return 'history_bench_bare.points';
}

/** The same rows, inserted bare: multi-row INSERT statements, one transaction per batch of 10,000. */
async function bareInsert(store: Store, rows: unknown[][], shaped: boolean): Promise<number> {
  const table = await bareTable(
    store,
    shaped,
    rows.map((r) => Math.floor(Date.parse(r[2] as string) / 86_400_000) * 86_400_000),
  );
  const started = performance.now();
  for (let i = 0; i < rows.length; i += batchValues) {
    const batch = rows.slice(i, i + batchValues);
    await store.transaction(async (tx) => {
      // At most 65,535 parameters a statement: 13 a row, so 5,000 rows a statement.
      for (let j = 0; j < batch.length; j += 5000) {
        const part = batch.slice(j, j + 5000);
        const tuples = part.map((_, n) => `(${Array.from({ length: 13 }, (_, k) => `$${n * 13 + k + 1}`).join(',')})`);
        await tx.query(`insert into ${table} values ${tuples.join(',')}`, part.flat());
      }
    });
  }
  const ms = performance.now() - started;
  await store.query('drop schema history_bench_bare cascade');
  return (rows.length / ms) * 1000;
}

/** The rows of `count` report events of 20 values, received over the hour before `now`, and the events. */
function reportsOf(connectionId: string, count: number, now: number): { reports: Uint8Array[]; rows: unknown[][] } {
  const reports: Uint8Array[] = [];
  const rows: unknown[][] = [];
  for (let r = 0; r < count; r++) {
    const at = now - 3_600_000 + Math.floor((r * 3_600_000) / count);
    const values = Array.from({ length: perReport }, (_, k) => ({
      reference: `BENCH/MMXU1.A${k}.mag.f[MX]`,
      value: Math.sin(r / 100) * 100 + k,
      at,
    }));
    reports.push(reportOf(connectionId, r, values));
    for (const v of values)
      rows.push([
        connectionId,
        v.reference,
        new Date(at).toISOString(),
        'BENCH/LLN0$RP$urcb01',
        `s:${r % 256}`,
        'default',
        r % 256,
        new Date(at).toISOString(),
        v.value,
        null,
        '{"validity":"good","detail":[],"source":"process","test":false,"operatorBlocked":false}',
        0,
        new Date(at).toISOString(),
      ]);
  }
  return { reports, rows };
}

/**
 * The sustained run: `sustainRate` values/s for `sustainSeconds`, reports of 20 values published at a
 * steady pace (received now, one sequence number each), while a client follows `/api/live` for the
 * connection's values and another reads the history of one of its attributes every 250 ms.
 */
async function sustain(
  url: string,
  headers: Record<string, string>,
  store: Store,
  id: string,
  proc: BenchPlatform['proc'],
): Promise<Sustained> {
  const abort = new AbortController();
  let live = 0;
  const stream = await fetch(`${url}/api/live?connections=${id}&topics=values`, {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  if (stream.status !== 200) throw new Error(`live answered ${stream.status}`);
  const following = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const frames = buffer.split('\n\n');
        buffer = frames.pop()!;
        for (const frame of frames) if (/^event: value$/m.test(frame)) live++;
      }
    } catch {
      // closed
    }
  })();
  const ref = 'BENCH/MMXU1.A0.mag.f[MX]';
  const readTimes: number[] = [];
  let readErrors = 0;
  let publishing = true;
  const reading = (async () => {
    // The attribute exists once its first value is recorded.
    while (publishing) {
      await new Promise((r) => setTimeout(r, 250));
      const query = new URLSearchParams({ reference: ref, from: new Date(Date.now() - 600_000).toISOString(), maxPoints: '1000' });
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/api/connections/${id}/history?${query}`, { headers });
        await res.arrayBuffer();
        if (res.status === 200) readTimes.push(performance.now() - t0);
        else if (res.status !== 400) throw new Error(`history answered ${res.status}`);
      } catch (err) {
        // A keep-alive socket the server closed as the request went out: counted, and the next read goes on.
        if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
        readErrors++;
      }
    }
  })();
  const perSecond = sustainRate / perReport;
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < sustainSeconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * perSecond);
    for (; sent < due; sent++) {
      const at = Date.now();
      const values = Array.from({ length: perReport }, (_, k) => ({ reference: `BENCH/MMXU1.A${k}.mag.f[MX]`, value: sent + k, at }));
      proc.bus.publish('events.protocol.report', reportOf(id, sent, values));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const published = performance.now();
  const values = sent * perReport;
  const inPeriod = await recorded(store, id);
  await until('every value of the sustained run recorded', async () => (await recorded(store, id)) >= values, 600_000);
  const lagMs = performance.now() - published;
  publishing = false;
  await reading;
  await new Promise((r) => setTimeout(r, 500));
  abort.abort();
  await following;
  readTimes.sort((a, b) => a - b);
  const q = (x: number) => Math.round(readTimes[Math.min(readTimes.length - 1, Math.floor(x * readTimes.length))]! * 10) / 10;
  return {
    rate: Math.round(inPeriod / sustainSeconds),
    recorded: values,
    lagMs: Math.round(lagMs),
    live,
    readP50: q(0.5),
    readP95: q(0.95),
    reads: readTimes.length,
    readErrors,
  };
}

async function measure(mode: string, options: { servers: boolean; env?: Record<string, string> }): Promise<Row> {
  const platform = await startBenchPlatform({
    name: 'history',
    servers: options.servers,
    env: { ...(process.env.HISTORY_BATCH_EVENTS ? { HISTORY_BATCH_EVENTS: process.env.HISTORY_BATCH_EVENTS } : {}), ...options.env },
  });
  const url = platform.base;
  const proc = platform.proc;
  const store = proc.store!;
  try {
    const headers = { ...platform.headers, 'x-space': 'default', 'content-type': 'application/json' };
    const project = (
      (await (
        await fetch(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', isActive: true }) })
      ).json()) as { id: string }
    ).id;
    const connection = async () =>
      (
        (await (
          await fetch(`${url}/api/connections`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: `feeder-${randomUUID()}`, ip: '127.0.0.1', port: 1, projectId: project, protocol: 'IEC 61850' }),
          })
        ).json()) as { id: string }
      ).id;

    // Ingest: `total` values in `rounds` rounds, 20 references, one value each a report, received over
    // the last hour; each round beside the two baselines of the same rows, the order turned every round.
    // Every connection made now: a keep-alive socket the gateway closed while the baselines ran is not reused.
    const ingestIds: string[] = [];
    for (let round = 0; round < rounds; round++) ingestIds.push(await connection());
    const readId = await connection();
    const sustainId = await connection();
    const ingests: number[] = [];
    const bares: number[] = [];
    const plains: number[] = [];
    const now = Date.now();
    for (let round = 0; round < rounds; round++) {
      const ingestId = ingestIds[round]!;
      const { reports, rows: bareRows } = reportsOf(ingestId, Math.round(total / rounds / perReport), now);
      const values = reports.length * perReport;
      const ingestRound = async () => {
        const started = performance.now();
        for (let i = 0; i < reports.length; i++) {
          proc.bus.publish('events.protocol.report', reports[i]!);
          // Let the bus breathe now and then, as a device's reports arrive over time.
          if (i % 500 === 499) await new Promise((r) => setImmediate(r));
        }
        await until('every value recorded', async () => (await recorded(store, ingestId)) >= values, 600_000);
        ingests.push((values / (performance.now() - started)) * 1000);
      };
      const steps = [
        ingestRound,
        async () => bares.push(await bareInsert(store, bareRows, true)),
        async () => plains.push(await bareInsert(store, bareRows, false)),
      ];
      for (let k = 0; k < steps.length; k++) await steps[(k + round) % steps.length]!();
    }
    const ingest = median(ingests);
    const bare = median(bares);
    const plain = median(plains);

    // Storage: the points' partitions and both rollups, per million values recorded.
    const { rows: sizes } = await store.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(c.oid)) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'history' and c.relkind in ('r', 'p') and (c.relname like 'points_%' or c.relname like 'rollup_%')`,
    );
    let points = 0;
    for (const id of ingestIds) points += await recorded(store, id);

    // Read: 24 h of 1 Hz on one reference, yesterday, as at most 2,000 points.
    const start = Math.floor(now / 1000) * 1000 - 86_400_000 - 3_600_000;
    const ref = 'BENCH/MMXU1.Hz.mag.f[MX]';
    for (let s = 0; s < 86_400; s += 100) {
      const values = Array.from({ length: 100 }, (_, k) => ({
        reference: ref,
        value: 50 + Math.sin((s + k) / 600),
        at: start + (s + k) * 1000,
      }));
      proc.bus.publish('events.protocol.report', reportOf(readId, s, values));
      if (s % 10_000 === 0) await new Promise((r) => setImmediate(r));
    }
    await until('a day of 1 Hz recorded', async () => (await recorded(store, readId)) >= 86_400, 600_000);
    const query = new URLSearchParams({
      reference: ref,
      from: new Date(start).toISOString(),
      to: new Date(start + 86_400_000).toISOString(),
      maxPoints: '2000',
    });
    const times: number[] = [];
    for (let i = 0; i < reads + 5; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}/api/connections/${readId}/history?${query}`, { headers });
      const body = (await res.json()) as { points: unknown[] };
      if (res.status !== 200 || body.points.length > 2000) throw new Error(`read answered ${res.status} with ${body.points.length} points`);
      if (i >= 5) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
    const sustained = await sustain(url, headers, store, sustainId, proc);
    return {
      mode,
      ingest: Math.round(ingest),
      bare: Math.round(bare),
      plain: Math.round(plain),
      sustained,
      p50: at(0.5),
      p95: at(0.95),
      points,
      // Measured before the day of 1 Hz is recorded: the bytes of the ingested values alone.
      bytesPerMillion: Math.round((Number(sizes[0]?.bytes ?? 0) / points) * 1_000_000),
    };
  } finally {
    await platform.stop();
  }
}

const rows: Row[] = [];
if (process.env.BENCH_HISTORY_EMBEDDED !== '0') rows.push(await measure('embedded store, in-process bus', { servers: false }));
if (process.env.DATABASE_URL && process.env.NATS_URL) rows.push(await measure('PostgreSQL, NATS', { servers: true }));
else if (process.env.DATABASE_URL) {
  const database = await createDatabase(process.env.DATABASE_URL);
  try {
    rows.push(
      await measure('PostgreSQL, in-process bus', {
        servers: false,
        env: { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') },
      }),
    );
  } finally {
    await database.drop();
  }
}
const lines = [
  '| store, bus | ingest values/s | bare INSERT, same table and indexes, values/s | ratio | bare INSERT, plain table, values/s | ratio | 24 h of 1 Hz as ≤ 2,000 points p50 / p95 ms | bytes per million values |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.mode} | ${r.ingest} | ${r.bare} | ${(r.ingest / r.bare).toFixed(2)} | ${r.plain} | ${(r.ingest / r.plain).toFixed(2)} | ${r.p50} / ${r.p95} | ${(r.bytesPerMillion / 1024 / 1024).toFixed(0)} MiB |`,
  ),
  '',
  `Sustained: ${sustainRate} values/s offered for ${sustainSeconds} s, /api/live followed, history read every 250 ms`,
  '',
  '| store, bus | values/s recorded in the period | values published | all recorded after the last publish, ms | value events on /api/live | history reads | p50 / p95 ms |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.mode} | ${r.sustained.rate} | ${r.sustained.recorded} | ${r.sustained.lagMs} | ${r.sustained.live} | ${r.sustained.reads}${r.sustained.readErrors ? ` (${r.sustained.readErrors} reset)` : ''} | ${r.sustained.readP50} / ${r.sustained.readP95} |`,
  ),
];
console.log(`### History: ${total} values ingested in ${rounds} rounds, ${reads} reads of a day\n\n${lines.join('\n')}`);
