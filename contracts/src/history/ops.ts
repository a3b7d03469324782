import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { ValueQualityOrNull } from '../protocol/events.ts';
import { ObjectReference } from '../protocol/live.ts';
import { binding, connectionParams } from '../protocol/session_binding.ts';

/**
 * History: every value the protocol service reports or reads, recorded once by the history service and
 * read back as trends. Operations on one connection, space-scoped like the connection itself.
 */
const tags = ['History'];

/** The most points one answer holds. */
export const maxHistoryPoints = 10_000;

const time = (description: string) => Type.String({ format: 'date-time', description });

/** One point of a trend: a recorded value, or a bucket of them with its min and max. */
export const HistoryPoint = Type.Object({
  t: time(
    "The place on the time axis. A recorded value's: the device's time (`timestamp`: the attribute's `t`, else the report's TimeOfEntry) when it carries one, the platform's time of receipt (`receivedAt`) otherwise; a device time later than the receipt by more than 5 minutes, or older than the retention, is not believed and the receipt taken. A bucket's: its start, the first bucket's cut to `from`.",
  ),
  value: Type.Unknown({
    description: 'The recorded value (a number as a number, anything else as the device sent it); for a bucket of numbers, their average.',
  }),
  quality: Type.Union([ValueQualityOrNull, Type.String()], {
    description: "A raw point's quality as reported (or null); a bucket's worst validity (`good`, `questionable`, `invalid`, `reserved`).",
  }),
  timestamp: Type.Optional(
    Type.Union([time("The device's time of a recorded value, as reported; null when it carried none."), Type.Null()]),
  ),
  receivedAt: Type.Optional(time("When the platform received a recorded value (a raw point's; buckets have none).")),
  min: Type.Optional(Type.Number({ description: 'Smallest value of the bucket.' })),
  max: Type.Optional(Type.Number({ description: 'Largest value of the bucket.' })),
  count: Type.Optional(Type.Integer({ minimum: 1, description: 'How many recorded values the bucket holds.' })),
});
export type HistoryPoint = Static<typeof HistoryPoint>;

/** A period in which the session with the device was down: no line is drawn across it. */
export const HistoryGap = Type.Object({
  from: time('When the session left `connected`.'),
  to: time('When it was `connected` again, or the end of the period asked for.'),
  reason: Type.String({ description: 'The state the session was in (`waiting`, `connecting`, `stopped`), and its last error.' }),
});

export const HistoryAnswer = Type.Object({
  reference: Type.String(),
  from: time('Start of the period (inclusive).'),
  to: time('End of the period (exclusive).'),
  resolution: Type.Union([Type.Literal('raw'), Type.Literal('raw-buckets'), Type.Literal('minute'), Type.Literal('hour')], {
    description:
      '`raw`: every recorded value; `raw-buckets`: recorded values grouped in buckets of `bucketSeconds`; `minute`/`hour`: the rollups, grouped in buckets of `bucketSeconds`.',
  }),
  bucketSeconds: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description:
      'The width of the buckets; null for `raw`. Buckets lie on the grid of their width (from `from` for `raw-buckets`, from whole minutes or hours for `minute` and `hour`); the first and the last are cut to the period.',
  }),
  points: Type.Array(HistoryPoint),
  gaps: Type.Array(HistoryGap),
});
export type HistoryAnswer = Static<typeof HistoryAnswer>;

const historyQuery = Type.Object(
  {
    reference: ObjectReference,
    from: Type.Optional(time('Start of the period; 24 hours before `to` when absent.')),
    to: Type.Optional(time('End of the period; now when absent.')),
    maxPoints: Type.Optional(Type.Integer({ minimum: 1, maximum: maxHistoryPoints, default: 1000 })),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        default: 'json',
        description:
          '`csv` streams every recorded value of the period (`text/csv`: `t,receivedAt,timestamp,value,validity,quality,rcb,seqNum`), in the order of the time axis; `maxPoints` does not apply.',
      }),
    ),
    space: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'The space, for a link that cannot send `X-Space` (a download of the CSV): the same rule as the header, which wins when both are sent.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const getConnectionHistory = defineOperation({
  operationId: 'getConnectionHistory',
  service: 'history',
  summary: 'Trend of one attribute',
  tags,
  description:
    "The recorded values of one attribute of the connection over a period, at most `maxPoints` of them [1000, at most 10,000], each at its place on the time axis (`t`: the device's time when the value carries one, the time of receipt otherwise; both are given as `timestamp` and `receivedAt`), so values a device or a site buffered during an outage land where they happened. A period holding more values is answered in buckets (of recorded values, of the per-minute or of the per-hour rollups, whichever is finest within `maxPoints`), each with its average as `value`, its `min`, `max`, `count` and worst quality, so spikes survive; a value that arrived late is in the bucket of its time. No bucket counts a value outside `from`–`to`: a period, or buckets, shorter than a rollup's step are made of the recorded values. `gaps` are the stretches in which the session with the device was down. `format=csv` streams every recorded value of the period instead. A `from` after `to`, a date that is no date, or an attribute the connection never recorded: 400. Values are kept `HISTORY_RETENTION_DAYS`.",
  request: requestSchema({ params: connectionParams, query: historyQuery }),
  response: HistoryAnswer,
  http: {
    ...binding('GET', '/api/connections/:connectionId/history', 200, 'viewer', ['not_found', 'validation_failed']),
    gatewayRoute: 'history',
  },
});

/** Internal: one page of the raw points of a period, for the gateway's CSV stream. */
export const readConnectionHistoryPage = defineOperation({
  operationId: 'readConnectionHistoryPage',
  service: 'history',
  summary: 'A page of recorded values',
  tags,
  request: requestSchema({
    params: connectionParams,
    query: Type.Object(
      {
        reference: ObjectReference,
        from: time('Start of the period.'),
        to: time('End of the period.'),
        after: Type.Optional(Type.String({ maxLength: 200, description: 'The cursor the previous page answered.' })),
        size: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 2000 })),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    rows: Type.Array(
      Type.Object({
        t: Type.String({ description: 'The place on the time axis.' }),
        receivedAt: Type.String(),
        timestamp: Type.Union([Type.String(), Type.Null()]),
        value: Type.Unknown(),
        quality: ValueQualityOrNull,
        rcb: Type.String(),
        seqNum: Type.Union([Type.Integer(), Type.Null()]),
      }),
    ),
    next: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const HistorySummaryEntry = Type.Object({
  reference: Type.String(),
  first: time('The first recorded value held.'),
  last: time('The last recorded value.'),
  count: Type.Integer({ minimum: 0 }),
});

export const getConnectionHistorySummary = defineOperation({
  operationId: 'getConnectionHistorySummary',
  service: 'history',
  summary: 'What the history holds of a connection',
  tags,
  description: 'Per attribute of the connection that has recorded values: the first and last time held and how many values.',
  request: requestSchema({ params: connectionParams }),
  response: Type.Array(HistorySummaryEntry),
  http: binding('GET', '/api/connections/:connectionId/history/summary', 200, 'viewer'),
});

export const historyOperations = [getConnectionHistory, readConnectionHistoryPage, getConnectionHistorySummary];
