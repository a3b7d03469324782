/**
 * The script runtime of a config replica: the worker pool, the runner and the scheduler, started with
 * the service and stopped with it (the scheduler first, so no run starts; the runs under way end; their
 * records are written; the workers end).
 */
import type { Bus, Queryable, Store } from '@scada/platform';
import type { Logger } from 'pino';
import type { ConfigServiceConfig } from '../config.ts';
import { scripts } from '../store/tables.ts';
import { ScriptPool } from './pool.ts';
import { ScriptRunner, type RunnableScript } from './runner.ts';
import { startScheduler, type ScheduledScript, type Scheduler } from './scheduler.ts';

/** A script as the runtime reads it: what a run and a schedule need. */
export type LoadedScript = RunnableScript & ScheduledScript;

/** The running parts. */
export type ScriptRuntime = {
  config: ConfigServiceConfig;
  pool: ScriptPool;
  runner: ScriptRunner;
  scheduler: Scheduler;
  stop(): Promise<void>;
};

/** A script of the space, or null. */
export async function loadScript(db: Queryable, space: string, id: string): Promise<LoadedScript | null> {
  const row = await scripts.get(db, space, id);
  if (!row) return null;
  return {
    space,
    id: row.id,
    name: String(row.name),
    code: String(row.code),
    log: row.log === true,
    type: row.type as LoadedScript['type'],
    period: (row.period as number | undefined) ?? null,
    delay: (row.delay as number | undefined) ?? null,
    offset: (row.offset as number | undefined) ?? null,
    time: (row.time as string | undefined) ?? null,
  };
}

/** Starts the pool (its workers start with the first run), the runner and this replica's scheduler. */
export function startScriptRuntime(deps: {
  store: Store;
  bus: Bus;
  log: Logger;
  instance: string;
  config: ConfigServiceConfig;
}): ScriptRuntime {
  const { store, bus, config, instance } = deps;
  const log = deps.log.child({ part: 'scripts' });
  const pool = new ScriptPool({ size: config.workers, log, memoryBytes: config.limits.memoryBytes });
  const runner = new ScriptRunner({ store, bus, pool, limits: config.limits, log });
  const scheduler = startScheduler<LoadedScript>({
    store,
    log,
    owner: instance,
    leaseMs: config.leaseMs,
    timeZone: config.timeZone,
    load: (space, id) => loadScript(store, space, id),
    fire: async (script) => void (await runner.run(script, { trigger: 'schedule', by: instance }, config.limits.deadlineMs)),
    onTake: () => pool.warm(),
  });
  return {
    config,
    pool,
    runner,
    scheduler,
    stop: async () => {
      await scheduler.stop();
      await runner.flush();
      await pool.stop();
    },
  };
}
