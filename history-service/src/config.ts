import type { EnvReader } from '@scada/platform';

/** Settings of the history service. */
export type HistoryConfig = {
  /** Days a recorded value is kept: older day partitions are dropped. */
  retentionDays: number;
  /** Day partitions made ahead of today. */
  partitionsAhead: number;
  /** The most events recorded in one transaction. */
  maxBatch: number;
};

/** Reads the history service's section of the environment. */
export function readHistoryConfig(env: EnvReader): HistoryConfig {
  return {
    retentionDays: env.int('HISTORY_RETENTION_DAYS', 30, { min: 1, max: 3650 }),
    partitionsAhead: 3,
    maxBatch: env.int('HISTORY_BATCH_EVENTS', 500, { min: 1, max: 10_000 }),
  };
}
