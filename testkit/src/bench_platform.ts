/**
 * The platform a benchmark measures, as one process the way `npm start` runs it: on the embedded store and
 * bus, or on the NATS and PostgreSQL the environment names (a database and a subject prefix of its own,
 * dropped when it stops), with the bootstrap administrator signed in.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, type PlatformProcess } from '../../launch.ts';
import { testBusKeys } from './bus_keys.ts';
import { dropEventStream } from './event_streams.ts';
import { platformNatsEnv } from './nats_auth.ts';
import { createDatabase } from './databases.ts';
import { freePort } from './processes.ts';

/** The administrator's password of a benchmark's platform. */
export const benchAdminPassword = 'bench-admin-password-1';

export type BenchPlatform = {
  proc: PlatformProcess;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  port: number;
  /** Bearer headers of the bootstrap administrator. */
  headers: Record<string, string>;
  /** `embedded` or `NATS`. */
  mode: 'embedded' | 'NATS';
  /** The subject prefix on NATS (null embedded). */
  prefix: string | null;
  stop(): Promise<void>;
};

/** Signs the bootstrap administrator in; answers bearer headers. */
export async function benchAdminHeaders(base: string): Promise<Record<string, string>> {
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: benchAdminPassword }),
  });
  if (res.status !== 200) throw new Error(`the administrator's sign-in answered ${res.status}`);
  return { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` };
}

/**
 * Starts the platform for a benchmark: on NATS and PostgreSQL when `servers` (default: when the environment
 * names both), else embedded; `env` adds settings.
 */
export async function startBenchPlatform(
  options: { servers?: boolean; env?: Record<string, string>; name?: string } = {},
): Promise<BenchPlatform> {
  const servers = options.servers ?? Boolean(process.env.NATS_URL && process.env.DATABASE_URL);
  const dataDir = await mkdtemp(join(tmpdir(), `scada-bench-${options.name ?? 'platform'}-`));
  const database = servers ? await createDatabase(process.env.DATABASE_URL as string) : null;
  const prefix = servers ? `b${randomBytes(6).toString('hex')}` : null;
  const port = await freePort();
  const proc = await launch(
    {
      DATA_DIR: dataDir,
      HTTP_PORT: String(port),
      HTTPS_PORT: '0',
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: benchAdminPassword,
      NODE_ENV: 'test',
      PASSWORD_HASH_COST: '12',
      ...(database && prefix
        ? {
            DATABASE_URL: database.url,
            SECRETS_KEY: randomBytes(32).toString('base64'),
            ...platformNatsEnv(),
            ...testBusKeys,
            BUS_SUBJECT_PREFIX: prefix,
          }
        : {}),
      ...options.env,
    },
    { host: '127.0.0.1' },
  );
  const base = `http://127.0.0.1:${port}`;
  return {
    proc,
    base,
    port,
    headers: await benchAdminHeaders(base),
    mode: servers ? 'NATS' : 'embedded',
    prefix,
    stop: async () => {
      await proc.stop();
      if (prefix) await dropEventStream(prefix).catch(() => undefined);
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
