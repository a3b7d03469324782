/**
 * A NATS server and a PostgreSQL cluster of the fault suite's own, on free loopback ports, that it may
 * stop and start at will without disturbing the servers other tests use. Both are the real programs the
 * machine has (`nats-server`, PostgreSQL's `initdb` and `pg_ctl`); nothing is simulated.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../processes.ts';

const run = promisify(execFile);

/** A server the suite controls: `stop` takes it away (as a crash would), `start` brings it back. */
export type ControlledServer = { url: string; port: number; start(): Promise<void>; stop(): Promise<void>; remove(): Promise<void> };

/** The folder of PostgreSQL's programs (the newest installed major version), or null without one. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? join(root, versions[versions.length - 1], 'bin') : null;
}

/** True when `nats-server` is on the PATH. */
export async function natsServerAvailable(): Promise<boolean> {
  try {
    await run('nats-server', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once something accepts TCP connections on the port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > end) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A JetStream-enabled NATS server on a free port, its store in a temporary folder. `stop` kills it. */
export async function startNats(): Promise<ControlledServer> {
  const dir = await mkdtemp(join(tmpdir(), 'scada-faults-nats-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    start,
    stop,
    remove: async () => (await stop(), await rm(dir, { recursive: true, force: true })),
  };
}

/**
 * A throwaway PostgreSQL cluster (trust authentication on loopback) on a free port. As root, its programs
 * run as the `postgres` user, since PostgreSQL refuses to run as root. `stop` is an immediate shutdown,
 * which is what a crash looks like to the clients: connections cut, recovery from the WAL at the next start.
 */
export async function startPostgres(): Promise<ControlledServer> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL programs not found under /usr/lib/postgresql');
  const dir = await mkdtemp(join(tmpdir(), 'scada-faults-pg-'));
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args]) : run(join(bin, program), args);
  const data = join(dir, 'data');
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  const start = async () => {
    await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  };
  const stop = async () => {
    await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    remove: async () => (await stop(), await rm(dir, { recursive: true, force: true })),
  };
}
