import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorizationBlock, natsRoles, passwordVariable, type NatsRole } from '../../deploy/nats/permissions.ts';

/** A nats-server with the platform's shipped permissions (for prefixes of one token) and a harness user. */
export type AuthNats = {
  url: string;
  port: number;
  /** Each role's password. */
  passwords: Record<NatsRole, string>;
  /** The harness user, with every right: for a test's own streams and raw connections. */
  harness: { user: string; pass: string };
  /** The environment that signs a platform process in as a role. */
  envOf(role: NatsRole): Record<string, string>;
  stop(): Promise<void>;
};

/** Writes the configuration of such a server into `dir`; the passwords are in its environment. */
export function writeAuthNatsConfig(
  dir: string,
  port: number,
): { file: string; env: Record<string, string>; passwords: Record<NatsRole, string>; harness: { user: string; pass: string } } {
  // nats-server reads a password from the environment as a configuration value: one that starts with a
  // digit or `-` is taken for a number or refused, so each starts with a letter and holds only letters and digits.
  const password = () => `p${randomBytes(16).toString('hex')}`;
  const passwords = Object.fromEntries(natsRoles.map((r) => [r, password()])) as Record<NatsRole, string>;
  const harness = { user: 'harness', pass: password() };
  const file = join(dir, 'nats.conf');
  writeFileSync(
    file,
    [
      `listen: 127.0.0.1:${port}`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`,
      authorizationBlock('*', [{ user: harness.user, password: harness.pass }]),
    ].join('\n'),
  );
  const env = Object.fromEntries(natsRoles.map((r) => [passwordVariable(r), passwords[r]]));
  return { file, env, passwords, harness };
}

/** Starts such a server on a free port; resolves once it accepts connections. */
export async function startAuthNats(port: number): Promise<AuthNats> {
  const dir = mkdtempSync(join(tmpdir(), 'scada-nats-auth-'));
  const { file, env, passwords, harness } = writeAuthNatsConfig(dir, port);
  const child: ChildProcess = spawn('nats-server', ['-c', file], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d) => (log += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const end = Date.now() + 10_000;
  while (!log.includes('Server is ready')) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`nats-server did not start: ${log.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `nats://127.0.0.1:${port}`;
  return {
    url,
    port,
    passwords,
    harness,
    envOf: (role) => ({ NATS_URL: url, NATS_USER: role, NATS_PASSWORD: passwords[role] }),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The NATS connection options of the harness's own connections: `SCADA_TEST_NATS_USER` when the run's server asks for one. */
export function harnessNatsOptions(url = process.env.NATS_URL ?? ''): { servers: string[]; user?: string; pass?: string } {
  const servers = url.split(',').map((s) => s.trim());
  const user = process.env.SCADA_TEST_NATS_USER;
  return user ? { servers, user, pass: process.env.SCADA_TEST_NATS_PASSWORD ?? '' } : { servers };
}

/** The NATS variables of the run for a platform process: the server and the platform's own credentials. */
export function platformNatsEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [
    'NATS_URL',
    'NATS_USER',
    'NATS_PASSWORD',
    'NATS_TOKEN',
    'NATS_CREDS',
    'NATS_TLS_CA',
    'NATS_TLS_CERT',
    'NATS_TLS_KEY',
  ]) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  return out;
}
