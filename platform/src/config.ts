import { deadlines } from '@scada/contracts';
import type { EnvReader } from './env.ts';

/** The parts a platform process can run. */
export const serviceKeys = ['gateway', 'auth', 'config', 'protocol'] as const;
/** One part a platform process can run. */
export type ServiceKey = (typeof serviceKeys)[number];

/** Process-wide settings: which services run here, and the bus and store they share. */
export type PlatformConfig = {
  services: ServiceKey[];
  dataDir: string;
  databaseUrl?: string;
  natsUrl?: string;
  /** Puts every subject under a prefix, so several platforms can share one NATS server. */
  busSubjectPrefix?: string;
  logLevel: string;
  /** How long a bus request waits for its reply. */
  busTimeoutMs: number;
  /** How long SIGTERM waits for work in flight before closing anyway. */
  shutdownGraceMs: number;
  /** How long a stopping gateway keeps serving new connections after its readiness fails, before it closes its listeners. */
  shutdownDrainMs: number;
  /** Port of the probe listener (`/healthz`, `/readyz`) of a process; 0 turns it off. */
  healthPort: number;
};

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads the process-wide section of the environment. `available` are the parts this build of the process
 * carries (every one for `main.ts`, one for a single-service bundle): `SERVICES` chooses among them and
 * names them all when unset.
 */
export function readPlatformConfig(env: EnvReader, available: readonly ServiceKey[] = serviceKeys): PlatformConfig {
  const refusal = `is not a service${available.length < serviceKeys.length ? ' this build runs' : ''} (${available.join(', ')})`;
  const services = env.list('SERVICES', [...available], (s) =>
    (available as readonly string[]).includes(s) ? null : refusal,
  ) as ServiceKey[];
  return {
    services: [...new Set(services)],
    dataDir: env.string('DATA_DIR', './data'),
    databaseUrl: env.optionalUrl('DATABASE_URL', ['postgres', 'postgresql']),
    natsUrl: env.optionalUrl('NATS_URL', ['nats', 'tls', 'ws', 'wss']),
    busSubjectPrefix: readPrefix(env),
    logLevel: env.oneOf('LOG_LEVEL', 'info', logLevels),
    busTimeoutMs: env.int('BUS_TIMEOUT_MS', deadlines.standardMs, { min: 100, max: 120000 }),
    shutdownGraceMs: env.int('SHUTDOWN_GRACE_MS', 10000, { min: 0, max: 300000 }),
    shutdownDrainMs: env.int('SHUTDOWN_DRAIN_MS', 0, { min: 0, max: 60000 }),
    healthPort: env.port('HEALTH_PORT', 0),
  };
}

function readPrefix(env: EnvReader): string | undefined {
  const prefix = env.optionalString('BUS_SUBJECT_PREFIX');
  if (prefix !== undefined && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix)) {
    env.fail(`BUS_SUBJECT_PREFIX: must be subject tokens of letters, digits, '_' and '-' (got "${prefix}")`);
    return undefined;
  }
  return prefix;
}
