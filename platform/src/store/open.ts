import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Store } from './store.ts';

/**
 * Opens the store the configuration names: PostgreSQL when `databaseUrl` is set, otherwise the embedded
 * PGlite database in `<dataDir>/pgdata` (which refuses a data folder another live process holds). Only
 * the driver in use is loaded: a service pod on PostgreSQL never loads PGlite, nor the edge process `pg`.
 * `timeoutMs` bounds connecting and the store's health check: the process's standard deadline. How V8
 * compiles the embedded store's WebAssembly (`EMBEDDED_STORE_COMPILER`) is the process's choice, made by
 * `runProcess` as it starts (`processV8Flags`), not the store's. An edge site's (`site`) runs on smaller
 * shared buffers and shared memory sized for one connection. `thread` (`EMBEDDED_STORE_THREAD`) says where
 * PostgreSQL runs: `auto`, the default, puts it on a worker thread of its own, off the event loop, except at
 * an edge site, whose memory goal the worker's second heap would cost (bench/README.md, "The store on a
 * worker thread").
 */
export async function openStore(
  config: { databaseUrl?: string; dataDir: string; timeoutMs?: number; site?: string; thread?: 'auto' | 'main' | 'worker' },
  log: Logger,
): Promise<Store> {
  if (config.databaseUrl !== undefined && config.databaseUrl !== '') {
    const { PgStore } = await import('./pg_store.ts');
    return PgStore.connect(config.databaseUrl, { log, timeoutMs: config.timeoutMs });
  }
  const { PGliteStore } = await import('./pglite_store.ts');
  return PGliteStore.open(config.dataDir, {
    log,
    timeoutMs: config.timeoutMs,
    templateFile: storeTemplatePath(),
    // An edge site's store holds only its own connections: 1 MB of shared buffers (15 MiB less resident)
    // and shared memory sized for PGlite's one connection (4 MiB less).
    sharedBuffersMB: config.site !== undefined ? 1 : undefined,
    maxConnections: config.site !== undefined ? 2 : undefined,
    thread: config.thread === undefined || config.thread === 'auto' ? (config.site !== undefined ? 'main' : 'worker') : config.thread,
    // The store's worker thread gone, every call fails: the process stops (exit code 70) so that what
    // supervises it (Kubernetes, systemd) starts it again on the same data folder, instead of staying up
    // with a store that can no longer answer.
    onLost: (err) => {
      log.fatal({ err }, "the embedded store's worker thread ended: stopping the process so that it is started again");
      process.exitCode = 70;
      process.kill(process.pid, 'SIGTERM');
    },
  });
}

/**
 * The name of the embedded store's prepared data folder (a gzip-compressed tar of a database with every
 * migration of the bundle's services applied) that `npm run build` writes beside the bundles an edge box
 * runs: the all-in-one and the protocol service.
 */
export const storeTemplateFile = 'store_template.tar.gz';

/**
 * Where the prepared data folder is looked for: beside the module, which in a bundle is the bundle's
 * folder. Run from the sources there is none, and a first start runs initdb and the migrations.
 */
function storeTemplatePath(): string {
  const name = storeTemplateFile;
  return fileURLToPath(new URL(name, import.meta.url));
}
