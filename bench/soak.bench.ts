/**
 * The embedded platform steady on a busy machine (`npm run bench soak`): the all-in-one bundle in a process
 * of its own on a new data folder, the simulator in another process of its own (`soak_device.ts`)
 * reporting a counter `BENCH_SOAK_RATE` (5,000) times a second through a buffered report block into the
 * live channel and the history, two `/api/live` clients following the connection's values, a history read
 * every second, a sign-in every two seconds, and two busy-loop processes competing for the cores, for
 * `BENCH_SECONDS` (60; 600 for the issue's ten minutes). The sign-ins come from 8 loopback addresses
 * (127.0.0.2 to .9) in turn, each one's far inside the sign-in rate limit (60 a minute, 8 in flight an
 * address), so that "sign-ins answered" measures the platform's answers, not the bench's own address
 * tripping 429.
 *
 * Reports the platform's event-loop delay: its p99 over the run, from the platform's histogram of it
 * (`event_loop_delay_seconds`, counted since its start) at the first and the last scrape, and
 * prom-client's `nodejs_eventloop_lag_p99_seconds` from the same `/metrics`, scraped every 5 s, so each
 * scrape is the p99 of the 5 s before it: the median and the worst window), leases lost (its "lease lost" log lines), the session's drops (a state other than `connected`
 * when polled each second), values lost (counters reported and not received by the first live client, and
 * not in the history of the run's last second; a live client whose stream ends resumes with Last-Event-ID
 * as a browser's EventSource does, and the resumes are counted; and the events the history's consumer
 * dropped once a whole in-process queue behind, from its log lines), and sign-ins answered (200) of those asked.
 * Goal: p99 ≤ 50 ms, and none lost, dropped or unanswered.
 *
 * For looking into it: `BENCH_SOAK_BUSY` busy loops (2), `BENCH_SOAK_ASIDES=0` (no history reads or sign-ins), and `BENCH_SOAK_NODE_ARGS`, flags given to the
 * platform's node after the image's own (so `--max-semi-space-size=8` there is the one it runs with) (`--cpu-prof --cpu-prof-dir=/tmp/prof` profiles it; the profile
 * is written when it stops at the end of the run), `BENCH_SOAK_LOG`, a file the platform's log lines are
 * copied to, `BENCH_SOAK_DEVICE_ARGS` flags for the device's node (the same `--cpu-prof …`), `BENCH_SOAK_DIST` another build's `dist/` folder to run (for before/after pairs in one session).
 * Reports the CPU the device's process used while it reported and the platform's (its store worker
 * included) from then until the first live client had every value, each per 10,000 values.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { liveConnection, until } from '@scada/testkit/live';
import { histogramOf } from '@scada/testkit/metrics';
import { testAdminPassword, type TestPlatform } from '@scada/testkit/platform';
import { FIXTURE_SCL } from '@scada/testkit/simulator_fixture';
import { bundleCommand, ensureBuilt, repoRoot } from '../tools/build/build.ts';
import { freePort, waitReady } from './harness.ts';

/** The platform's `event_loop_delay_seconds` histogram as one scrape shows it: cumulative counts by upper bound (ms). */
type DelayHistogram = { bounds: number[]; cumulative: number[]; count: number };

function delayHistogram(text: string): DelayHistogram | undefined {
  const h = histogramOf(text, 'event_loop_delay_seconds');
  if (!h) return undefined;
  const finite = [...h.buckets].filter(([le]) => le !== '+Inf');
  return { bounds: finite.map(([le]) => Number(le) * 1000), cumulative: finite.map(([, n]) => n), count: h.count };
}

/**
 * The quantile `q` of the samples counted between two scrapes: the bucket it falls in, and an estimate
 * inside it by linear interpolation (as Prometheus's `histogram_quantile` makes one).
 */
function quantileBetween(a: DelayHistogram, b: DelayHistogram, q: number) {
  const count = b.count - a.count;
  const rank = q * count;
  const at50 = b.bounds.indexOf(50);
  const past50 = at50 < 0 ? NaN : count - (b.cumulative[at50]! - a.cumulative[at50]!);
  let below = 0;
  for (let i = 0; i < b.bounds.length; i++) {
    const upTo = b.cumulative[i]! - a.cumulative[i]!;
    if (upTo >= rank) {
      const from = i === 0 ? 0 : b.bounds[i - 1]!;
      const to = b.bounds[i]!;
      const inside = upTo - below;
      return { from, to, estimate: inside > 0 ? from + ((to - from) * (rank - below)) / inside : to, count, past50 };
    }
    below = upTo;
  }
  return { from: b.bounds.at(-1)!, to: Number.POSITIVE_INFINITY, estimate: Number.POSITIVE_INFINITY, count, past50 };
}

