import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../event.ts';
import { defineOperation, requestSchema, type HttpBinding, type Role } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';
import { OneOf, UnicodeText } from '../config/kinds.ts';

/*
 * The alarms' states and their operations (the protocol service evaluates alarms where values arrive and
 * keeps their states; their definitions are configuration, `config/schemas.ts`). States follow ISA-18.2
 * (IEC 62682): normal, unacknowledged, acknowledged, returned to normal unacknowledged, shelved and out
 * of service. Every transition is a row of an append-only journal and an `event: alarm` on `/api/live`.
 */

/** The states of an alarm. */
export const alarmStates = ['normal', 'unacknowledged', 'acknowledged', 'rtn_unacknowledged', 'shelved', 'out_of_service'] as const;
export type AlarmStateName = (typeof alarmStates)[number];
export const AlarmStateName = OneOf(alarmStates);

/** Who acknowledges and shelves an alarm. */
export const alarmOperatorRole: Role = 'operator';
/** Who takes an alarm out of service and back. */
export const alarmEditorRole: Role = 'editor';

/** The longest a shelf lasts when `ALARM_SHELVE_MAX_MINUTES` does not say otherwise. */
export const defaultAlarmShelveMaxMinutes = 480;

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const AlarmId = Type.String({ pattern: uuidPattern, description: 'Id of an alarm of the space (a UUID: its definition).' });
const Comment = UnicodeText({ maxLength: 1000, pattern: '^[^\\u0000]*$', description: 'Free text, at most 1000 characters.' });

/** An alarm as it stands now. */
export const AlarmStatus = Type.Object({
  alarmId: Type.String(),
  name: Type.String(),
  groupId: Type.String(),
  projectId: Type.String(),
  connectionId: Type.String(),
  reference: Type.String(),
  priority: Type.Integer({ description: '1 is the most urgent.' }),
  message: Type.String(),
  state: AlarmStateName,
  active: Type.Boolean({ description: 'Whether the condition holds now (also while shelved or out of service).' }),
  value: Type.Unknown({ description: 'The value the last transition or evaluation saw (null: none yet).' }),
  since: Type.String({ format: 'date-time', description: 'When the alarm entered its state.' }),
  raisedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the condition last came; null while it never did.',
  }),
  shelvedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  shelveReason: Type.Union([Type.String(), Type.Null()]),
  by: Type.Union([Type.String(), Type.Null()], { description: 'Who made the last transition (null: the evaluator).' }),
});
export type AlarmStatus = Static<typeof AlarmStatus>;

/** A row of the journal: one transition. */
export const AlarmJournalRow = Type.Object({
  seq: Type.String({ description: 'Its place in the journal (the order of transitions).' }),
  alarmId: Type.String(),
  from: AlarmStateName,
  to: AlarmStateName,
  at: Type.String({ format: 'date-time' }),
  by: Type.Union([Type.String(), Type.Null()], { description: 'The user; null for the evaluator (a value, an expiring shelf).' }),
  value: Type.Unknown(),
  comment: Type.Union([Type.String(), Type.Null()], { description: 'The acknowledgement comment or the shelving reason.' }),
});
export type AlarmJournalRow = Static<typeof AlarmJournalRow>;

/** Body of `protocol.alarm`: one transition (`at` is when it happened), with what the live channel and filters need. */
export const AlarmEvent = Type.Object({
  space: Type.String(),
  alarmId: Type.String(),
  connectionId: Type.String(),
  groupId: Type.String(),
  projectId: Type.String(),
  priority: Type.Integer(),
  message: Type.String(),
  seq: Type.String(),
  from: AlarmStateName,
  to: AlarmStateName,
  at: Type.String({ format: 'date-time' }),
  by: Type.Union([Type.String(), Type.Null()]),
  value: Type.Unknown(),
  comment: Type.Union([Type.String(), Type.Null()]),
  /** When the transition happened, as its journal row says (`at` is when the event was published). */
  transitionAt: Type.String({ format: 'date-time' }),
});
export type AlarmEvent = Static<typeof AlarmEvent>;

/** Every transition of an alarm, published once it committed (on the live channel, `event: alarm`). */
export const alarmEvent = defineEvent({
  name: 'protocol.alarm',
  publisher: 'protocol',
  schema: AlarmEvent,
  example: {
    space: 'default',
    alarmId: '9d3e7f21-4a6b-4c58-8e0f-1b2a3c4d5e6f',
    connectionId: '3f2a9c4e-8b1d-4e7a-a6c5-0d9e8f7a6b5c',
    groupId: '2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3d5f7a',
    projectId: '8e1a3c5e-7b9d-4f2a-8c4e-6a8c0e2a4c6e',
    priority: 2,
    message: 'Feeder 3 overcurrent',
    seq: '17',
    from: 'normal',
    to: 'unacknowledged',
    at: '2026-04-22T09:30:00.120Z',
    by: null,
    value: 412.5,
    comment: null,
    transitionAt: '2026-04-22T09:30:00.100Z',
  },
  summary: "An alarm's state changed (ISA-18.2): raised, acknowledged, cleared, shelved, unshelved, out of or back in service.",
});

