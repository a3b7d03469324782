/**
 * What running scripts costs, each measure beside `node:vm` running the same code as the unsafe speed
 * anchor (`node:vm` is no sandbox: its code reaches `process` in one line; it shows what the isolation
 * costs, not a choice). Cases run in interleaved rounds (`BENCH_ROUNDS`, 3), on the embedded platform:
 *
 * - per-run overhead of a trivial script (`return 1`), one run after another: the pool's worker thread,
 *   a fresh QuickJS runtime and context, the answer back; `node:vm` with a fresh context a run;
 * - trivial runs per second with the workers of a replica (SCRIPT_WORKERS, 2 here) busy: through the pool
 *   alone, and scheduled (100 periodic scripts every 100 ms, 1000 runs offered a second, through leases,
 *   the store and the run records) counted by their `events.config.script.ran`;
 * - the time from a run's deadline (200 ms) to its endless loop being stopped;
 * - `read → compute → write` against the simulator, the plant calls over the bus as the script.
 *
 * Goals (issue 28): overhead ≤ 2 ms, ≥ 500 scheduled runs a second on 2 cores, a loop stopped by its
 * deadline + 50 ms. Standalone: `npm run bench -- scripts`.
 */
import { randomUUID } from 'node:crypto';
import vm from 'node:vm';
import { configEvents } from '@scada/contracts';
import { plantApi, ScriptPool, type HostApi, type SandboxLimits } from '@scada/config';
import { pino } from 'pino';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startSimulator } from '@scada/simulator';
import { liveConnection } from '@scada/testkit/live';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { scriptsApi } from '@scada/testkit/scripts';
import { benchRounds, interleave, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const limits: SandboxLimits = {
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 256 * 1024,
  deadlineMs: 1000,
  logLines: 100,
  logLineBytes: 8192,
  stateBytes: 64 * 1024,
};
const workers = 2;

const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults: {} });
const p = await startTestPlatform({ SCRIPT_WORKERS: String(workers), LOG_LEVEL: 'warn' });
const pool = new ScriptPool({ size: workers, log: pino({ level: 'warn' }), memoryBytes: limits.memoryBytes });

/** Latencies of sequential calls for `ms`, as a row: runs a second, p50, p99. */
async function timed(name: string, ms: number, work: () => Promise<unknown>): Promise<LoadResult> {
  const took: number[] = [];
  let errors = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    try {
      await work();
    } catch {
      errors++;
    }
    took.push(performance.now() - started);
  }
  took.sort((a, b) => a - b);
  const at = (q: number) => Math.round((took[Math.min(took.length - 1, Math.floor(q * took.length))] ?? 0) * 1000) / 1000;
  return { name, rps: took.length / (ms / 1000), p50: at(0.5), p99: at(0.99), errors, non2xx: 0 };
}

/** Completions a second of `work` on `lanes` lanes for `ms`. */
async function throughput(name: string, lanes: number, ms: number, work: () => Promise<unknown>): Promise<LoadResult> {
  let done = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (Date.now() < end) {
        await work();
        done++;
      }
    }),
  );
  return { name, rps: done / (ms / 1000), p50: 0, p99: 0, errors: 0, non2xx: 0 };
}

/** The same code in `node:vm`, a fresh context a run, `ins` bound to the same host calls. */
function vmRun(code: string, host: HostApi, timeoutMs = limits.deadlineMs): Promise<unknown> {
  const ins = {
    read: (connectionId: string, reference: string) => host({ kind: 'read', connectionId, reference }, new AbortController().signal),
    write: (connectionId: string, reference: string, value: unknown) =>
      host({ kind: 'write', connectionId, reference, value }, new AbortController().signal),
  };
  const context = vm.createContext({ ins });
  return new vm.Script(`(async function () {${code}\n})()`).runInContext(context, { timeout: timeoutMs }) as Promise<unknown>;
}

const noHost: HostApi = async () => null;
const trivial = 'return 1';
const quickjs = (code: string, host: HostApi = noHost, deadlineMs = limits.deadlineMs) =>
  pool.run({ code, limits: { ...limits, deadlineMs }, state: null }, host);

// The device and its connection, and a script identity for the plant calls.
const editor = await signIn(p, { role: 'editor' });
const device = await liveConnection(p, sim.port, { editor });
await device.connect();
const s = await scriptsApi(p, editor);
const scriptId = randomUUID();
const rcw = `const { value } = await ins.read(${JSON.stringify(device.id)}, "SIMLD0/GGIO1.AnIn1.mag.f[MX]");
await ins.write(${JSON.stringify(device.id)}, "SIMLD0/GGIO1.SPCSO2.sboTimeout[CF]", Math.round(value * 1000) + 1);
return value;`;
const plant = () => {
  const deadlineAt = Date.now() + limits.deadlineMs;
  return plantApi(p.proc.bus, { space: 'default', id: scriptId, name: 'bench' }, () => deadlineAt);
};
for (const r of [await quickjs(rcw, plant()), await vmRun(rcw, plant())])
  if ((r as { outcome?: string }).outcome && (r as { outcome: string }).outcome !== 'ok')
    throw new Error(`read → compute → write: ${JSON.stringify(r)}`);

