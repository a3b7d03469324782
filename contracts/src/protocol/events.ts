import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../event.ts';

/** The quality of a value as IEC 61850-7-3 defines it; `null` where the report carried none. */
export const ValueQuality = Type.Object({
  validity: Type.Union([Type.Literal('good'), Type.Literal('invalid'), Type.Literal('reserved'), Type.Literal('questionable')]),
  /** The detail bits that are set: `overflow`, `outOfRange`, `badReference`, `oscillatory`, `failure`, `oldData`, `inconsistent`, `inaccurate`. */
  detail: Type.Array(Type.String()),
  source: Type.Union([Type.Literal('process'), Type.Literal('substituted')]),
  test: Type.Boolean(),
  operatorBlocked: Type.Boolean(),
});
export type ValueQuality = Static<typeof ValueQuality>;

/** Why an attribute is in a report: `data-change`, `quality-change`, `data-update`, `integrity`, `general-interrogation`. */
export const InclusionReason = Type.Union([
  Type.Literal('data-change'),
  Type.Literal('quality-change'),
  Type.Literal('data-update'),
  Type.Literal('integrity'),
  Type.Literal('general-interrogation'),
]);

/** Where a reported value's `timestamp` comes from; null when it has none. */
export const TimestampSource = Type.Union([Type.Literal('attribute'), Type.Literal('entry'), Type.Null()], {
  description:
    "`attribute`: the `t` of the value's own data object in the same report; `entry`: the report's TimeOfEntry, for a value whose data object's `t` the report did not carry; null: neither was there.",
});
export type TimestampSource = Static<typeof TimestampSource>;

/** The quality of a value: its data object's `q` in the same report or read (at any depth), else null. */
export const ValueQualityOrNull = Type.Union([ValueQuality, Type.Null()], {
  description:
    "The `q` of the value's data object (`AnIn1.q` for `AnIn1.mag.f`, `A.phsA.q` for `A.phsA.cVal.mag.f` of a WYE), from the same report or read; null where it did not carry it.",
});

/**
 * One reported attribute as the platform keeps and forwards it. `quality` and `timestamp` come from its
 * data object's `q` and `t` in the same report (at any depth: `mag.f`, `cVal.mag.f`, `phsA.cVal.mag.f`);
 * without that `t`, `timestamp` is the report's TimeOfEntry, and `timestampSource` says which.
 * `receivedAt` is the platform's time.
 */
export const ReportedValue = Type.Object({
  connectionId: Type.String(),
  reference: Type.String({
    description:
      'The attribute, as an IEC 61850 reference (`LD/LN.DO.DA[FC]`); a data set member that is an array element, or a part of one, keeps its index (`LD/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`), so each element is a value of its own.',
  }),
  value: Type.Unknown(),
  quality: ValueQualityOrNull,
  timestamp: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      "The device's time: the `t` of the value's data object in the same report, else the report's TimeOfEntry, else null (`timestampSource` says which). Decoded as libiec61850 decodes it.",
  }),
  timestampSource: TimestampSource,
  receivedAt: Type.String({ format: 'date-time' }),
  rcb: Type.String({ description: 'The report control block that sent it.' }),
  reason: Type.Union([Type.Array(InclusionReason), Type.Null()]),
  seqNum: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
});
export type ReportedValue = Static<typeof ReportedValue>;

/** Body of `events.protocol.report`: one report, attributed to the block that sent it. */
export const ReportEvent = Type.Object({
  space: Type.String(),
  connectionId: Type.String(),
  rcb: Type.String(),
  rptId: Type.String(),
  seqNum: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  entryId: Type.Union([Type.String(), Type.Null()], { description: 'Hex of the EntryID (buffered blocks).' }),
  values: Type.Array(ReportedValue),
  at: Type.String({ format: 'date-time' }),
});
export type ReportEvent = Static<typeof ReportEvent>;

/** A warning about a live session: `model_mismatch`, `buffer_overflow`, … */
export const SessionWarning = Type.Object({ code: Type.String(), detail: Type.String() });
export type SessionWarning = Static<typeof SessionWarning>;

