import { loadMigrations, type ServiceDefinition } from '@scada/platform';
import { readProtocolConfig, type ProtocolConfig } from './config.ts';
import { connectionHandlers } from './handlers/connections.ts';
import { dropStaleUploads } from './store/files.ts';

/** Staged uploads nobody committed are dropped after this long. */
const staleUploadSeconds = 3600;

/** The protocol service: IEC 61850 connections, their SCL files and device models, live MMS sessions. */
export const protocolService: ServiceDefinition<ProtocolConfig> = {
  name: 'protocol',
  version: '0.1.0',
  description: 'IEC 61850 connections, SCL files and device models, live MMS sessions',
  readConfig: readProtocolConfig,
  schema: 'protocol',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async ({ store, bus, config, log }) => {
    const sweep = setInterval(() => {
      dropStaleUploads(store, staleUploadSeconds).catch((err: unknown) => log.warn({ err }, 'dropping stale uploads failed'));
    }, 600_000);
    sweep.unref();
    return {
      implementations: connectionHandlers({ store, bus, config, busTimeoutMs: 5000 }),
      stop: async () => clearInterval(sweep),
    };
  },
};
