import { loadMigrations, type ServiceDefinition } from '@scada/platform';
import { readConfigServiceConfig, type ConfigServiceConfig } from './config.ts';
import { echoHandler } from './handlers/echo.ts';
import { lookupHandlers } from './handlers/lookups.ts';
import { resourceHandlers } from './handlers/resources.ts';
import { scriptRuntimeHandlers } from './handlers/script_runtime.ts';
import { startScriptRuntime } from './scripts/runtime.ts';

/** The config service: projects, dashboards, faceplates and scripts of each space, and the runtime that runs the scripts. */
export const configService: ServiceDefinition<ConfigServiceConfig> = {
  name: 'config',
  version: '0.1.0',
  description: 'Projects, dashboard board groups and boards, faceplates and placeholders, scripts and their runs',
  readConfig: readConfigServiceConfig,
  schema: 'config',
  // An animation's SVG may be 2 MiB: its create and update, and its reads, are larger than one bus message.
  stagesLargeMessages: true,
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async (deps) => {
    const handlerDeps = { store: deps.store, bus: deps.bus, now: () => new Date() };
    const runtime = startScriptRuntime({ store: deps.store, bus: deps.bus, log: deps.log, instance: deps.instance, config: deps.config });
    return {
      implementations: [
        echoHandler(deps.instance),
        ...resourceHandlers(handlerDeps),
        ...lookupHandlers(handlerDeps),
        ...scriptRuntimeHandlers(handlerDeps, runtime),
      ],
      stop: () => runtime.stop(),
    };
  },
};
