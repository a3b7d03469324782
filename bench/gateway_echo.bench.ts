/**
 * Gateway → bus → service round trip against a bare Koa app. Starts every process it measures, then loads
 * each case on loopback for a fixed time, in interleaved rounds (`BENCH_ROUNDS`), and prints a table of
 * medians and ratios to the baseline of the same round. The embedded platform runs twice, under Node
 * and under Deno (as `deno task start` runs it; `BENCH_DENO=0` leaves Deno out), and Deno's echo is
 * printed as a ratio to Node's of the same round. `BENCH_DENO_V8_FLAGS` adds further Deno runs, each with
 * V8 flags on top of the start task's (sets separated by `;`, flags within a set by `,`), measured in the
 * same rounds: how a flag is tried before it goes into deno.json. For every embedded case the event loop's
 * p99 delay during each round is read from `/metrics` (a scrape resets it; goal ≤ 50 ms). NATS mode needs
 * NATS_URL and DATABASE_URL (or runs only the embedded cases when they are absent).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@scada/testkit/platform';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import {
  benchRounds,
  freePort,
  interleave,
  load,
  processCpuMs,
  roundsTable,
  startProcess,
  stopProcess,
  waitReady,
  type LoadResult,
} from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const withDeno = process.env.BENCH_DENO !== '0';
const denoVariants = (process.env.BENCH_DENO_V8_FLAGS ?? '')
  .split(';')
  .map((set) =>
    set
      .split(',')
      .map((flag) => flag.trim())
      .filter(Boolean),
  )
  .filter((flags) => flags.length > 0);

/** Deno's echo throughput as a share of Node's, round by round: the median and the range (goal ≥ 0.8). */
function denoShare(node: LoadResult[], deno: LoadResult[]): string {
  const shares = deno.map((r, i) => r.rps / (node[i] as LoadResult).rps).sort((a, b) => a - b);
  const median = shares[Math.floor(shares.length / 2)] as number;
  const cpu = deno.map((r, i) => (node[i]?.cpuMs ?? 0) / (r.cpuMs ?? Number.NaN)).filter(Number.isFinite);
  return (
    `Deno / Node, embedded echo: ${median.toFixed(2)} of the requests a second (rounds ${shares.map((s) => s.toFixed(2)).join(', ')}; goal ≥ 0.8)` +
    (cpu.length > 0 ? `; Node's CPU per request / Deno's: ${cpu.map((c) => c.toFixed(2)).join(', ')}` : '')
  );
}

/** A case: what is loaded, whose CPU it costs, and where the process's event-loop delay is read. */
type Case = { name: string; url: string; cpu: () => number; metrics?: string };
/** Processes started for some cases, and how to stop them. */
type Setup = { cases: Case[]; stop: () => Promise<void> };

