/** The config service. */
export { configService } from './service.ts';
/** The script runtime of one replica (pool, runner, scheduler), for tests and benchmarks that run more than one. */
export { startScriptRuntime, type ScriptRuntime } from './scripts/runtime.ts';
export { readConfigServiceConfig, type ConfigServiceConfig } from './config.ts';
/** The worker pool and the plant calls of a run, for benchmarks that set a run beside another engine's. */
export { ScriptPool } from './scripts/pool.ts';
export { plantApi, scriptActor } from './scripts/plant.ts';
export type { HostApi, HostCall, RunResult, SandboxLimits } from './scripts/limits.ts';
