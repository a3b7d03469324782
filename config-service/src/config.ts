import type { EnvReader } from '@scada/platform';

/** Settings of the config service (none of its own yet; the store and bus come from the process). */
export type ConfigServiceConfig = Record<string, never>;

/** Reads the config service's section of the environment. */
export function readConfigServiceConfig(_env: EnvReader): ConfigServiceConfig {
  return {};
}