const tags = ['Alarms'];
const binding = (method: HttpBinding['method'], path: string, access: Role, errors: readonly ProblemCode[]): HttpBinding => ({
  method,
  path,
  status: 200,
  access,
  spaceScoped: true,
  errors,
  // Alarm states are not configuration: nothing a cached read answers changes.
  ...(method === 'GET' ? {} : { keepsConfiguration: true as const }),
});
const params = Type.Object({ alarmId: AlarmId }, { additionalProperties: false });
const notYet = 'An alarm the evaluator has not taken up yet (its connection never started) is 404, as one of another space.';

export const getActiveAlarms = defineOperation({
  operationId: 'getActiveAlarms',
  service: 'protocol',
  summary: 'The alarms that are not normal',
  tags,
  description:
    'Every alarm of the space whose state is not `normal` (shelved and out-of-service ones included), by priority (1 first), then by when it entered its state (oldest first). Filters combine.',
  request: requestSchema({
    query: Type.Object(
      {
        projectId: Type.Optional(Type.String({ pattern: uuidPattern })),
        groupId: Type.Optional(Type.String({ pattern: uuidPattern })),
        priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 255, description: 'Only this priority or a more urgent one.' })),
        state: Type.Optional(AlarmStateName),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Array(AlarmStatus),
  http: binding('GET', '/api/alarms/active', 'viewer', []),
});

const conflictNote = 'A transition the state does not allow is 409 `conflict` naming the state.';

export const ackAlarm = defineOperation({
  operationId: 'ackAlarm',
  service: 'protocol',
  summary: 'Acknowledge an alarm',
  tags,
  description: `\`unacknowledged\` becomes \`acknowledged\`, \`rtn_unacknowledged\` becomes \`normal\`. ${conflictNote} ${notYet}`,
  request: requestSchema({ params, body: Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false }) }),
  response: AlarmStatus,
  http: binding('POST', '/api/alarms/:alarmId/ack', alarmOperatorRole, ['not_found', 'conflict']),
});

export const ackAlarms = defineOperation({
  operationId: 'ackAlarms',
  service: 'protocol',
  summary: 'Acknowledge several alarms',
  tags,
  description:
    'Acknowledges each alarm named that waits for it; the others are answered in `skipped` with their state. An id the space holds no alarm for is 404 naming it, and nothing is acknowledged.',
  request: requestSchema({
    body: Type.Object(
      {
        alarmIds: Type.Array(AlarmId, { minItems: 1, maxItems: 1000, uniqueItems: true }),
        comment: Type.Optional(Comment),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    acknowledged: Type.Array(AlarmStatus),
    skipped: Type.Array(Type.Object({ alarmId: Type.String(), state: AlarmStateName })),
  }),
  http: binding('POST', '/api/alarms/ack', alarmOperatorRole, ['not_found']),
});

export const shelveAlarm = defineOperation({
  operationId: 'shelveAlarm',
  service: 'protocol',
  summary: 'Shelve an alarm for a while',
  tags,
  description:
    'Suppresses the alarm for `minutes` (1 to `ALARM_SHELVE_MAX_MINUTES`, 480 by default; more is 400), with a reason. When the shelf expires the alarm comes back `unacknowledged` if its condition still holds, `normal` otherwise. An alarm out of service, or shelved already, is 409. ' +
    notYet,
  request: requestSchema({
    params,
    body: Type.Object(
      {
        minutes: Type.Integer({ minimum: 1, maximum: 100_000 }),
        reason: UnicodeText({ minLength: 1, maxLength: 1000, pattern: '^[^\\u0000]*$' }),
      },
      { additionalProperties: false },
    ),
  }),
  response: AlarmStatus,
  http: binding('POST', '/api/alarms/:alarmId/shelve', alarmOperatorRole, ['not_found', 'conflict', 'validation_failed']),
});

export const unshelveAlarm = defineOperation({
  operationId: 'unshelveAlarm',
  service: 'protocol',
  summary: 'Take an alarm off the shelf',
  tags,
  description: `A shelved alarm comes back \`unacknowledged\` if its condition holds, \`normal\` otherwise. ${conflictNote}`,
  request: requestSchema({
    params,
    body: Type.Optional(Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false })),
  }),
  response: AlarmStatus,
  http: binding('POST', '/api/alarms/:alarmId/unshelve', alarmOperatorRole, ['not_found', 'conflict']),
});

export const alarmOutOfService = defineOperation({
  operationId: 'alarmOutOfService',
  service: 'protocol',
  summary: 'Take an alarm out of service',
  tags,
  description: `The alarm is not raised until it is put in service again (a shelf ends with it). ${conflictNote}`,
  request: requestSchema({
    params,
    body: Type.Optional(Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false })),
  }),
  response: AlarmStatus,
  http: binding('POST', '/api/alarms/:alarmId/out-of-service', alarmEditorRole, ['not_found', 'conflict']),
});

