import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { QueryList } from '../query.ts';
import { byName, readBinding, writeBinding } from './http.ts';
import { ConfigIdOf, scriptResource } from './schemas.ts';

/*
 * The script runtime: whether a script is scheduled, running one by hand, its last runs, and the summaries
 * of the reference interface. Scripts run in a sandbox of their own (QuickJS in WebAssembly, a fresh
 * context per run) and reach the plant only through `ins`; `config-service/README.md`, "Scripts", says what a script can do.
 */

const tags = ['Scripts'];
const params = Type.Object({ scriptId: ConfigIdOf('Id of a script of the space (a UUID).') }, { additionalProperties: false });
const extension = 'An extension of the reference interface.';
const missingScript = "A script that does not exist, or is another space's, is 404.";

/** Whether a script fires on its schedule. */
export const ScriptStatus = Type.Union([Type.Literal('Scheduled'), Type.Literal('Not Scheduled')], {
  description: '`Scheduled` from `…/schedule` until `…/unschedule` (a `Once` script: until it has fired or its time has passed).',
});
export type ScriptStatus = Static<typeof ScriptStatus>;

/** How a run ended. */
export const ScriptRunOutcome = Type.Union(
  ['ok', 'error', 'timeout', 'out_of_memory', 'stack_overflow'].map((o) => Type.Literal(o)),
  {
    description:
      '`ok`; `error` (the script threw, or does not compile: `error` says where); `timeout` (past its deadline, host calls included); `out_of_memory`; `stack_overflow`. A run that logged more lines, or longer ones, than are kept says so in `logsTruncated`.',
  },
);

/** Where an error was raised in the script, when its own code raised it. */
export const ScriptRunError = Type.Object({
  name: Type.String({ description: '`SyntaxError`, `TypeError`, `HostError` (a refused `ins` call), `InternalError` (a limit), …' }),
  message: Type.String(),
  line: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "1-based line in the script's code." }),
  column: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: '1-based column.' }),
});

/** The answer of a run by hand. */
export const ScriptRunAnswer = Type.Object({
  outcome: ScriptRunOutcome,
  result: Type.Unknown({ description: 'What the script returned, as JSON (null for nothing, or a failed run).' }),
  logs: Type.Array(Type.String(), { description: "The run's `ins.log` lines, each at most `SCRIPT_LOG_LINE_BYTES`." }),
  logsTruncated: Type.Optional(
    Type.Boolean({
      description: 'True when the run logged more lines, or longer ones, than are kept (the run went on; its lines stopped).',
    }),
  ),
  durationMs: Type.Number({ minimum: 0 }),
  error: Type.Optional(ScriptRunError),
});
export type ScriptRunAnswer = Static<typeof ScriptRunAnswer>;

/** One of a script's last runs. */
export const ScriptRunRecord = Type.Object({
  startedAt: Type.String({ format: 'date-time' }),
  durationMs: Type.Number({ minimum: 0 }),
  outcome: ScriptRunOutcome,
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('hand')], { description: '`hand`: `POST …/run`.' }),
  by: Type.String({ description: 'The replica (schedule) or the user (by hand) that started it.' }),
  error: Type.Optional(ScriptRunError),
  logs: Type.Optional(Type.Array(Type.String(), { description: 'The lines it logged, kept when the script has `log` on.' })),
});

/** A script without its code and schedule fields, as the reference's summary schema has it. */
export const ScriptSummary = Type.Omit(scriptResource.response, ['code', 'time', 'delay', 'period', 'offset'], {
  description: 'A script without its code and schedule fields (RepeatableScriptSummaryResponseDto).',
});

/** Whether a script is scheduled. */
export const getScriptStatus = defineOperation({
  operationId: 'getScriptStatus',
  service: 'config',
  summary: 'Whether a script is scheduled',
  tags,
  description: `\`Scheduled\` or \`Not Scheduled\`. ${missingScript}`,
  request: requestSchema({ params }),
  response: ScriptStatus,
  // Live: a Once script stops being scheduled when it fires, without a write.
  http: { ...readBinding('/api/scripts/:scriptId/status', ['not_found']), cacheable: undefined },
});

