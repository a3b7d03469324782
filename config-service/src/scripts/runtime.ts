/**
 * The script runtime of a config replica: the worker pool, the runner and the scheduler, started with
 * the service and stopped with it (the scheduler first, so no run starts; the runs under way end; their
 * records are written; the workers end).
 */
import { configEvents } from '@scada/contracts';
import { subscribeEvent, type Bus, type Queryable, type Store } from '@scada/platform';
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
  return row ? scriptOf(space, row) : null;
}

/** Scripts of a space by id, in one query (those gone are left out). */
export async function loadScripts(db: Queryable, space: string, ids: string[]): Promise<Map<string, LoadedScript>> {
  const rows = await scripts.listWhere(db, space, { id: ids });
  return new Map(rows.map((row) => [row.id, scriptOf(space, row)]));
}

function scriptOf(space: string, row: Record<string, unknown> & { id: string }): LoadedScript {
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
  const pool = new ScriptPool({
    size: config.workers,
    perSpace: config.workersPerSpace,
    queuePerSpace: config.queuePerSpace,
    queueMax: config.queueMax,
    log,
    memoryBytes: config.limits.memoryBytes,
  });
  const runner = new ScriptRunner({ store, bus, pool, limits: config.limits, log, instance });
  const scheduler = startScheduler<LoadedScript>({
    store,
    log,
    owner: instance,
    leaseMs: config.leaseMs,
    timeZone: config.timeZone,
    load: (space, ids) => loadScripts(store, space, ids),
    fire: async (script) => void (await runner.run(script, { trigger: 'schedule', by: instance }, config.limits.deadlineMs)),
    onTake: () => void pool.warm(),
    onDrop: (space, id) => runner.forgetState(space, id),
  });
  // What another request or replica did to a script, as its events say.
  const events = [
    subscribeEvent(
      bus,
      configEvents.script,
      (e, kind) => {
        if (kind === 'scheduled') void scheduler.kick();
        else if (kind === 'unscheduled') scheduler.unscheduled(e.space, e.id);
        else if (kind === 'updated' || kind === 'deleted') void scheduler.changed(e.space, e.id);
      },
      log,
    ),
    subscribeEvent(
      bus,
      configEvents.scriptRan,
      (e) => (e.by !== instance && e.stateChanged ? runner.forgetState(e.space, e.id) : undefined),
      log,
    ),
  ];
  return {
    config,
    pool,
    runner,
    scheduler,
    stop: async () => {
      await Promise.all(events.map((e) => e.unsubscribe()));
      await scheduler.stop();
      await runner.flush();
      await pool.stop();
    },
  };
}