export const alarmInService = defineOperation({
  operationId: 'alarmInService',
  service: 'protocol',
  summary: 'Put an alarm in service again',
  tags,
  description: `The alarm comes back \`unacknowledged\` if its condition holds, \`normal\` otherwise. ${conflictNote}`,
  request: requestSchema({
    params,
    body: Type.Optional(Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false })),
  }),
  response: AlarmStatus,
  http: binding('POST', '/api/alarms/:alarmId/in-service', alarmEditorRole, ['not_found', 'conflict']),
});

/** The most rows one page of the journal carries. */
export const maxAlarmJournalPage = 1000;

export const getAlarmJournal = defineOperation({
  operationId: 'getAlarmJournal',
  service: 'protocol',
  summary: 'The journal of alarm transitions',
  tags,
  description:
    "Every transition of the space's alarms, oldest first, in pages of `limit` rows (100 by default, at most 1000): `next` is the cursor of the following page (`after`), null after the last. `from` (inclusive) and `to` (exclusive) bound the time. `format=csv` answers the page as `text/csv` (header `seq,alarmId,from,to,at,by,value,comment`, `value` as JSON text; the next page starts `after` the last `seq`). `groupId`, `priority` and `text` look at the alarm as it is defined now: the rows of an alarm no longer defined match none of them.",
  request: requestSchema({
    query: Type.Object(
      {
        from: Type.Optional(Type.String({ format: 'date-time' })),
        to: Type.Optional(Type.String({ format: 'date-time' })),
        alarmId: Type.Optional(Type.String({ pattern: uuidPattern })),
        groupId: Type.Optional(Type.String({ pattern: uuidPattern, description: 'Only alarms of this group (as defined now).' })),
        priority: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 255, description: 'Only alarms of this priority or a more urgent one (as defined now).' }),
        ),
        state: Type.Optional(AlarmStateName),
        text: Type.Optional(
          UnicodeText({
            minLength: 1,
            maxLength: 200,
            pattern: '^[^\\u0000]*$',
            description: "Only rows whose alarm's name or message, comment or user holds this text (any case).",
          }),
        ),
        after: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: 'The cursor a page answered as `next`.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxAlarmJournalPage })),
        format: Type.Optional(OneOf(['json', 'csv'])),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Union([
    Type.Object({ rows: Type.Array(AlarmJournalRow), next: Type.Union([Type.String(), Type.Null()]) }),
    Type.String({ description: 'With `format=csv`: the CSV text.' }),
  ]),
  http: { ...binding('GET', '/api/alarms/journal', 'viewer', []), csvFormat: true },
});

export const getAlarmSettings = defineOperation({
  operationId: 'getAlarmSettings',
  service: 'protocol',
  summary: "The alarms' limits a client offers its choices within",
  tags,
  description: '`shelveMaxMinutes`: the longest an alarm is shelved (`ALARM_SHELVE_MAX_MINUTES`, 480 by default).',
  request: requestSchema({ query: Type.Object({}, { additionalProperties: false }) }),
  response: Type.Object({ shelveMaxMinutes: Type.Integer({ minimum: 1 }) }),
  http: binding('GET', '/api/alarms/settings', 'viewer', []),
});

/** Internal (the config service's alarm definitions): whether a connection of the space holds a reference. */
export const checkAlarmReference = defineOperation({
  operationId: 'checkAlarmReference',
  service: 'protocol',
  summary: "Whether a connection's model holds a data attribute",
  tags,
  request: requestSchema({
    body: Type.Object(
      { connectionId: Type.String({ pattern: uuidPattern }), reference: Type.String({ maxLength: 1024 }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    modelKnown: Type.Boolean({ description: 'Whether the connection has an SCL model to check against.' }),
    problem: Type.Union([Type.String(), Type.Null()], { description: 'What is wrong with the reference; null: nothing.' }),
  }),
});

/** Internal (the config service's project status): the alarm groups of a project with an alarm that is not normal. */
export const activeAlarmGroupsOfProject = defineOperation({
  operationId: 'activeAlarmGroupsOfProject',
  service: 'protocol',
  summary: 'The alarm groups of a project with an alarm that is not normal',
  tags,
  request: requestSchema({ query: Type.Object({ projectId: Type.String({ pattern: uuidPattern }) }, { additionalProperties: false }) }),
  response: Type.Array(Type.String()),
});

/** The alarm operations of the protocol service. */
export const alarmOperations = [
  getActiveAlarms,
  ackAlarms,
  ackAlarm,
  shelveAlarm,
  unshelveAlarm,
  alarmOutOfService,
  alarmInService,
  getAlarmJournal,
  getAlarmSettings,
  checkAlarmReference,
  activeAlarmGroupsOfProject,
];
for (const op of alarmOperations) {
  const between = op.http ? '' : 'Between services only. ';
  op.description = `${op.description ? `${op.description} ` : ''}${between}An extension of the reference interface.`;
}