/** Whether each of several scripts is scheduled. */
export const getScriptStatuses = defineOperation({
  operationId: 'getScriptStatuses',
  service: 'config',
  summary: 'Whether scripts are scheduled',
  tags,
  description: 'A map of script id (lower case) to `Scheduled` or `Not Scheduled`; an id that names no script of the space is left out.',
  request: requestSchema({
    query: Type.Object(
      { scriptIds: QueryList(ConfigIdOf('A script id.'), { maxItems: 500, description: 'Ids of the scripts.' }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Record(Type.String(), ScriptStatus),
  http: { ...readBinding('/api/scripts/status/by-ids'), cacheable: undefined },
});

/** The scripts of the space without code. */
export const getScriptsSummary = defineOperation({
  operationId: 'getScriptsSummary',
  service: 'config',
  summary: 'List the scripts of the space, without code',
  tags,
  description: `Every script of the space without its code and schedule fields. ${byName}`,
  request: requestSchema({}),
  response: Type.Array(ScriptSummary),
  http: readBinding('/api/scripts/summary'),
});

/** The scripts of a project without code. */
export const getScriptsSummaryByProject = defineOperation({
  operationId: 'getScriptsSummaryByProject',
  service: 'config',
  summary: 'List the scripts of a project, without code',
  tags,
  description: `The project's scripts without their code and schedule fields. ${byName} A project that does not exist, or is another space's, is 404.`,
  request: requestSchema({
    query: Type.Object(
      { projectId: ConfigIdOf("A project of the space; another space's project is 404.") },
      { additionalProperties: false },
    ),
  }),
  response: Type.Array(ScriptSummary),
  http: readBinding('/api/scripts/summary/by-project', ['not_found']),
});

const scheduleRules =
  '`Periodic` runs every `period` ms (at least 100) on a grid shifted by `offset` ms, the first run at least `delay` ms after scheduling; `Daily` at the time of day of `time` in `SCRIPT_TIME_ZONE` (UTC by default); `Once` at `time`; `None` only by hand (409 `conflict`). Each scheduled script fires on one replica at a time; a run still going when the next is due makes that one skip, and runs missed while no replica held the script are skipped, never made up: both are counted (`…/runs`). A change of the code or schedule takes effect at the next run.';

/** Schedules a script. */
export const scheduleScript = defineOperation({
  operationId: 'scheduleScript',
  service: 'config',
  summary: 'Schedule a script',
  tags,
  description: `${extension} ${scheduleRules} Code that does not compile is 400 \`script_invalid\` with \`line\` and \`column\`; a schedule that lacks its \`period\` or \`time\` is 409 \`conflict\`. Scheduling a scheduled script changes nothing. ${missingScript}`,
  request: requestSchema({ params }),
  response: NoContent,
  http: writeBinding('POST', '/api/scripts/:scriptId/schedule', 204, ['not_found', 'script_invalid', 'conflict']),
});

/** Unschedules a script. */
export const unscheduleScript = defineOperation({
  operationId: 'unscheduleScript',
  service: 'config',
  summary: 'Unschedule a script',
  tags,
  description: `${extension} The script fires no more; a run under way ends as it would. Unscheduling a script that is not scheduled changes nothing. ${missingScript}`,
  request: requestSchema({ params }),
  response: NoContent,
  http: writeBinding('POST', '/api/scripts/:scriptId/unschedule', 204, ['not_found']),
});

/** How long a run by hand may take, and the deadline of its request. */
export const manualRunLimitMs = 60_000;

/** Runs a script by hand. */
export const runScript = defineOperation({
  operationId: 'runScript',
  service: 'config',
  summary: 'Run a script now',
  tags,
  deadlineMs: manualRunLimitMs + 5_000,
  description: `${extension} Runs the script once, now, on the replica the request reaches, with the deadline of a run by hand (\`SCRIPT_MANUAL_DEADLINE_MS\`, 60 s), and answers how it ended. A run that fails still answers 200 with its \`outcome\` and \`error\` (line and column in the code); code that does not compile is 400 \`script_invalid\`. The script acts as itself (\`script:<id>\`, an editor of its space), whoever runs it; the run is kept with its logs when \`log\` is on. A replica whose workers have 256 runs waiting answers 503 \`overloaded\` with \`Retry-After\` at once. ${missingScript}`,
  request: requestSchema({ params }),
  response: ScriptRunAnswer,
  http: {
    ...writeBinding('POST', '/api/scripts/:scriptId/run', 200, ['not_found', 'script_invalid', 'overloaded']),
    keepsConfiguration: true,
  },
});

/** The last runs of a script. */
export const getScriptRuns = defineOperation({
  operationId: 'getScriptRuns',
  service: 'config',
  summary: 'The last runs of a script',
  tags,
  description: `${extension} Newest first, at most \`limit\` (20 by default; the last 100 are kept), with the runs the schedule skipped: \`missed\` (due while no replica held the script) and \`overlapped\` (due while the previous run was still going), counted since the script was last scheduled. ${missingScript}`,
  request: requestSchema({
    params,
    query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { additionalProperties: false }),
  }),
  response: Type.Object({
    status: ScriptStatus,
    missed: Type.Integer({ minimum: 0 }),
    overlapped: Type.Integer({ minimum: 0 }),
    runs: Type.Array(ScriptRunRecord),
  }),
  http: { ...readBinding('/api/scripts/:scriptId/runs', ['not_found']), cacheable: undefined },
});

/** The script runtime's operations. */
export const scriptRuntimeOperations = [
  getScriptStatus,
  getScriptStatuses,
  getScriptsSummary,
  getScriptsSummaryByProject,
  scheduleScript,
  unscheduleScript,
  runScript,
  getScriptRuns,
];
