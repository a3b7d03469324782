/**
 * Runs a script once, by hand or on its schedule: its state in, the run in the pool's sandbox, its state
 * and the run's record out, and `events.config.script.ran` for the live channel. Records of scheduled
 * runs are kept in batches (one statement at most every 250 ms); a run by hand is kept before it is
 * answered, so that `…/runs` shows it at once.
 */
import { randomUUID } from 'node:crypto';
import { configEvents } from '@scada/contracts';
import { publishEvent, type Bus, type Store } from '@scada/platform';
import type { Logger } from 'pino';
import { keepRuns, loadState, saveState, type RunRecord } from '../store/script_runs.ts';
import type { RunResult, SandboxLimits } from './limits.ts';
import { plantApi, type ScriptIdentity } from './plant.ts';
import type { ScriptPool } from './pool.ts';

/** A script as a run needs it. */
export type RunnableScript = ScriptIdentity & { code: string; log: boolean };

/** Who started a run. */
export type RunTrigger = { trigger: 'schedule' | 'hand'; by: string };

export type RunnerDeps = { store: Store; bus: Bus; pool: ScriptPool; limits: SandboxLimits; log: Logger; instance: string };

/** How often records of scheduled runs are written. */
const journalMs = 250;

export class ScriptRunner {
  readonly #deps: RunnerDeps;
  #batch: RunRecord[] = [];
  /** The state of scripts this replica runs on their schedule, so that a run does not read it first. */
  readonly #states = new Map<string, string | null>();
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
  }

  /**
   * Runs the script with `deadlineMs` counted from when a worker takes it (and ending by `finishBy` at the
   * latest, its caller's deadline), keeps its state and record, announces it; answers how it ended. A run
   * the pool refuses (`PoolRefusal`: its space's queue is full, or its caller gave up first) is neither
   * run nor recorded.
   */
  async run(script: RunnableScript, trigger: RunTrigger, deadlineMs: number, finishBy?: number): Promise<RunResult> {
    const { store, bus, pool, limits } = this.#deps;
    const key = `${script.space}/${script.id}`;
    const scheduled = trigger.trigger === 'schedule';
    const state =
      scheduled && this.#states.has(key) ? (this.#states.get(key) as string | null) : await loadState(store, script.space, script.id);
    if (scheduled) this.#states.set(key, state);
    let startedAt = new Date();
    // The host calls' deadline: the run's, as the pool sets it when a worker takes the run.
    let deadlineAt = Date.now() + deadlineMs;
    const host = plantApi(bus, script, () => deadlineAt);
    const admission = { space: script.space, lane: scheduled ? ('schedule' as const) : ('hand' as const), finishBy };
    const result = await pool.run({ code: script.code, limits: { ...limits, deadlineMs }, state }, host, admission, (at) => {
      startedAt = new Date();
      deadlineAt = at;
    });
    if (result.compileFailed && trigger.trigger === 'hand') return result;
    if (result.state !== undefined) {
      await saveState(store, script.space, script.id, result.state);
      if (this.#states.has(key)) this.#states.set(key, result.state);
    }
    this.#keep({
      space: script.space,
      scriptId: script.id,
      startedAt,
      durationMs: result.durationMs,
      outcome: result.outcome,
      trigger: trigger.trigger,
      by: trigger.by,
      error: result.error ?? null,
      logs: script.log ? result.logs : null,
    });
    if (trigger.trigger === 'hand') await this.flush();
    publishEvent(
      bus,
      configEvents.scriptRan,
      {
        space: script.space,
        id: script.id,
        outcome: result.outcome,
        durationMs: result.durationMs,
        by: this.#deps.instance,
        stateChanged: result.state !== undefined,
      },
      { requestId: randomUUID() },
    );
    return result;
  }

  /** Forgets the copy of a script's state (another replica changed it, or this one no longer runs it). */
  forgetState(space: string, id: string): void {
    this.#states.delete(`${space}/${id}`);
  }

  #keep(record: RunRecord): void {
    this.#batch.push(record);
    this.#timer ??= setTimeout(() => void this.flush(), journalMs);
  }

  /** Writes the records not written yet. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#batch;
    this.#batch = [];
    this.#writing = this.#writing.then(async () => {
      try {
        await keepRuns(this.#deps.store, batch);
      } catch (err) {
        this.#deps.log.warn({ err, runs: batch.length }, 'records of script runs were not kept');
      }
    });
    return this.#writing;
  }
}
