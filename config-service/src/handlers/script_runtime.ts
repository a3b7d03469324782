import {
  configEvents,
  getScriptRuns,
  getScriptStatus,
  getScriptStatuses,
  getScriptsSummary,
  getScriptsSummaryByProject,
  ProblemError,
  runScript,
  scheduleScript,
  unscheduleScript,
  type ScriptRunAnswer,
} from '@scada/contracts';
import {
  actorOf,
  implement,
  notFound,
  publishEvent,
  remainingMs,
  spaceOf,
  type HandlerContext,
  type Implementation,
} from '@scada/platform';
import type { CompileProblem, RunResult } from '../scripts/limits.ts';
import { PoolRefusal } from '../scripts/pool.ts';
import { loadScript, type ScriptRuntime } from '../scripts/runtime.ts';
import { scheduleProblem } from '../scripts/schedule_times.ts';
import { lastRuns } from '../store/script_runs.ts';
import { schedule, scheduleCounters, scheduledAmong, unschedule } from '../store/script_schedules.ts';
import { projects, scripts } from '../store/tables.ts';
import type { HandlerDeps } from './context.ts';

/** The fields the reference's summary schema leaves out. */
const notInSummary = ['code', 'time', 'delay', 'period', 'offset'];

/** Margin kept from a request's deadline for the answer's way back. */
const answerMarginMs = 500;

/**
 * The answer to a run or check the pool did not take: 503 `overloaded` at once when its space's share of
 * the queue (or the whole queue) is full; 504 when its caller's deadline passed before a worker was free.
 */
function refused(err: unknown): never {
  if (!(err instanceof PoolRefusal)) throw err;
  if (err.reason === 'overloaded') throw new ProblemError('overloaded', `The script runs are full: ${err.message}`, { retryAfter: 1 });
  throw new ProblemError('upstream_timeout', `The run did not start: ${err.message}`);
}

/** 400 `script_invalid`: where and why the code does not compile. */
export function scriptInvalid(problem: NonNullable<CompileProblem>): ProblemError {
  const where = problem.line === null ? '' : ` (line ${problem.line}, column ${problem.column})`;
  return new ProblemError('script_invalid', `The code does not compile: ${problem.name}: ${problem.message}${where}`, {
    errors: [
      { path: '/code', message: `${problem.line === null ? '' : `line ${problem.line}, column ${problem.column}: `}${problem.message}` },
    ],
    extensions: { line: problem.line, column: problem.column, message: problem.message },
  });
}

/** A run as the API answers it. */
function answerOf(result: RunResult): ScriptRunAnswer {
  return {
    outcome: result.outcome,
    result: result.result ?? null,
    logs: result.logs,
    ...(result.logsTruncated ? { logsTruncated: true } : {}),
    durationMs: result.durationMs,
    ...(result.error ? { error: result.error } : {}),
  };
}

/** Tells every replica that a script was scheduled or unscheduled (`config.script`, of that kind). */
function announceSchedule(deps: HandlerDeps, ctx: HandlerContext, kind: 'scheduled' | 'unscheduled', id: string): void {
  publishEvent(deps.bus, configEvents.script, { space: spaceOf(ctx), id, actor: actorOf(ctx).name }, { kind, requestId: ctx.requestId });
}

