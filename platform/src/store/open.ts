import type { Logger } from 'pino';
import type { Store } from './store.ts';

/**
 * Opens the store the configuration names: PostgreSQL when `databaseUrl` is set, otherwise the embedded
 * PGlite database in `<dataDir>/pgdata` (which refuses a data folder another live process holds). Only
 * the driver in use is loaded: a service pod on PostgreSQL never loads PGlite, nor the edge process `pg`.
 * `timeoutMs` bounds connecting and the store's health check: the process's standard deadline.
 */
export async function openStore(config: { databaseUrl?: string; dataDir: string; timeoutMs?: number }, log: Logger): Promise<Store> {
  if (config.databaseUrl !== undefined && config.databaseUrl !== '') {
    const { PgStore } = await import('./pg_store.ts');
    return PgStore.connect(config.databaseUrl, { log, timeoutMs: config.timeoutMs });
  }
  const { PGliteStore } = await import('./pglite_store.ts');
  return PGliteStore.open(config.dataDir, { log, timeoutMs: config.timeoutMs });
}
