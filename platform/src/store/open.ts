import type { Logger } from 'pino';
import { PgStore } from './pg_store.ts';
import { PGliteStore } from './pglite_store.ts';
import type { Store } from './store.ts';

/**
 * Opens the store the configuration names: PostgreSQL when `databaseUrl` is set, otherwise the embedded
 * PGlite database in `<dataDir>/pgdata` (which refuses a data folder another live process holds).
 */
export async function openStore(config: { databaseUrl?: string; dataDir: string }, log: Logger): Promise<Store> {
  if (config.databaseUrl !== undefined && config.databaseUrl !== '') {
    return PgStore.connect(config.databaseUrl, { log });
  }
  return PGliteStore.open(config.dataDir, { log });
}
