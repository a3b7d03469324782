/** The config service. */
export { configService } from './service.ts';
/** The script runtime of one replica (pool, runner, scheduler), for tests and benchmarks that run more than one. */
export { startScriptRuntime, type ScriptRuntime } from './scripts/runtime.ts';
export { readConfigServiceConfig, type ConfigServiceConfig } from './config.ts';
