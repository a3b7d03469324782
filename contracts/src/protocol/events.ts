import { Type, type Static } from '@sinclair/typebox';

/**
 * Events the protocol service publishes. Every event carries its `space`, so a consumer (the gateway's
 * live channel) filters without asking the service.
 */
export const protocolEvents = {
  /** A report a device sent, with every attribute it carried: `events.protocol.report`. */
  report: 'events.protocol.report',
  /** A live session changed state (or its warnings changed): `events.protocol.session`. */
  session: 'events.protocol.session',
  /** A connection was created, changed or deleted: `events.protocol.connection.<verb>`. */
  connection: (verb: 'created' | 'updated' | 'deleted') => `events.protocol.connection.${verb}`,
  /** Every connection event. */
  connectionAny: 'events.protocol.connection.*',
} as const;

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

/**
 * One reported attribute as the platform keeps and forwards it. `timestamp` is the device's (the `t` of
 * the same data object in the same report, where the data set carries it), `receivedAt` the platform's.
 */
export const ReportedValue = Type.Object({
  connectionId: Type.String(),
  reference: Type.String({ description: 'The attribute, as an IEC 61850 reference (`LD/LN.DO.DA`).' }),
  value: Type.Unknown(),
  quality: Type.Union([ValueQuality, Type.Null()]),
  timestamp: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
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
