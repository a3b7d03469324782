import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { denoBinary, denoRunArgs, freePort, waitReady } from '@scada/testkit/processes';

export { freePort, waitReady };

/**
 * One measured load run. `cpuMs` is the server's CPU time per request, when the run was told how to read
 * it: on a machine shared with other work, throughput follows the neighbours, the CPU a request costs
 * much less so.
 */
export type LoadResult = {
  name: string;
  rps: number;
  /** Requests answered in a run of `load` (`rps` is rounded, and the run's length is the generator's own). */
  total?: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  cpuMs?: number;
};

/** Load options: bounded duration and connections; `cpu` reads the server's cumulative CPU milliseconds. */
export type LoadOptions = {
  connections?: number;
  seconds?: number;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** A sequence of requests each connection sends in turn, paths relative to the URL (a read/write mix). */
  requests?: { method: 'GET' | 'PUT' | 'POST'; path: string; headers?: Record<string, string>; body?: string }[];
  cpu?: () => number;
};

/**
 * Runs a bounded load against a loopback URL (fixed duration, fixed connections). The load generator
 * runs on a thread of its own, so a server in this process (measured by `mainThreadCpuMs`) is not
 * charged for it.
 */
export async function load(name: string, url: string, options: LoadOptions = {}): Promise<LoadResult> {
  const { cpu, ...rest } = options;
  const cpuBefore = cpu?.();
  const result = await new Promise<{ rps: number; total: number; p50: number; p99: number; errors: number; non2xx: number }>(
    (resolve, reject) => {
      const worker = new Worker(new URL('./load_worker.mjs', import.meta.url), { workerData: { url, ...rest } });
      worker.once('message', resolve);
      worker.once('error', reject);
    },
  );
  const cpuMs =
    cpu && cpuBefore !== undefined && result.total > 0 ? Math.round(((cpu() - cpuBefore) / result.total) * 1000) / 1000 : undefined;
  return {
    name,
    rps: result.rps,
    total: result.total,
    p50: result.p50,
    p99: result.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    cpuMs,
  };
}

/** Milliseconds of CPU a process has used (user and system), from /proc; 0 where there is none. */
export function processCpuMs(pid: number): number {
  return cpuMsOf(`/proc/${pid}/stat`);
}

/** Milliseconds of CPU this process's main thread has used: the server, when the load runs on a worker. */
export function mainThreadCpuMs(): number {
  return cpuMsOf(`/proc/self/task/${process.pid}/stat`);
}

function cpuMsOf(statFile: string): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in ticks of 10 ms.
    const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * Deno's run arguments with more V8 flags: added to the `--v8-flags=` argument already there (Deno would
 * take a second one too, but one list reads as what runs), or as one of their own.
 */
export function withV8Flags(args: string[], flags: string[]): string[] {
  if (flags.length === 0) return args;
  const at = args.findIndex((a) => a.startsWith('--v8-flags='));
  if (at < 0) return [...args.slice(0, 1), `--v8-flags=${flags.join(',')}`, ...args.slice(1)];
  return args.map((a, i) => (i === at ? `${a},${flags.join(',')}` : a));
}

/**
 * Starts a TypeScript entry point in its own process (Node through tsx, or Deno as `deno task start` runs
 * main.ts, with `denoV8Flags` added to the start task's own), with this process's environment and `env`
 * over it; a variable set to `undefined` in `env` is left out (an embedded platform must not inherit the
 * `DATABASE_URL` the benchmark was given for its other cases).
 */
