import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { ReportedValue, SessionWarning } from './events.ts';

/**
 * The live channel (`GET /api/live`): the data of its Server-Sent Events, and the snapshot the protocol
 * service answers for a stream's opening. The gateway builds `value`, `session` and `config` events from
 * the bus's events (which carry their space) and asks a service only for the snapshot.
 */

/** The topics a stream may follow. */
export const liveTopics = ['values', 'sessions', 'config', 'scripts', 'alarms'] as const;
export type LiveTopic = (typeof liveTopics)[number];

/** The most connections one stream's filter may name. */
export const maxLiveConnections = 1000;

/** Data of an `event: session`: a live session's state, sent on every change. */
export const LiveSession = Type.Object({
  connectionId: Type.String(),
  state: Type.Union([Type.Literal('connecting'), Type.Literal('connected'), Type.Literal('waiting'), Type.Literal('stopped')]),
  since: Type.String({ format: 'date-time' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  warnings: Type.Array(SessionWarning),
});
export type LiveSession = Static<typeof LiveSession>;

/** A last value as the snapshot carries it: `stale` once the association that delivered it has ended. */
export const LiveSnapshotValue = Type.Composite([ReportedValue, Type.Object({ stale: Type.Boolean() })]);
export type LiveSnapshotValue = Static<typeof LiveSnapshotValue>;

/** Data of an `event: snapshot`: the sessions and last values of what the stream's filter covers. */
export const LiveSnapshot = Type.Object({
  sessions: Type.Array(LiveSession),
  values: Type.Array(LiveSnapshotValue),
});
export type LiveSnapshot = Static<typeof LiveSnapshot>;

/** Data of an `event: config`: a configuration change that committed. */
export const LiveConfigChange = Type.Object({
  entity: Type.String({ description: '`project`, `board_group`, `board`, `faceplate`, `placeholder`, `script`, `connection`, …' }),
  verb: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('deleted')]),
  id: Type.String(),
});
export type LiveConfigChange = Static<typeof LiveConfigChange>;

/** Data of an `event: script`: a script's run ended (scheduled or by hand). */
export const LiveScriptRun = Type.Object({
  scriptId: Type.String(),
  outcome: Type.String({ description: '`ok`, `error`, `timeout`, `out_of_memory` or `stack_overflow`.' }),
  durationMs: Type.Number({ minimum: 0 }),
});
export type LiveScriptRun = Static<typeof LiveScriptRun>;

/** Data of an `event: alarm`: one transition of an alarm (a row of its journal, with what filters need). */
export const LiveAlarm = Type.Object({
  alarmId: Type.String(),
  connectionId: Type.String(),
  groupId: Type.String(),
  projectId: Type.String(),
  priority: Type.Integer(),
  message: Type.String(),
  from: Type.String(),
  to: Type.String(),
  at: Type.String({ format: 'date-time' }),
  by: Type.Union([Type.String(), Type.Null()]),
  value: Type.Unknown(),
  comment: Type.Union([Type.String(), Type.Null()]),
});
export type LiveAlarm = Static<typeof LiveAlarm>;

/** Why a stream ended, as its last event (`event: end`) says. */
export const liveEndReasons = ['session_ended', 'session_expired', 'access_ended', 'ip_denied', 'slow', 'shutdown'] as const;
export type LiveEndReason = (typeof liveEndReasons)[number];

/** Data of an `event: end`, the last event of a stream the platform ends. */
export const LiveEnd = Type.Object({
  reason: Type.Union(
    liveEndReasons.map((r) => Type.Literal(r)),
    {
      description:
        '`session_ended`: logout or revocation; `session_expired`: the session ran out unrenewed; `access_ended`: the user was disabled or deleted, or lost the role or the space; `ip_denied`: the IP filter now denies the address; `slow`: the client fell too far behind; `shutdown`: this gateway is stopping (reconnect).',
    },
  ),
});
export type LiveEnd = Static<typeof LiveEnd>;

/** The most connections one page of a snapshot covers. */
export const maxLiveSnapshotPage = 1000;

/**
 * Internal: the snapshot a live stream opens with, for the connections of the caller's space it follows.
 * With `limit` it answers one page, in connection id order after `after`, and `next` names the cursor of
 * the following page (null after the last); each page stays far below one bus message, however large
 * the space. Without `limit` it answers everything at once (as older gateways ask).
 */
export const liveSnapshot = defineOperation({
  operationId: 'liveSnapshot',
  service: 'protocol',
  summary: 'Sessions and last values for a live stream',
  tags: ['Live'],
  request: requestSchema({
    body: Type.Object(
      {
        connections: Type.Union([Type.Array(Type.String({ maxLength: 64 }), { maxItems: maxLiveConnections }), Type.Null()], {
          description: 'null: every connection of the space.',
        }),
        values: Type.Boolean({ description: 'Whether to include the last values.' }),
        sessions: Type.Optional(Type.Boolean({ description: 'Whether to include the sessions (default true).' })),
        after: Type.Optional(
          Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'The cursor a previous page answered as `next`.' }),
        ),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLiveSnapshotPage, description: 'Connections per page at most.' })),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Composite([
    LiveSnapshot,
    Type.Object({
      next: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page; null or absent after the last.' }),
      ),
    }),
  ]),
});

/** The operations of the live channel. */
export const liveChannelOperations = [liveSnapshot];
