import { loadMigrations, type DurableEvents, type ServiceDefinition } from '@scada/platform';
import { readHistoryConfig, type HistoryConfig } from './config.ts';
import { historyHandlers } from './handlers.ts';
import { record } from './ingest.ts';
import { Partitions } from './partitions.ts';
import { recordedSubjects } from './rows.ts';

/** How often partitions are made ahead and old ones dropped. */
const upkeepMs = 3_600_000;
/** How long the event log holds events for the history at least: a replica away this long misses nothing. */
const holdMs = 600_000;

/**
 * The history service: records every value the protocol service reports or reads, from the event log
 * under a durable consumer of its own (`history`), and answers trends and summaries of them.
 */
export const historyService: ServiceDefinition<HistoryConfig> = {
  name: 'history',
  version: '0.1.0',
  description: 'Every reported and read value, kept in day partitions with minute and hour rollups, read back as trends',
  readConfig: readHistoryConfig,
  schema: 'history',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async ({ store, bus, config, log }) => {
    const partitions = new Partitions(store);
    const upkeep = () => partitions.upkeep(Date.now(), config.retentionDays, config.partitionsAhead, log);
    await upkeep();
    const timer = setInterval(() => {
      upkeep().catch((err: unknown) => log.warn({ err }, 'history partition upkeep failed'));
    }, upkeepMs);
    timer.unref();
    const consumer: DurableEvents = await bus.consumeEvents({
      name: 'history',
      subjects: recordedSubjects,
      holdMs,
      maxBatch: config.maxBatch,
      log,
      // Batches of history wait while a lease renewal, a sign-in or a session's write waits (`Store.bulk()`).
      handle: (batch) => record(store.bulk(), partitions, batch, { retentionDays: config.retentionDays, log }),
    });
    return {
      implementations: historyHandlers({ store, bus }),
      stop: async () => {
        clearInterval(timer);
        await consumer.stop();
      },
    };
  },
};