/** Body of `events.protocol.session`: published on every state change of a live session. */
export const SessionEvent = Type.Object({
  space: Type.String(),
  connectionId: Type.String(),
  state: Type.Union([Type.Literal('connecting'), Type.Literal('connected'), Type.Literal('waiting'), Type.Literal('stopped')]),
  since: Type.String({ format: 'date-time' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  warnings: Type.Array(SessionWarning),
  at: Type.String({ format: 'date-time' }),
});
export type SessionEvent = Static<typeof SessionEvent>;

/** One value read on request, as the read answered it, with the time the platform received it. */
export const ReadValue = Type.Object({
  connectionId: Type.String(),
  reference: Type.String(),
  value: Type.Unknown(),
  quality: ValueQualityOrNull,
  timestamp: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  receivedAt: Type.String({ format: 'date-time' }),
});
export type ReadValue = Static<typeof ReadValue>;

/** Body of `protocol.read`: what one read answered (values only; attributes that could not be read are left out). */
export const ReadEvent = Type.Object({
  space: Type.String(),
  connectionId: Type.String(),
  values: Type.Array(ReadValue),
  at: Type.String({ format: 'date-time' }),
});
export type ReadEvent = Static<typeof ReadEvent>;

/** Body of `protocol.connection.<verb>`: which connection, in which space, changed by whom. */
export const ConnectionEvent = Type.Object({
  space: Type.String(),
  id: Type.String(),
  actor: Type.String(),
  at: Type.String({ format: 'date-time' }),
});
export type ConnectionEvent = Static<typeof ConnectionEvent>;

const connectionId = '3f2a9c4e-8b1d-4e7a-a6c5-0d9e8f7a6b5c';
const at = '2026-04-22T09:30:00.120Z';
const quality: ValueQuality = { validity: 'good', detail: [], source: 'process', test: false, operatorBlocked: false };

/** A value of a report as the registry's tests publish it. */
const reportedExample: ReportedValue = {
  connectionId,
  reference: 'simpleIOGenericIO/GGIO1.AnIn1.mag.f[MX]',
  value: 230.4,
  quality,
  timestamp: '2026-04-22T09:30:00.080Z',
  timestampSource: 'attribute',
  receivedAt: at,
  rcb: 'simpleIOGenericIO/LLN0$RP$EventsRCB01',
  reason: ['data-change'],
  seqNum: 7,
};

/**
 * Events the protocol service publishes. Every event carries its `space`, so a follower (the gateway's
 * live channel) filters without asking the service.
 */
export const protocolEvents = {
  report: defineEvent({
    name: 'protocol.report',
    publisher: 'protocol',
    schema: ReportEvent,
    example: {
      space: 'default',
      connectionId,
      rcb: 'simpleIOGenericIO/LLN0$RP$EventsRCB01',
      rptId: 'Events',
      seqNum: 7,
      entryId: null,
      values: [reportedExample],
      at,
    },
    summary: 'A report a device sent (or values read on a poll), with every attribute it carried.',
  }),
  read: defineEvent({
    name: 'protocol.read',
    publisher: 'protocol',
    schema: ReadEvent,
    example: {
      space: 'default',
      connectionId,
      values: [
        { connectionId, reference: 'simpleIOGenericIO/GGIO1.AnIn1.mag.f[MX]', value: 230.4, quality, timestamp: null, receivedAt: at },
      ],
      at,
    },
    summary: 'Values read from a device on request (`POST …/read`), by the replica that asked it.',
  }),
  session: defineEvent({
    name: 'protocol.session',
    publisher: 'protocol',
    schema: SessionEvent,
    example: { space: 'default', connectionId, state: 'connected', since: '2026-04-22T09:29:58.000Z', lastError: null, warnings: [], at },
    summary: "A live session's state, last error or warnings changed.",
  }),
  connection: defineEvent({
    name: 'protocol.connection',
    publisher: 'protocol',
    kinds: ['created', 'updated', 'deleted'],
    schema: ConnectionEvent,
    example: { space: 'default', id: connectionId, actor: 'admin', at },
    summary: 'A connection was created, changed or deleted (committed).',
  }),
};
