/**
 * NATS servers of a test's own, started on loopback on free ports, for what the shared server cannot show:
 * a server that is not up yet, goes away, or has settings of its own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether `nats-server` is on the PATH (tests that start their own servers skip without it). */
export const hasServer = spawnSync('nats-server', ['--version']).status === 0;

/** A TCP port free on loopback now. */
export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  return port;
}

/** Starts nats-server on loopback; `dispose()` stops it and removes its configuration. */
export async function startServer(port: number, extra = ''): Promise<{ server: ChildProcess; dispose(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  const conf = join(dir, 'server.conf');
  await writeFile(conf, `listen: "127.0.0.1:${port}"\n${extra}\n`);
  const server = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  return {
    server,
    dispose: async () => {
      await stopServer(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Kills a server (no goodbye to its clients) and waits for it to exit. */
export async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  server.kill('SIGKILL');
  await once(server, 'exit');
}

/** Rejects when a promise takes longer than `ms`, so no test waits on a server forever. */
export function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