export function startProcess(
  entry: string,
  env: Record<string, string | undefined>,
  runtime: 'node' | 'deno' = 'node',
  denoV8Flags: string[] = [],
): ChildProcess {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const profile = process.env.BENCH_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF_DIR] : [];
  return spawn(
    runtime === 'deno' ? denoBinary : process.execPath,
    runtime === 'deno' ? [...withV8Flags(denoRunArgs, denoV8Flags), entry] : [...profile, '--import', 'tsx', entry],
    {
      cwd: new URL('..', import.meta.url).pathname,
      env: merged,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

/** Stops a child process and waits for it. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  // Ended already: by itself, or by a signal (then its exit code stays null).
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
  await exited;
  clearTimeout(timer);
}

/**
 * Prints results as a table, each as a ratio of throughput to the baseline; with the server's CPU per
 * request when it was measured, and the ratio of the baseline's CPU per request to each row's.
 */
export function table(title: string, baseline: LoadResult, rows: LoadResult[]): string {
  const withCpu = baseline.cpuMs !== undefined;
  const lines = [
    `### ${title}`,
    '',
    `| case | req/s | p50 ms | p99 ms | errors | ratio to baseline |${withCpu ? ' CPU ms/req | CPU ratio |' : ''}`,
    `|---|---:|---:|---:|---:|---:|${withCpu ? '---:|---:|' : ''}`,
  ];
  for (const r of [baseline, ...rows]) {
    const ratio = r === baseline ? '1.00' : (r.rps / baseline.rps).toFixed(2);
    const cpu = !withCpu ? '' : r.cpuMs ? ` ${r.cpuMs.toFixed(3)} | ${((baseline.cpuMs ?? 0) / r.cpuMs).toFixed(2)} |` : ' – | – |';
    lines.push(`| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors + r.non2xx} | ${ratio} |${cpu}`);
  }
  return lines.join('\n');
}

/** How many rounds interleaved benchmarks run (`BENCH_ROUNDS`, 3 unless told). */
export const benchRounds = ((n: number) => (Number.isInteger(n) && n >= 1 ? n : 3))(Number(process.env.BENCH_ROUNDS ?? 3));

/**
 * Measures every case once a round, in turn, for `rounds` rounds: on a machine whose speed drifts by
 * tens of percent from one minute to the next, a baseline measured right before its cases meets the
 * same machine they do. Every other round takes the cases in reverse, so that no case always follows
 * the same one (a burst of inserts leaves the store work to do for whatever comes next). Answers each
 * case's results in round order.
 */
export async function interleave(rounds: number, cases: (() => Promise<LoadResult>)[]): Promise<LoadResult[][]> {
  const results = cases.map((): LoadResult[] => []);
  const order = [...cases.keys()];
  for (let round = 0; round < rounds; round++) {
    for (const i of round % 2 === 0 ? order : [...order].reverse()) results[i]!.push(await (cases[i] as () => Promise<LoadResult>)());
  }
  return results;
}

/** The median of some numbers (the mean of the middle two of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Prints interleaved rounds as a table: per case the median of its rounds (the worst p99), and its ratio
 * to the baseline of the same round, as the median over rounds and their range. CPU per request and its
 * ratio likewise, when measured.
 */
export function roundsTable(title: string, baseline: LoadResult[], rows: LoadResult[][]): string {
  // A round whose CPU could not be read (0: the process was gone) counts for neither side.
  const cpuKnown = (r: LoadResult | undefined): r is LoadResult & { cpuMs: number } => r?.cpuMs !== undefined && r.cpuMs > 0;
  const withCpu = baseline.some(cpuKnown);
  const lines = [
    `### ${title}`,
    '',
    `| case | req/s | p50 ms | p99 ms | errors | ratio to baseline | range over rounds |${withCpu ? ' CPU ms/req | CPU ratio |' : ''}`,
    `|---|---:|---:|---:|---:|---:|---:|${withCpu ? '---:|---:|' : ''}`,
  ];
  for (const runs of [baseline, ...rows]) {
    const ratios = runs.map((r, i) => r.rps / (baseline[i] as LoadResult).rps);
    const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
    const cpuMs = runs.filter(cpuKnown).map((r) => r.cpuMs);
    const cpuRatios = runs.flatMap((r, i) => {
      const base = baseline[i];
      return cpuKnown(r) && cpuKnown(base) ? [base.cpuMs / r.cpuMs] : [];
    });
    const cpu = !withCpu
      ? ''
      : cpuMs.length > 0 && cpuRatios.length > 0
        ? ` ${median(cpuMs).toFixed(3)} | ${median(cpuRatios).toFixed(2)} |`
        : ' – | – |';
    const errors = runs.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
    lines.push(
      `| ${runs[0]?.name} | ${Math.round(median(runs.map((r) => r.rps)))} | ${median(runs.map((r) => r.p50))} | ` +
        `${Math.max(...runs.map((r) => r.p99))} | ${errors} | ${median(ratios).toFixed(2)} | ${range} |${cpu}`,
    );
  }
  return lines.join('\n');
}

/** Runs `work` on `concurrency` lanes for `ms`; answers completions per second. */
export async function perSecond(concurrency: number, ms: number, work: () => Promise<unknown>): Promise<number> {
  const end = Date.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await work();
        done++;
      }
    }),
  );
  return done / (ms / 1000);
}
