import { availableParallelism } from 'node:os';
import { manualRunLimitMs } from '@scada/contracts';
import type { EnvReader } from '@scada/platform';
import type { SandboxLimits } from './scripts/limits.ts';

/** Settings of the config service: the script runtime's limits, pool, schedule zone and lease. */
export type ConfigServiceConfig = {
  /** Limits of every run; `deadlineMs` is that of a scheduled run. */
  limits: SandboxLimits;
  /** The deadline of a run started by hand. */
  manualDeadlineMs: number;
  /** Worker threads running scripts in this replica. */
  workers: number;
  /** Workers one space's runs of one lane (scheduled, or by hand and checks) may hold at once. */
  workersPerSpace: number;
  /** Runs by hand and checks of one space that may wait for a worker; one more is 503 `overloaded` at once. */
  queuePerSpace: number;
  /** Runs by hand and checks of all spaces that may wait for a worker in this replica. */
  queueMax: number;
  /** The time zone a Daily script's `time` of day is read in (an IANA name). */
  timeZone: string;
  /** How long a replica's hold on a scheduled script lasts unrenewed; another replica takes it over after it. */
  leaseMs: number;
};

/** Whether the runtime knows a time zone by this IANA name. */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Reads the config service's section of the environment. */
export function readConfigServiceConfig(env: EnvReader): ConfigServiceConfig {
  const zone = env.string('SCRIPT_TIME_ZONE', 'UTC');
  if (!knownZone(zone)) env.fail(`SCRIPT_TIME_ZONE: must be an IANA time zone such as UTC or Europe/Istanbul (got "${zone}")`);
  const workers = env.int('SCRIPT_WORKERS', Math.min(4, Math.max(1, availableParallelism())), { min: 1, max: 64 });
  return {
    limits: {
      memoryBytes: env.int('SCRIPT_MEMORY_MB', 16, { min: 1, max: 1024 }) * 1024 * 1024,
      stackBytes: env.int('SCRIPT_STACK_KB', 256, { min: 16, max: 8192 }) * 1024,
      deadlineMs: env.int('SCRIPT_DEADLINE_MS', 1000, { min: 10, max: manualRunLimitMs }),
      logLines: env.int('SCRIPT_LOG_LINES', 100, { min: 0, max: 10_000 }),
      logLineBytes: env.int('SCRIPT_LOG_LINE_BYTES', 8192, { min: 80, max: 65_536 }),
      stateBytes: 64 * 1024,
    },
    manualDeadlineMs: env.int('SCRIPT_MANUAL_DEADLINE_MS', manualRunLimitMs, { min: 10, max: manualRunLimitMs }),
    workers,
    workersPerSpace: env.int('SCRIPT_WORKERS_PER_SPACE', Math.max(1, Math.ceil(workers / 2)), { min: 1, max: 64 }),
    queuePerSpace: env.int('SCRIPT_QUEUE_PER_SPACE', 4, { min: 0, max: 10_000 }),
    queueMax: env.int('SCRIPT_QUEUE_MAX', 64, { min: 0, max: 100_000 }),
    timeZone: knownZone(zone) ? zone : 'UTC',
    leaseMs: env.int('SCRIPT_LEASE_SECONDS', 10, { min: 2, max: 300 }) * 1000,
  };
}
