/**
 * The history service's numbers, on the embedded store and, with DATABASE_URL set, on PostgreSQL (the
 * platform in this process, in-process bus; with NATS_URL also on NATS), in one run:
 *
 * - ingest: report events of 20 values each published as fast as the bus takes them, until every value
 *   is recorded (points, both rollups, one transaction per batch, acknowledged after it), as values/s,
 *   beside a bare multi-row INSERT of the same rows in the same batches into a table with no index, no
 *   partition and no rollup (the baseline), as a ratio;
 * - read: 24 h of a 1 Hz signal read back as at most 2,000 points (`maxPoints=2000` through the gateway),
 *   p50 and p95 of sequential requests;
 * - storage: the bytes of the points' partitions and the rollups per million values recorded.
 *
 * `BENCH_HISTORY_VALUES` (100000) values are ingested; `BENCH_HISTORY_READS` (50) reads are timed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Store } from '@scada/platform';
import { launch, type PlatformProcess } from '../launch.ts';
import { createDatabase } from '@scada/testkit/platform';

const total = Number(process.env.BENCH_HISTORY_VALUES ?? 100_000);
const reads = Number(process.env.BENCH_HISTORY_READS ?? 50);
const perReport = 20;
const batchValues = 500 * perReport;
const password = 'bench-admin-password';
const encoder = new TextEncoder();

type Row = { mode: string; ingest: number; bare: number; p50: number; p95: number; points: number; bytesPerMillion: number };

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

function reportOf(connectionId: string, seq: number, values: { reference: string; value: number; at: number }[]) {
  const rcb = 'BENCH/LLN0$RP$urcb01';
  return encoder.encode(
    JSON.stringify({
      space: 'default',
      connectionId,
      rcb,
      rptId: 'bench',
      seqNum: seq % 256,
      entryId: null,
      at: new Date().toISOString(),
      values: values.map((v) => ({
        connectionId,
        reference: v.reference,
        value: v.value,
        quality: { validity: 'good', detail: [], source: 'process', test: false, operatorBlocked: false },
        timestamp: new Date(v.at).toISOString(),
        timestampSource: 'attribute',
        receivedAt: new Date(v.at).toISOString(),
        rcb,
        reason: ['data-change'],
        seqNum: seq % 256,
      })),
    }),
  );
}

/** The same rows, inserted bare: multi-row INSERT statements of one batch each, into a plain table. */
async function bareInsert(store: Store, rows: unknown[][]): Promise<number> {
  await store.query(`create table if not exists public.history_bench_bare (
    connection_id uuid, reference text, received_at timestamptz, rcb text, seq text, space text, seq_num integer,
    device_time timestamptz, num double precision, value jsonb, quality jsonb, validity smallint)`);
  await store.query('truncate public.history_bench_bare');
  const started = performance.now();
  for (let i = 0; i < rows.length; i += batchValues) {
    const batch = rows.slice(i, i + batchValues);
    const params: unknown[] = [];
    const tuples = batch.map((r) => {
      const at = params.length;
      params.push(...r);
      return `(${r.map((_, k) => `$${at + k + 1}`).join(',')})`;
    });
    // At most 65,535 parameters a statement: 12 a row, so 5,000 rows a statement.
    for (let j = 0; j < tuples.length; j += 5000) {
      const part = tuples.slice(j, j + 5000);
      const first = j * 12;
      const renumbered = part.map((t) => t.replace(/\$(\d+)/g, (_, n) => `$${Number(n) - first}`));
      await store.query(
        `insert into public.history_bench_bare values ${renumbered.join(',')}`,
        params.slice(first, first + part.length * 12),
      );
    }
  }
  const ms = performance.now() - started;
  await store.query('drop table public.history_bench_bare');
  return (rows.length / ms) * 1000;
}

async function measure(mode: string, env: Record<string, string>): Promise<Row> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-history-'));
  const proc: PlatformProcess = await launch(
    { DATA_DIR: dataDir, HTTP_PORT: '1', HTTPS_PORT: '0', ADMIN_PASSWORD: password, LOG_LEVEL: 'warn', ...env },
    { log: pino({ level: 'warn' }), host: '127.0.0.1', ephemeralPorts: true },
  );
  const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
  const store = proc.store!;
  try {
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
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

    // Ingest: `total` values, 20 references, one value each a report, received over the last hour.
    const ingestId = await connection();
    const now = Date.now();
    const reports: Uint8Array[] = [];
    const bareRows: unknown[][] = [];
    for (let r = 0; r < total / perReport; r++) {
      const at = now - 3_600_000 + Math.floor((r * 3_600_000) / (total / perReport));
      const values = Array.from({ length: perReport }, (_, k) => ({
        reference: `BENCH/MMXU1.A${k}.mag.f[MX]`,
        value: Math.sin(r / 100) * 100 + k,
        at,
      }));
      reports.push(reportOf(ingestId, r, values));
      for (const v of values)
        bareRows.push([
          ingestId,
          v.reference,
          new Date(at).toISOString(),
          'BENCH/LLN0$RP$urcb01',
          `s:${r % 256}`,
          'default',
          r % 256,
          new Date(at).toISOString(),
          v.value,
          null,
          '{"validity":"good"}',
          0,
        ]);
    }
    const started = performance.now();
    for (let i = 0; i < reports.length; i++) {
      proc.bus.publish('events.protocol.report', reports[i]!);
      // Let the bus breathe now and then, as a device's reports arrive over time.
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    await until('every value recorded', async () => (await recorded(store, ingestId)) >= total, 600_000);
    const ingest = (total / (performance.now() - started)) * 1000;
    const bare = await bareInsert(store, bareRows);

    // Storage: the points' partitions and both rollups, per million values recorded.
    const { rows: sizes } = await store.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(c.oid)) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'history' and c.relkind in ('r', 'p') and (c.relname like 'points_%' or c.relname like 'rollup_%')`,
    );
    const points = await recorded(store, ingestId);

    // Read: 24 h of 1 Hz on one reference, yesterday, as at most 2,000 points.
    const readId = await connection();
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
    return {
      mode,
      ingest: Math.round(ingest),
      bare: Math.round(bare),
      p50: at(0.5),
      p95: at(0.95),
      points,
      bytesPerMillion: Math.round((Number(sizes[0]?.bytes ?? 0) / (points + 86_400)) * 1_000_000),
    };
  } finally {
    await proc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
rows.push(await measure('embedded store, in-process bus', {}));
if (process.env.DATABASE_URL) {
  const database = await createDatabase(process.env.DATABASE_URL);
  try {
    const nats: Record<string, string> = process.env.NATS_URL
      ? { NATS_URL: process.env.NATS_URL, BUS_SUBJECT_PREFIX: `hb${randomBytes(4).toString('hex')}` }
      : {};
    rows.push(
      await measure(`PostgreSQL, ${process.env.NATS_URL ? 'NATS' : 'in-process bus'}`, {
        DATABASE_URL: database.url,
        SECRETS_KEY: randomBytes(32).toString('base64'),
        ...nats,
      }),
    );
  } finally {
    await database.drop();
  }
}
const lines = [
  '| store, bus | ingest values/s | bare INSERT values/s | ratio | 24 h of 1 Hz as ≤ 2,000 points p50 / p95 ms | bytes per million values |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.mode} | ${r.ingest} | ${r.bare} | ${(r.ingest / r.bare).toFixed(2)} | ${r.p50} / ${r.p95} | ${(r.bytesPerMillion / 1024 / 1024).toFixed(0)} MiB |`,
  ),
];
console.log(`### History: ${total} values ingested, ${reads} reads of a day\n\n${lines.join('\n')}`);
