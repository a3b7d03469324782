import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { testHashing } from './settings.ts';

const root = new URL('../..', import.meta.url).pathname;

/**
 * The runtime the process tests start the platform with: Node through tsx as `npm start` does, or Deno as
 * `deno task start` does when `PLATFORM_RUNTIME=deno` (CI runs the process tests both ways).
 */
export const platformRuntime: 'node' | 'deno' = process.env.PLATFORM_RUNTIME === 'deno' ? 'deno' : 'node';

/** Deno as the project installs it (the `deno` package), and the permissions `deno task start` runs main.ts with. */
export const denoBinary = `${root}node_modules/deno/deno`;
/**
 * The arguments before the entry point with which `deno task start` runs main.ts (permissions and V8
 * flags), read from deno.json's start task: what the tests and benchmarks start is what users start.
 */
export const denoRunArgs: string[] = startTaskArgs();

function startTaskArgs(): string[] {
  const { tasks } = JSON.parse(readFileSync(`${root}deno.json`, 'utf8')) as { tasks: { start: string } };
  const step = tasks.start
    .split('&&')
    .map((command) => command.trim().split(/\s+/))
    .find((words) => words.at(-1) === 'main.ts');
  if (!step) throw new Error("deno.json's start task runs no main.ts");
  return step.slice(1, -1);
}

/** How the platform is started by its users on the runtime under test: `npm start`, or `deno task start`. */
export const startCommand: [string, string[]] = platformRuntime === 'deno' ? [denoBinary, ['task', 'start']] : ['npm', ['start']];

/** A platform process started as `npm start` starts it. */
export type MainProcess = { child: ChildProcess; exited: Promise<number | null>; output(): { stdout: string; stderr: string } };

/**
 * Runs main.ts as `npm start` does (or another entry, such as a service's own `src/main.ts`), with exactly
 * the given environment on top of PATH.
 */
export function startMain(env: Record<string, string>, entry = 'main.ts'): MainProcess {
  const [command, args] =
    platformRuntime === 'deno' ? [denoBinary, [...denoRunArgs, entry]] : [process.execPath, ['--import', 'tsx', entry]];
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...testHashing, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  // 'close' waits for the output pipes to drain as well, which 'exit' does not.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
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

/** Polls a URL until `accept` says yes or the time is up; answers the last response. */
export async function waitFor(
  url: string,
  timeoutMs: number,
  accept: (res: Response) => boolean | Promise<boolean> = () => true,
): Promise<Response> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if ((await accept(res)) || Date.now() > end) return res;
    } catch (err) {
      if (Date.now() > end) throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