/** Waits until `url` answers; when it never does, stops what was started before failing. */
async function readyOrStopped(url: string, stop: () => Promise<void>): Promise<void> {
  try {
    await waitReady(url);
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The CPU of every process given, summed. */
const cpuOf = (children: ChildProcess[]) => () => children.reduce((sum, c) => sum + processCpuMs(c.pid ?? 0), 0);

async function startBaseline(): Promise<Setup> {
  const port = await freePort();
  const child = startProcess('bench/baseline_koa.ts', { PORT: String(port) });
  await readyOrStopped(`http://127.0.0.1:${port}/healthz`, () => stopProcess(child));
  return {
    cases: [{ name: 'bare Koa GET /healthz (baseline)', url: `http://127.0.0.1:${port}/healthz`, cpu: cpuOf([child]) }],
    stop: () => stopProcess(child),
  };
}

/**
 * Bare Koa forwarding each echo as one NATS request to a bare responder in another process: what any
 * gateway over NATS pays before doing anything of its own (three more socket writes and reads per
 * request, in two processes). CPU of both processes, as for the platform's NATS case.
 */
async function startNatsFloor(natsUrl: string): Promise<Setup> {
  const port = await freePort();
  const env = { NATS_URL: natsUrl, SUBJECT: `bench.echo.${randomBytes(4).toString('hex')}` };
  const responder = startProcess('bench/baseline_koa_nats.ts', { ...env, ROLE: 'responder' });
  const koa = startProcess('bench/baseline_koa_nats.ts', { ...env, PORT: String(port) });
  const stop = async () => {
    await stopProcess(koa);
    await stopProcess(responder);
  };
  await readyOrStopped(`http://127.0.0.1:${port}/api/echo?text=hi`, stop);
  const url = `http://127.0.0.1:${port}/api/echo?text=hi`;
  return {
    cases: [{ name: 'bare Koa → NATS → bare responder GET /api/echo (the floor over NATS)', url, cpu: cpuOf([koa, responder]) }],
    stop,
  };
}

async function startPlatform(
  name: string,
  env: Record<string, string | undefined>,
  split: boolean,
  runtime: 'node' | 'deno' = 'node',
  denoV8Flags: string[] = [],
): Promise<Setup> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-'));
  const port = await freePort();
  const common = { DATA_DIR: dataDir, HTTP_PORT: String(port), HTTPS_PORT: '0', LOG_LEVEL: 'info', ...env };
  const busKeys = roleBusKeys({ gateway: ['gateway'], services: ['auth', 'config', 'protocol'] });
  const children = split
    ? [
        startProcess('main.ts', { ...common, SERVICES: 'auth,config,protocol', ...busKeys.services }),
        startProcess('main.ts', { ...common, SERVICES: 'gateway', ...busKeys.gateway }),
      ]
    : [startProcess('main.ts', common, runtime, denoV8Flags)];
  const stop = async () => {
    for (const c of [...children].reverse()) await stopProcess(c);
    await rm(dataDir, { recursive: true, force: true });
  };
  await readyOrStopped(`http://127.0.0.1:${port}/readyz`, stop);
  // CPU of every process of the platform (both, when the gateway runs apart from the services).
  const cpu = cpuOf(children);
  // The gateway's process holds the event loop measured; split, the services' own loop is not read.
  const metrics = split ? undefined : `http://127.0.0.1:${port}/metrics`;
  const health = { name: `${name}: gateway GET /healthz`, url: `http://127.0.0.1:${port}/healthz`, cpu, metrics };
  const echo = { name: `${name}: GET /api/echo (gateway → bus → config)`, url: `http://127.0.0.1:${port}/api/echo?text=hi`, cpu, metrics };
  // A Deno run with flags of its own is there for its echo; its health check would only lengthen the rounds.
  return { cases: denoV8Flags.length > 0 ? [echo] : [health, echo], stop };
}

/** The event loop's p99 delay since the last scrape, in ms, from a process's `/metrics` (which it resets). */
async function loopP99Ms(metrics: string): Promise<number> {
  const text = await (await fetch(metrics)).text();
  const seconds = /^nodejs_eventloop_lag_p99_seconds (\S+)/m.exec(text)?.[1];
  return seconds === undefined ? Number.NaN : Number(seconds) * 1000;
}

/** Each case's event-loop p99 in ms, round by round. */
const loopDelays = new Map<string, number[]>();

/** Loads a case for one round; with the event loop's p99 delay during that round, where it is exported. */
async function round(c: Case): Promise<LoadResult> {
  if (c.metrics) await loopP99Ms(c.metrics);
  const result = await load(c.name, c.url, { seconds, cpu: c.cpu });
  if (c.metrics) loopDelays.set(c.name, [...(loopDelays.get(c.name) ?? []), await loopP99Ms(c.metrics)]);
  return result;
}

// Everything runs from the start, so that the rounds can take the cases in turn; what waits costs nothing
// measurable (no timer of the platform runs more than once a second).
const setups: Setup[] = [];
let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
try {
  setups.push(await startBaseline());
  const embedded = { NATS_URL: undefined, DATABASE_URL: undefined };
  setups.push(await startPlatform('embedded', embedded, false));
  if (withDeno) setups.push(await startPlatform('embedded under Deno', embedded, false, 'deno'));
  for (const flags of denoVariants) {
    setups.push(await startPlatform(`embedded under Deno with ${flags.join(' ')}`, embedded, false, 'deno', flags));
  }
  if (process.env.NATS_URL && process.env.DATABASE_URL) {
    setups.push(await startNatsFloor(process.env.NATS_URL));
    // A database of its own: secrets sealed by an earlier run under another SECRETS_KEY would stop the auth
    // service from starting, and every request would be measured as a fast 503.
    database = await createDatabase(process.env.DATABASE_URL);
    setups.push(
      await startPlatform(
        'NATS',
        { NATS_URL: process.env.NATS_URL, DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') },
        true,
      ),
    );
  }
  const cases = setups.flatMap((s) => s.cases);
  for (const c of cases) await load('warm-up', c.url, { seconds: 1 });
  const results = await interleave(
    benchRounds,
    cases.map((c) => () => round(c)),
  );
  for (const runs of results) {
    const failed = runs.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
    if (failed > 0) console.error(`${runs[0]?.name}: ${failed} failed requests`);
  }
  const [baseline, ...rows] = results;
  console.log(
    roundsTable(
      `Gateway round trip, ${benchRounds} interleaved rounds of ${seconds} s per case, 32 connections, ${new Date().toISOString().slice(0, 10)}`,
      baseline!,
      rows,
    ),
  );
  const echo = (name: string) => results[cases.findIndex((c) => c.name === `${name}: GET /api/echo (gateway → bus → config)`)];
  const node = echo('embedded');
  for (const name of ['embedded under Deno', ...denoVariants.map((flags) => `embedded under Deno with ${flags.join(' ')}`)]) {
    const deno = echo(name);
    if (node && deno) console.log(`\n${name}: ${denoShare(node, deno)}`);
  }
  console.log("\nThe event loop's p99 delay in each round, ms (goal ≤ 50):");
  for (const [name, delays] of loopDelays) {
    const sorted = [...delays].sort((a, b) => a - b);
    console.log(
      `- ${name}: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)}, rounds ${delays.map((d) => d.toFixed(0)).join(', ')}`,
    );
  }
} finally {
  for (const s of setups.reverse()) await s.stop();
  await database?.drop();
}
