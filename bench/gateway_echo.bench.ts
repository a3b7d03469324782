/**
 * Gateway → bus → service round trip against a bare Koa app. Starts every process it measures, loads
 * each on loopback for a fixed time, prints a table. NATS mode needs NATS_URL and DATABASE_URL (or runs
 * only the embedded case when they are absent).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '../test/support/platform.ts';
import { freePort, load, processCpuMs, startProcess, stopProcess, table, waitReady, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);

async function measureBaseline(): Promise<LoadResult> {
  const port = await freePort();
  const child = startProcess('bench/baseline_koa.ts', { PORT: String(port) });
  try {
    await waitReady(`http://127.0.0.1:${port}/healthz`);
    await load('warm-up', `http://127.0.0.1:${port}/healthz`, { seconds: 1 });
    return await load('bare Koa GET /healthz (baseline)', `http://127.0.0.1:${port}/healthz`, {
      seconds,
      cpu: () => processCpuMs(child.pid ?? 0),
    });
  } finally {
    await stopProcess(child);
  }
}

/**
 * Bare Koa forwarding each echo as one NATS request to a bare responder in another process: what any
 * gateway over NATS pays before doing anything of its own (three more socket writes and reads per
 * request, in two processes). CPU of both processes, as for the platform's NATS case.
 */
async function measureNatsFloor(natsUrl: string): Promise<LoadResult> {
  const port = await freePort();
  const env = { NATS_URL: natsUrl, SUBJECT: `bench.echo.${randomBytes(4).toString('hex')}` };
  const responder = startProcess('bench/baseline_koa_nats.ts', { ...env, ROLE: 'responder' });
  const koa = startProcess('bench/baseline_koa_nats.ts', { ...env, PORT: String(port) });
  try {
    await waitReady(`http://127.0.0.1:${port}/api/echo?text=hi`);
    await load('warm-up', `http://127.0.0.1:${port}/api/echo?text=hi`, { seconds: 1 });
    return await load('bare Koa → NATS → bare responder GET /api/echo (the floor over NATS)', `http://127.0.0.1:${port}/api/echo?text=hi`, {
      seconds,
      cpu: () => processCpuMs(koa.pid ?? 0) + processCpuMs(responder.pid ?? 0),
    });
  } finally {
    await stopProcess(koa);
    await stopProcess(responder);
  }
}

async function measurePlatform(name: string, env: Record<string, string | undefined>, split: boolean): Promise<LoadResult[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-'));
  const port = await freePort();
  const common = { DATA_DIR: dataDir, HTTP_PORT: String(port), HTTPS_PORT: '0', LOG_LEVEL: 'info', ...env };
  const children = split
    ? [
        startProcess('main.ts', { ...common, SERVICES: 'auth,config,protocol' }),
        startProcess('main.ts', { ...common, SERVICES: 'gateway' }),
      ]
    : [startProcess('main.ts', common)];
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`);
    await load('warm-up', `http://127.0.0.1:${port}/api/echo?text=hi`, { seconds: 1 });
    // CPU of every process of the platform (both, when the gateway runs apart from the services).
    const cpu = () => children.reduce((sum, c) => sum + processCpuMs(c.pid ?? 0), 0);
    const health = await load(`${name}: gateway GET /healthz`, `http://127.0.0.1:${port}/healthz`, { seconds, cpu });
    const echo = await load(`${name}: GET /api/echo (gateway → bus → config)`, `http://127.0.0.1:${port}/api/echo?text=hi`, {
      seconds,
      cpu,
    });
    return [health, echo];
  } finally {
    for (const c of children.reverse()) await stopProcess(c);
    await rm(dataDir, { recursive: true, force: true });
  }
}

const baseline = await measureBaseline();
const rows = await measurePlatform('embedded', { NATS_URL: undefined, DATABASE_URL: undefined }, false);
if (process.env.NATS_URL && process.env.DATABASE_URL) {
  // A database of its own: secrets sealed by an earlier run under another SECRETS_KEY would stop the auth
  // service from starting, and every request would be measured as a fast 503.
  rows.push(await measureNatsFloor(process.env.NATS_URL));
  const database = await createDatabase(process.env.DATABASE_URL);
  try {
    rows.push(
      ...(await measurePlatform(
        'NATS',
        { NATS_URL: process.env.NATS_URL, DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') },
        true,
      )),
    );
  } finally {
    await database.drop();
  }
}
for (const row of rows) if (row.errors + row.non2xx > 0) console.error(`${row.name}: ${row.errors + row.non2xx} failed requests`);
console.log(table(`Gateway round trip, ${seconds} s per case, 32 connections, ${new Date().toISOString().slice(0, 10)}`, baseline, rows));