const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const rate = Number(process.env.BENCH_SOAK_RATE ?? 5000);
const busyLoops = Number(process.env.BENCH_SOAK_BUSY ?? 2);
/** `BENCH_SOAK_ASIDES=0`: no history reads or sign-ins beside the values, so the CPU counted is the ingest path's. */
const asides = process.env.BENCH_SOAK_ASIDES !== '0';
const storeThread = process.env.EMBEDDED_STORE_THREAD ?? 'auto';
const loadBefore = loadavg()[0]?.toFixed(1);
const nodeArgs = (process.env.BENCH_SOAK_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== '');
const deviceArgs = (process.env.BENCH_SOAK_DEVICE_ARGS ?? '').split(/\s+/).filter((a) => a !== '');
const D = 'SIMLD0';
/** Where the sign-ins come from, in turn: loopback addresses of their own, each well inside the rate limit. */
const signInAddresses = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);

/** A sign-in from `localAddress`: its status, or null when none came within 30 s. */
function signIn(url: string, localAddress: string, body: string): Promise<number | null> {
  return new Promise((done) => {
    const req = request(
      `${url}/login`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? null));
        res.on('error', () => done(null));
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => done(null));
    req.end(body);
  });
}

/**
 * CPU seconds (user + system) a process has used so far, from `/proc/<pid>/stat` (its threads included: the
 * platform's store worker counts); NaN where there is no `/proc`.
 */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command's name may hold spaces: the fields counted from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds a process's threads have used so far, by thread name (`/proc/<pid>/task/<tid>/stat`), its main
 * thread apart as `main`: which of them is short of the cores shows in the report. Empty where there is no
 * `/proc`. A thread that ended is not counted (the store worker and the pools run for the process's life).
 */
function threadSeconds(pid: number | undefined): Map<string, number> {
  const by = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      by.set(name, (by.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    }
  } catch {
    // no /proc, or the process ended
  }
  return by;
}

/** The device in a process of its own (`soak_device.ts`): its port, the last counter it set, and how to steer it. */
async function startDevice(): Promise<{
  port: number;
  pid: number | undefined;
  readonly last: number;
  start(rate: number, max: number): void;
  stop(): Promise<number>;
  exit(): Promise<void>;
}> {
  const proc = spawn(process.execPath, [...deviceArgs, '--import', 'tsx', new URL('./soak_device.ts', import.meta.url).pathname], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let last = 0;
  let stopped: ((n: number) => void) | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`the device process ended (${code})`)));
    proc.on('message', (msg: { port?: number; last?: number; stopped?: number }) => {
      if (msg.port !== undefined) resolve(msg.port);
      if (msg.last !== undefined) last = msg.last;
      if (msg.stopped !== undefined) {
        last = msg.stopped;
        stopped?.(msg.stopped);
      }
    });
  });
  return {
    port,
    pid: proc.pid,
    get last() {
      return last;
    },
    start: (rate, max) => proc.send({ start: { rate, max } }),
    stop: () =>
      new Promise<number>((resolve) => {
        stopped = resolve;
        proc.send({ stop: true });
      }),
    exit: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.send({ exit: true });
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Follows `/api/live` for one connection's values, keeping which counters arrived (a bitmap) and how many
 * events. As a browser's `EventSource` does, a stream that ends (dropped as slow, or cut) is opened again
 * with `Last-Event-ID`, the id of the last event it had whole, so that the platform resumes after it;
 * `resumes` counts those, `ends` the reasons the platform gave in a last `event: end`.
 */
async function follow(
  url: string,
  headers: Record<string, string>,
  seen: Uint8Array | null,
): Promise<{ events: () => number; resumes: () => number; ends: Map<string, number>; close(): void }> {
  const abort = new AbortController();
  const open = async (lastId: string) => {
    const res = await fetch(url, {
      headers: { accept: 'text/event-stream', ...headers, ...(lastId === '' ? {} : { 'last-event-id': lastId }) },
      signal: abort.signal,
    });
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new Error(`/api/live answered ${res.status}`);
    }
    return res.body as unknown as AsyncIterable<Uint8Array>;
  };
  let events = 0;
  let resumes = 0;
  let lastId = '';
  const ends = new Map<string, number>();
  let body = await open('');
  void (async () => {
    for (;;) {
      const decoder = new TextDecoder();
      let rest = '';
      try {
        for await (const chunk of body) {
          rest += decoder.decode(chunk, { stream: true });
          const blocks = rest.split('\n\n');
          rest = blocks.pop() ?? '';
          for (const block of blocks) {
            const lines = block.split('\n');
            const id = lines.find((l) => l.startsWith('id: '));
            if (id !== undefined) lastId = id.slice(4);
            if (block.includes('event: end')) {
              const reason = (JSON.parse(lines.find((l) => l.startsWith('data: '))?.slice(6) ?? '{}') as { reason?: string }).reason;
              ends.set(String(reason), (ends.get(String(reason)) ?? 0) + 1);
              continue;
            }
            if (!block.includes('event: value')) continue;
            events++;
            if (seen === null) continue;
            const data = lines.find((l) => l.startsWith('data: '));
            const n = (JSON.parse(data?.slice(6) ?? '{}') as { value?: { mag?: { f?: number } } }).value?.mag?.f;
            if (typeof n === 'number' && n < seen.length) seen[n] = 1;
          }
        }
      } catch {
        // cut off
      }
      if (abort.signal.aborted) return;
      // Opened again after the last whole event, as an EventSource would (a second later, the retry it waits).
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        if (abort.signal.aborted) return;
        try {
          body = await open(lastId);
          resumes++;
          break;
        } catch {
          // tried again
        }
      }
    }
  })();
  return { events: () => events, resumes: () => resumes, ends, close: () => abort.abort() };
}