/** Whether scripts are scheduled, the summaries, scheduling, runs by hand and the last runs. */
export function scriptRuntimeHandlers(deps: HandlerDeps, runtime: ScriptRuntime): Implementation[] {
  const scriptOf = async (ctx: HandlerContext, scriptId: string) => {
    const found = await loadScript(deps.store, spaceOf(ctx), scriptId.toLowerCase());
    if (!found) throw notFound('script', scriptId);
    return found;
  };
  const summaries = (list: Record<string, unknown>[]) =>
    list.map((s) => Object.fromEntries(Object.entries(s).filter(([k]) => !notInSummary.includes(k)))) as never;

  return [
    implement(getScriptStatus, async ({ params }, ctx) => {
      const script = await scriptOf(ctx, params.scriptId);
      return (await scheduledAmong(deps.store, script.space, [script.id])).has(script.id) ? 'Scheduled' : 'Not Scheduled';
    }),

    implement(getScriptStatuses, async ({ query }, ctx) => {
      const space = spaceOf(ctx);
      const ids = [...new Set(query.scriptIds.map((id) => id.toLowerCase()))];
      const found = (await scripts.listWhere(deps.store, space, { id: ids })).map((s) => s.id);
      const scheduled = await scheduledAmong(deps.store, space, found);
      return Object.fromEntries(found.map((id) => [id, scheduled.has(id) ? ('Scheduled' as const) : ('Not Scheduled' as const)]));
    }),

    implement(getScriptsSummary, async (_m, ctx) => summaries(await scripts.list(deps.store, spaceOf(ctx)))),

    implement(getScriptsSummaryByProject, async ({ query }, ctx) => {
      const space = spaceOf(ctx);
      const projectId = query.projectId.toLowerCase();
      if (!(await projects.exists(deps.store, space, projectId))) throw notFound('project', query.projectId);
      return summaries(await scripts.listWhere(deps.store, space, { projectId }));
    }),

    implement(scheduleScript, async ({ params }, ctx) => {
      const script = await scriptOf(ctx, params.scriptId);
      const problem = scheduleProblem(script, Date.now());
      if (problem) throw new ProblemError('conflict', `The script cannot be scheduled: ${problem}`);
      const finishBy = Date.now() + remainingMs(ctx) - answerMarginMs;
      const invalid = await runtime.pool
        .check(script.code, runtime.config.limits, { space: script.space, lane: 'hand', finishBy })
        .catch(refused);
      if (invalid) throw scriptInvalid(invalid);
      if (await schedule(deps.store, script.space, script.id)) {
        announceSchedule(deps, ctx, 'scheduled', script.id);
        await runtime.scheduler.kick();
      }
      return null;
    }),

    implement(unscheduleScript, async ({ params }, ctx) => {
      const script = await scriptOf(ctx, params.scriptId);
      if (await unschedule(deps.store, script.space, script.id)) {
        // Here at once; on the replica holding it as soon as it hears (at the latest at its next lease renewal).
        runtime.scheduler.unscheduled(script.space, script.id);
        announceSchedule(deps, ctx, 'unscheduled', script.id);
      }
      return null;
    }),

    implement(runScript, async ({ params }, ctx) => {
      const script = await scriptOf(ctx, params.scriptId);
      const finishBy = Date.now() + remainingMs(ctx) - answerMarginMs;
      const deadlineMs = Math.max(1, Math.min(runtime.config.manualDeadlineMs, finishBy - Date.now()));
      const result = await runtime.runner.run(script, { trigger: 'hand', by: actorOf(ctx).name }, deadlineMs, finishBy).catch(refused);
      if (result.compileFailed && result.error) throw scriptInvalid(result.error);
      return answerOf(result);
    }),

    implement(getScriptRuns, async ({ params, query }, ctx) => {
      const script = await scriptOf(ctx, params.scriptId);
      const [counters, runs] = await Promise.all([
        scheduleCounters(deps.store, script.space, script.id),
        lastRuns(deps.store, script.space, script.id, query.limit ?? 20),
      ]);
      return {
        status: counters.scheduled ? ('Scheduled' as const) : ('Not Scheduled' as const),
        missed: counters.missed,
        overlapped: counters.overlapped,
        runs: runs.map((r) => ({
          startedAt: r.startedAt.toISOString(),
          durationMs: r.durationMs,
          outcome: r.outcome as never,
          trigger: r.trigger,
          by: r.by,
          ...(r.error ? { error: r.error } : {}),
          ...(r.logs ? { logs: r.logs } : {}),
        })),
      };
    }),
  ];
}
