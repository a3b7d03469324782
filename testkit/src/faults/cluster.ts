/**
 * The platform as a cluster on one machine: every service in two replicas of its own process and two
 * gateways, all on one NATS server and one PostgreSQL cluster, each process started as its image starts
 * it (plain `node` on the part's own bundle, built first when `dist/` is missing or older than the
 * sources). Replicas can be killed, stopped and started again.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleCommand, ensureBuilt } from '../../../tools/build/build.ts';
import { freePort } from '../processes.ts';
import { waitForPort } from './servers.ts';
import { roleBusKeys } from '../bus_keys.ts';

const root = new URL('../../..', import.meta.url).pathname;

/** One process of the cluster. */
export type Replica = {
  /** `gateway-1`, `config-2`, … */
  name: string;
  service: 'gateway' | 'auth' | 'config' | 'protocol' | 'history';
  /** The HTTP port (gateways) or the probe port (services). */
  port: number;
  child: ChildProcess | null;
  /** Lines the process wrote to stderr (kept short), for a failure's explanation. */
  stderr: string[];
};

export type Cluster = {
  replicas: Replica[];
  gateways: Replica[];
  /** Starts (or starts again) a replica and waits until its readiness probe answers 200. */
  start(replica: Replica): Promise<void>;
  /** Sends a signal and waits for the process to end. */
  signal(replica: Replica, signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null>;
  /** Waits until every replica answers its readiness probe. */
  ready(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
};

export type ClusterOptions = {
  natsUrl: string;
  databaseUrl: string;
  adminPassword: string;
  busTimeoutMs: number;
  shutdownGraceMs: number;
  /** Replicas of each service the cluster has (two of each unless said). */
  counts?: Partial<Record<Replica['service'], number>>;
  /** Names of the replicas to start now (all unless said); the others wait for `start`. */
  startNow?: string[];
  /** More settings for every replica. */
  env?: Record<string, string>;
};

/** Starts two replicas of every service and two gateways; the first auth replica alone first (it bootstraps). */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  await ensureBuilt();
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-faults-'));
  // The key that seals signing keys and TOTP secrets, which PostgreSQL mode needs: one file all replicas mount.
  const secretsKeyFile = join(dataDir, 'secrets.key');
  await writeFile(secretsKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const replicas: Replica[] = [];
  for (const service of ['auth', 'config', 'protocol', 'history', 'gateway'] as const) {
    for (let n = 1; n <= (options.counts?.[service] ?? 2); n++)
      replicas.push({ name: `${service}-${n}`, service, port: await freePort(), child: null, stderr: [] });
  }
  const initial = replicas.filter((r) => !options.startNow || options.startNow.includes(r.name));
  // Each role signs its bus contexts with a key of its own, as a deployment does.
  const busKeys = roleBusKeys({ gateway: ['gateway'], auth: ['auth'], config: ['config'], protocol: ['protocol'], history: ['history'] });
  const env = (r: Replica): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'production',
    SERVICES: r.service,
    NATS_URL: options.natsUrl,
    ...busKeys[r.service],
    DATABASE_URL: options.databaseUrl,
    SECRETS_KEY_FILE: secretsKeyFile,
    DATA_DIR: join(dataDir, r.name),
    ADMIN_PASSWORD: options.adminPassword,
    LOG_LEVEL: 'warn',
    BUS_TIMEOUT_MS: String(options.busTimeoutMs),
    SHUTDOWN_GRACE_MS: String(options.shutdownGraceMs),
    // Gateways keep taking connections for a moment after readiness fails, as behind a balancer that
    // follows readiness (the load polls it every 100 ms).
    ...(r.service === 'gateway'
      ? { HTTP_PORT: String(r.port), HTTPS_PORT: '0', SHUTDOWN_DRAIN_MS: '500' }
      : { HEALTH_PORT: String(r.port) }),
    ...options.env,
  });
  const probe = async (r: Replica, timeoutMs: number) => {
    await waitForPort(r.port, timeoutMs);
    const end = Date.now() + timeoutMs;
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${r.port}/readyz`).then(
        (res) => res.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > end) throw new Error(`${r.name} is not ready after ${timeoutMs} ms: ${r.stderr.slice(-5).join(' | ')}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  const start = async (r: Replica) => {
    const child = spawn(process.execPath, bundleCommand(r.service), { cwd: root, env: env(r), stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (d: Buffer) => {
      r.stderr.push(String(d).slice(0, 500));
      if (r.stderr.length > 20) r.stderr.shift();
    });
    r.child = child;
    await probe(r, 60_000);
  };
  const signal = async (r: Replica, sig: 'SIGKILL' | 'SIGTERM') => {
    const child = r.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    child.kill(sig);
    const code = await exited;
    r.child = null;
    return code;
  };
  const cluster: Cluster = {
    replicas,
    gateways: replicas.filter((r) => r.service === 'gateway'),
    start,
    signal,
    ready: async (timeoutMs) => void (await Promise.all(replicas.filter((r) => r.child).map((r) => probe(r, timeoutMs)))),
    stop: async () => {
      await Promise.all(replicas.map((r) => signal(r, 'SIGKILL')));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await start(initial[0]);
    await Promise.all(initial.slice(1).map(start));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
