/**
 * The platform as its images run it, for the benchmarks that set it beside a peer (`peers`, `ab_create`):
 * a target's bundle of a `dist` folder with the image's Node flags, and the settings of a platform on NATS
 * and PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { roleBusKeys } from './bus_keys.ts';
import { bundleCommand, repoRoot, type Target } from '../../tools/build/build.ts';

/**
 * A target's bundle of `distDir` (this checkout's `dist` by default) run as its image runs it, in the
 * environment given over this process's (a value `undefined` removes a variable). `BENCH_PROF_DIR` profiles it.
 */
export function startBundle(target: Target, env: Record<string, string | undefined>, distDir = join(repoRoot, 'dist')): ChildProcess {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const prof = process.env.BENCH_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF_DIR] : [];
  return spawn(process.execPath, [...prof, ...bundleCommand(target, distDir)], {
    cwd: repoRoot,
    env: merged,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * What a platform on NATS and PostgreSQL shares between its gateway and its services (`env`: a subject
 * prefix of its own, an administrator's password, tokens that outlast the rounds, info logs), and each
 * side's bus keys (`gateway`, `services`: auth, config and protocol in one process).
 */
export function natsPlatformSettings(options: { natsUrl: string; databaseUrl: string; password: string; prefix: string }): {
  env: Record<string, string>;
  gateway: Record<string, string>;
  services: Record<string, string>;
} {
  const keys = roleBusKeys({ gateway: ['gateway'], services: ['auth', 'config', 'protocol'] });
  return {
    env: {
      NATS_URL: options.natsUrl,
      DATABASE_URL: options.databaseUrl,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      BUS_SUBJECT_PREFIX: `${options.prefix}${randomBytes(4).toString('hex')}`,
      ADMIN_PASSWORD: options.password,
      // The rounds outlast the default five minutes of an access token.
      ACCESS_TOKEN_TTL_SECONDS: '3600',
      HTTPS_PORT: '0',
      LOG_LEVEL: 'info',
    },
    gateway: keys.gateway,
    services: keys.services,
  };
}