// 100 periodic scripts of the platform's own config service, every 100 ms: scheduled once, measured in windows.
const scheduled: string[] = [];
for (let i = 0; i < 100; i++) scheduled.push(await s.create(trivial, { type: 'Periodic', period: 100, log: false }));
let ran = 0;
const counting = p.proc.bus.subscribe(configEvents.scriptRan.subject(), () => void ran++);

/** Scheduled runs a second over a window: all 100 scripts scheduled for it, then unscheduled. */
async function scheduledRuns(): Promise<LoadResult> {
  await Promise.all(scheduled.map((id) => s.api('POST', `/${id}/schedule`)));
  await new Promise((r) => setTimeout(r, 1000));
  const from = ran;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const rps = (ran - from) / seconds;
  await Promise.all(scheduled.map((id) => s.api('POST', `/${id}/unschedule`)));
  await new Promise((r) => setTimeout(r, 500));
  return { name: 'scheduled', rps, p50: 0, p99: 0, errors: 0, non2xx: 0 };
}

/** Wall time from the deadline to the answer, for an endless loop with a 200 ms deadline. */
async function killLatency(name: string, run: () => Promise<unknown>): Promise<LoadResult> {
  const overshoot: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await Promise.resolve()
      .then(run)
      .catch(() => undefined);
    overshoot.push(performance.now() - started - 200);
  }
  overshoot.sort((a, b) => a - b);
  return { name, rps: 0, p50: Math.round(overshoot[2]! * 10) / 10, p99: Math.round(overshoot[4]! * 10) / 10, errors: 0, non2xx: 0 };
}

// Warm both engines.
for (let i = 0; i < 50; i++) {
  await quickjs(trivial);
  await vmRun(trivial, noHost);
}

const ms = seconds * 1000;
const [overheadQ, overheadV, rateQ, rateV, sched, killQ, killV, rcwQ, rcwV] = await interleave(benchRounds, [
  () => timed('overhead, QuickJS', ms, () => quickjs(trivial)),
  () => timed('overhead, node:vm', ms, () => vmRun(trivial, noHost)),
  () => throughput('pool, QuickJS', workers * 2, ms, () => quickjs(trivial)),
  () => throughput('pool, node:vm', 1, ms, () => vmRun(trivial, noHost)),
  scheduledRuns,
  () => killLatency('kill, QuickJS', () => quickjs('for (;;) {}', noHost, 200)),
  () => killLatency('kill, node:vm', () => vmRun('for (;;) {}', noHost, 200)),
  () => timed('read → compute → write, QuickJS', ms, () => quickjs(rcw, plant())),
  () => timed('read → compute → write, node:vm', ms, () => vmRun(rcw, plant())),
]);
counting.unsubscribe();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
const rows: [string, string, string, string][] = [
  [
    'per-run overhead, trivial script (ms, p50; p99)',
    `${median(overheadQ!.map((r) => r.p50)).toFixed(2)}; ${median(overheadQ!.map((r) => r.p99)).toFixed(2)}`,
    `${median(overheadV!.map((r) => r.p50)).toFixed(2)}; ${median(overheadV!.map((r) => r.p99)).toFixed(2)}`,
    '≤ 2',
  ],
  [
    `trivial runs a second, ${workers} workers (pool alone; node:vm on the main thread)`,
    `${Math.round(median(rateQ!.map((r) => r.rps)))} (${range(
      rateQ!.map((r) => r.rps),
      0,
    )})`,
    `${Math.round(median(rateV!.map((r) => r.rps)))} (${range(
      rateV!.map((r) => r.rps),
      0,
    )})`,
    '',
  ],
  [
    'trivial scheduled runs a second (100 scripts × 10/s offered; leases, store, records)',
    `${Math.round(median(sched!.map((r) => r.rps)))} (${range(
      sched!.map((r) => r.rps),
      0,
    )})`,
    '–',
    '≥ 500',
  ],
  [
    'deadline (200 ms) to a stopped endless loop (ms past the deadline, median; worst)',
    `${median(killQ!.map((r) => r.p50)).toFixed(1)}; ${Math.max(...killQ!.map((r) => r.p99)).toFixed(1)}`,
    `${median(killV!.map((r) => r.p50)).toFixed(1)}; ${Math.max(...killV!.map((r) => r.p99)).toFixed(1)}`,
    '≤ 50',
  ],
  [
    'read → compute → write on the simulator (ms, p50; p99)',
    `${median(rcwQ!.map((r) => r.p50)).toFixed(2)}; ${median(rcwQ!.map((r) => r.p99)).toFixed(2)}`,
    `${median(rcwV!.map((r) => r.p50)).toFixed(2)}; ${median(rcwV!.map((r) => r.p99)).toFixed(2)}`,
    '',
  ],
];
console.log(`### Scripts (${benchRounds} interleaved rounds of ${seconds} s, ${p.mode})\n`);
console.log('| measure | QuickJS sandbox | node:vm (unsafe anchor) | goal |');
console.log('|---|---:|---:|---:|');
for (const [what, q, v, goal] of rows) console.log(`| ${what} | ${q} | ${v} | ${goal} |`);

await pool.stop();
await p.stop();
await sim.stop();
