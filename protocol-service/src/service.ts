import { loadMigrations, type ServiceDefinition } from '@scada/platform';
import { readProtocolConfig, type ProtocolConfig } from './config.ts';

/** The protocol service: IEC 61850 connections, their SCL files and device models, live MMS sessions. */
export const protocolService: ServiceDefinition<ProtocolConfig> = {
  name: 'protocol',
  version: '0.1.0',
  description: 'IEC 61850 connections, SCL files and device models, live MMS sessions',
  readConfig: readProtocolConfig,
  schema: 'protocol',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async () => ({ implementations: [] }),
};