// `BENCH_SOAK_DIST`: a build kept elsewhere (another commit's `dist/`) to run instead, for before/after pairs.
const distDir = process.env.BENCH_SOAK_DIST;
if (distDir === undefined) await ensureBuilt();
const dataDir = await mkdtemp(join(tmpdir(), 'scada-soak-'));
const port = await freePort();
const image = bundleCommand('edge', distDir);
// The flags asked for after the image's own, so that one the image sets too (`--max-semi-space-size`) is the one asked for.
const child: ChildProcess = spawn(process.execPath, [...image.slice(0, -1), ...nodeArgs, image.at(-1)!], {
  cwd: repoRoot,
  env: {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'production',
    ADMIN_PASSWORD: testAdminPassword,
    HTTP_PORT: String(port),
    HTTPS_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    // The ten-minute run outlasts the default five minutes of the bench's access token.
    ACCESS_TOKEN_TTL_SECONDS: String(Math.max(300, seconds * 2)),
    EMBEDDED_STORE_THREAD: storeThread,
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let leasesLost = 0;
let lateRenewals = 0;
let historyDropped = 0;
const logCopy = process.env.BENCH_SOAK_LOG ? createWriteStream(process.env.BENCH_SOAK_LOG) : null;
createInterface({ input: child.stdout! }).on('line', (line) => {
  logCopy?.write(`${line}\n`);
  if (line.includes('lease lost')) leasesLost++;
  if (/renew.*late|late.*renew/i.test(line)) lateRenewals++;
  // A durable consumer (the history's) that fell a whole queue behind drops its oldest events: values lost
  // to the history anywhere in the run, not only in its last second. The log line carries the count so far.
  if (line.includes('events dropped')) historyDropped = Math.max(historyDropped, Number(/"dropped":(\d+)/.exec(line)?.[1] ?? 0));
});
const busy: ChildProcess[] = [];
// Stopped with Ctrl-C or a SIGTERM: the platform, the busy loops and the device stop too, and the data folder goes.
let interrupted = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (interrupted) return;
  interrupted = true;
  console.error(`soak: ${signal}, stopping the platform, the device and the busy loops`);
  for (const b of busy) b.kill('SIGKILL');
  void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
let device: Awaited<ReturnType<typeof startDevice>> | undefined;
const stopAll = async () => {
  for (const b of busy) b.kill('SIGKILL');
  await device?.exit().catch(() => undefined);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  await rm(dataDir, { recursive: true, force: true });
};
const sim = await startDevice();
device = sim;
const p = { url: `http://127.0.0.1:${port}` } as TestPlatform;
const closers: (() => void)[] = [];
try {
  await waitReady(`${p.url}/readyz`, 120_000);
  // The setting up is not measured: on a machine this busy a first sign-in may pass the gateway's deadline.
  const c = await until(
    'the connection is made',
    () => liveConnection(p, sim.port, { scl: FIXTURE_SCL }).catch((err: Error) => void console.error(`setting up: ${err.message}`)),
    120_000,
  );
  await c.connect();
  const enabled = await c.api('POST', '/reports', {
    rcb: `${D}/LLN0$BR$brcb`,
    triggers: ['dchg'],
    optionalFields: ['sequence-number', 'entry-id'],
  });
  if (enabled.status !== 204) throw new Error(`enabling the block answered ${enabled.status}: ${await enabled.text()}`);
  const seen = new Uint8Array(Math.ceil(rate * seconds * 1.5) + 1000);
  const liveUrl = `${p.url}/api/live?connections=${c.id}&topics=values`;
  const first = await follow(liveUrl, c.editor.headers, seen);
  const second = await follow(liveUrl, c.editor.headers, null);
  closers.push(first.close, second.close);
  for (let i = 0; i < busyLoops; i++) busy.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));

  const cpuAtStart = { platform: cpuSeconds(child.pid), device: cpuSeconds(sim.pid) };
  const threadsAtStart = threadSeconds(child.pid);
  sim.start(rate, seen.length - 1);
  const lags: number[] = [];
  let firstHistogram: DelayHistogram | undefined;
  let lastHistogram: DelayHistogram | undefined;
  let drops = 0;
  let lastState = 'connected';
  const signIns = { asked: 0, answered: 0, other: new Map<string, number>() };
  const reads = { asked: 0, answered: 0, other: new Map<string, number>() };
  const tally = (m: Map<string, number>, what: string) => m.set(what, (m.get(what) ?? 0) + 1);
  const outcomes = (m: Map<string, number>) => [...m].map(([k, n]) => `${k} × ${n}`).join(', ') || 'none';
  const ref = `${D}/GGIO1.AnIn1.mag.f[MX]`;
  const historyOf = async (fromMs: number, toMs: number) => {
    const q = new URLSearchParams({
      reference: ref,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      maxPoints: '10000',
    });
    const r = await fetch(`${p.url}/api/connections/${c.id}/history?${q}`, {
      headers: c.editor.headers,
      signal: AbortSignal.timeout(30_000),
    });
    if (r.status !== 200) {
      await r.body?.cancel();
      throw new Error(String(r.status));
    }
    return (await r.json()) as { resolution: string; points: { value: number }[] };
  };
  const every = (ms: number, f: () => Promise<void>) => {
    const timer = setInterval(() => void f().catch(() => undefined), ms);
    closers.push(() => clearInterval(timer));
  };
  every(5000, async () => {
    const text = await (await fetch(`${p.url}/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
    const m = /^nodejs_eventloop_lag_p99_seconds ([\d.e+-]+)/m.exec(text);
    if (m) lags.push(Number(m[1]) * 1000);
    const h = delayHistogram(text);
    if (h) {
      firstHistogram ??= h;
      lastHistogram = h;
    }
  });
  // A poll the platform did not answer (a 504 or 503 problem carries no state) is not a drop: counted apart.
  let pollsUnanswered = 0;
  every(1000, async () => {
    const res = await c.api('GET', '/session').catch(() => null);
    const state = res?.status === 200 ? ((await res.json()) as { state?: string }).state : undefined;
    if (res?.status !== 200) await res?.body?.cancel();
    if (state === undefined) return void pollsUnanswered++;
    if (state !== 'connected' && lastState === 'connected') drops++;
    lastState = state;
  });
  every(1000, async () => {
    if (!asides) return;
    reads.asked++;
    await historyOf(Date.now() - 60_000, Date.now()).then(
      () => reads.answered++,
      (err: Error) => tally(reads.other, err.name === 'TimeoutError' ? 'no answer in 30 s' : err.message),
    );
  });
  const signInBody = JSON.stringify({ username: 'admin', password: testAdminPassword });
  every(2000, async () => {
    if (!asides) return;
    const from = signInAddresses[signIns.asked % signInAddresses.length] as string;
    signIns.asked++;
    const status = await signIn(p.url, from, signInBody);
    if (status === 200) signIns.answered++;
    else tally(signIns.other, status === null ? 'no answer in 30 s' : String(status));
  });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const reported = await sim.stop();
  const endedAt = Date.now();
  const deviceCpu = cpuSeconds(sim.pid) - cpuAtStart.device;
  for (const b of busy) b.kill('SIGKILL');
  for (const close of closers.splice(2)) close();
  const received = () => seen.subarray(1, reported + 1).reduce((a, b) => a + b, 0);
  await until('the live client has every value', async () => received() >= reported, 60_000).catch(() => undefined);
  // The platform's CPU up to now: a starved one still works through values reported before the device stopped.
  const cpu = { platform: cpuSeconds(child.pid) - cpuAtStart.platform, device: deviceCpu };
  const threads = [...threadSeconds(child.pid)]
    .map(([name, s]) => [name, s - (threadsAtStart.get(name) ?? 0)] as const)
    .filter(([, s]) => s >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  const per10k = (s: number) => ((s / Math.max(1, reported)) * 10_000).toFixed(2);
  // The history of the run's last second (its raw values fit in one answer): every counter reported then.
  const windowStart = endedAt - 1000;
  let inHistory = 0;
  let expected = 0;
  await until(
    'the history has the last 10 s',
    async () => {
      const h = await historyOf(windowStart, endedAt + 1000).catch(() => null);
      if (h === null || h.resolution !== 'raw') return false;
      const values = new Set(h.points.map((pt) => pt.value));
      // The counters carry the device's time: the window holds a run of them, from the first counter set
      // inside it to the last one reported. Its first is the lowest found (one lost at the very start of the
      // window goes unseen); any other missing between it and the last is lost. (Until 2026-11-30 the first
      // was taken from the bench's own marks of the device's counter, up to a tenth of a second stale, and
      // counted a few hundred values set before the window as lost on a busy machine.)
      let firstInWindow = reported + 1;
      for (const v of values) if (v <= reported && v < firstInWindow) firstInWindow = v;
      // None at all: the whole second is missing.
      expected = firstInWindow > reported ? rate : reported - firstInWindow + 1;
      inHistory = [...values].filter((v) => v >= firstInWindow && v <= reported).length;
      return inHistory >= expected;
    },
    60_000,
  ).catch(() => undefined);
  const sorted = [...lags].sort((a, b) => a - b);
  const runP99 = firstHistogram && lastHistogram ? quantileBetween(firstHistogram, lastHistogram, 0.99) : undefined;
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const lines = [
    `Soak, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${seconds} s, ${rate} values/s asked, Node ${process.versions.node}, ${busyLoops} busy-loop processes, EMBEDDED_STORE_THREAD=${storeThread}${asides ? '' : ', no history reads or sign-ins'}${nodeArgs.length > 0 ? `, platform's node given ${nodeArgs.join(' ')}` : ''}, load average ${loadBefore} before / ${loadavg()[0]?.toFixed(1)} at the end`,
    '',
    '| measure | value | goal |',
    '|---|---:|---:|',
    `| values reported by the device | ${reported} (${Math.round(reported / seconds)}/s) | ${rate}/s |`,
    `| event-loop delay p99 over the run, from the histogram between the first and last scrape (the bucket it falls in) | ${runP99 ? `${runP99.estimate.toFixed(1)} ms (${runP99.from}–${runP99.to} ms; ${runP99.past50} of ${runP99.count} samples past 50 ms)` : 'no histogram'} | ≤ 50 ms |`,
    `| event-loop delay p99, median of 5 s windows / worst window | ${at(0.5).toFixed(1)} / ${(sorted.at(-1) ?? NaN).toFixed(1)} ms | |`,
    `| leases lost ("lease lost" lines) / late renewals said | ${leasesLost} / ${lateRenewals} | 0 |`,
    `| session dropped (polled each second; polls not answered 200 apart) | ${drops} (${pollsUnanswered} unanswered) | 0 |`,
    `| values lost, first live client | ${reported - received()} of ${reported} (second client: ${second.events()} events) | 0 |`,
    `| live streams opened again with Last-Event-ID: first / second client (ends said: ${outcomes(first.ends)}) | ${first.resumes()} / ${second.resumes()} | |`,
    `| values lost, history of the last second / events its consumer dropped in the run | ${expected - inHistory} of ${expected} / ${historyDropped} | 0 |`,
    `| history reads answered 200 | ${reads.answered} of ${reads.asked} (others: ${outcomes(reads.other)}) | all |`,
    `| sign-ins answered 200 | ${signIns.answered} of ${signIns.asked} (others: ${outcomes(signIns.other)}) | all |`,
    `| /metrics scrapes answered | ${lags.length} of ${Math.floor(seconds / 5)} | all |`,
    `| CPU, platform process (its threads included, until the first live client has every value) / device process | ${cpu.platform.toFixed(1)} s (${per10k(cpu.platform)} s per 10,000 values) / ${cpu.device.toFixed(1)} s (${per10k(cpu.device)}) | |`,
    `| the platform's CPU by thread, s per 10,000 values (share of a core over the run) | ${threads.map(([name, s]) => `${name} ${per10k(s)} (${(s / seconds).toFixed(2)})`).join(', ')} | |`,
  ];
  console.log(lines.join('\n'));
} finally {
  for (const close of closers) close();
  await stopAll();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
