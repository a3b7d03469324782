import { loadMigrations, type ServiceDefinition } from '@scada/platform';
import { readConfigServiceConfig, type ConfigServiceConfig } from './config.ts';
import { echoHandler } from './handlers/echo.ts';
import { lookupHandlers } from './handlers/lookups.ts';
import { resourceHandlers } from './handlers/resources.ts';

/** The config service: projects, dashboards, faceplates and scripts of each space. */
export const configService: ServiceDefinition<ConfigServiceConfig> = {
  name: 'config',
  version: '0.1.0',
  description: 'Projects, dashboard board groups and boards, faceplates and placeholders, scripts',
  readConfig: readConfigServiceConfig,
  schema: 'config',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async (deps) => {
    const handlerDeps = { store: deps.store, bus: deps.bus, now: () => new Date() };
    return { implementations: [echoHandler(deps.instance), ...resourceHandlers(handlerDeps), ...lookupHandlers(handlerDeps)] };
  },
};
