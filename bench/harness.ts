import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import autocannon from 'autocannon';

/** One measured load run. */
export type LoadResult = { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number };

/** Runs a bounded load against a loopback URL (fixed duration, fixed connections). */
export async function load(
  name: string,
  url: string,
  options: { connections?: number; seconds?: number; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 32,
    duration: options.seconds ?? 5,
    headers: options.headers,
    method: options.method ?? 'GET',
    body: options.body,
    // `[<id>]` in a body becomes a fresh id per request, so creates do not collide on unique names.
    idReplacement: options.body?.includes('[<id>]') ?? false,
  });
  return {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts a TypeScript entry point in its own process (tsx), with the given environment. */
export function startProcess(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Waits until a URL answers 200. */
export async function waitReady(url: string, timeoutMs = 60000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready in ${timeoutMs} ms`);
}

/** Stops a child process and waits for it. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
  await exited;
  clearTimeout(timer);
}

/** Prints results as a table, each as a ratio of throughput to the baseline. */
export function table(title: string, baseline: LoadResult, rows: LoadResult[]): string {
  const lines = [
    `### ${title}`,
    '',
    '| case | req/s | p50 ms | p99 ms | errors | ratio to baseline |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of [baseline, ...rows]) {
    const ratio = r === baseline ? '1.00' : (r.rps / baseline.rps).toFixed(2);
    lines.push(`| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors + r.non2xx} | ${ratio} |`);
  }
  return lines.join('\n');
}

/** Runs `work` on `concurrency` lanes for `ms`; answers completions per second. */
export async function perSecond(concurrency: number, ms: number, work: () => Promise<unknown>): Promise<number> {
  const end = Date.now() + ms;
  let done = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await work();
      done++;
    }
  }));
  return done / (ms / 1000);
}
