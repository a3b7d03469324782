import {
  LiveAlarm,
  LiveConfigChange,
  LiveEnd,
  LiveScriptRun,
  LiveSession,
  LiveSnapshot,
  liveTopics,
  maxLiveConnections,
  ReportedValue,
} from '@scada/contracts';

type Json = Record<string, unknown>;

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Json;
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** The data schemas of the live channel's events, for `components.schemas`. */
export function liveSchemas(): Record<string, Json> {
  return {
    LiveSnapshot: plain(LiveSnapshot),
    LiveValue: plain(ReportedValue),
    LiveSession: plain(LiveSession),
    LiveConfigChange: plain(LiveConfigChange),
    LiveScriptRun: plain(LiveScriptRun),
    LiveAlarm: plain(LiveAlarm),
    LiveEnd: plain(LiveEnd),
  };
}

const events = [
  [
    'snapshot',
    'LiveSnapshot',
    'First on every stream that does not resume: the sessions and last values (each with `stale`) of what the filter covers, whatever the size of the space. A large one comes as several `data:` lines (one per page), which SSE joins with line feeds into one JSON text.',
  ],
  [
    'value',
    'LiveValue',
    "One reported attribute: `quality` and `timestamp` are the `q` and `t` of its data object in the same report, at any depth (`AnIn1.mag.f` takes `AnIn1.q`, `PhV.phsA.cVal.mag.f` of a WYE `PhV.phsA.q`); without that `t`, `timestamp` is the report's TimeOfEntry, and `timestampSource` says which (`attribute`, `entry`, or null with neither). `receivedAt` is the platform's time; `reason` and `seqNum` as the report carried them (null otherwise). Snapshot values carry the same fields.",
  ],
  [
    'session',
    'LiveSession',
    'A live session changed state: a device went away (`waiting`) or came back (`connected`), or its warnings changed.',
  ],
  ['config', 'LiveConfigChange', 'A configuration change committed (projects, boards, faceplates, scripts, connections, …).'],
  ['script', 'LiveScriptRun', "A script's run ended, scheduled or by hand (topic `scripts`), with its outcome and duration."],
  [
    'alarm',
    'LiveAlarm',
    'An alarm changed state (topic `alarms`): one row of the alarm journal, with its connection, group, project and priority.',
  ],
  [
    'end',
    'LiveEnd',
    'The last event of a stream the platform ends, with the reason; its `id` is that of the last event the client has whole (empty when the opening was cut short), so a reconnect resumes after it.',
  ],
] as const;

/** `GET /api/live`, documented with its events and their data schemas. */
export function livePaths(): Record<string, Json> {
  return {
    '/api/live': {
      get: {
        operationId: 'followLive',
        tags: ['Live'],
        summary: 'Follow values, sessions, configuration and script runs as Server-Sent Events',
        description: [
          'One `text/event-stream` per client. Each event has an `id:`, an `event:` name and JSON `data:` (one line; the snapshot of a large space several):',
          '',
          ...events.map(([name, schema, text]) => `- \`${name}\` ([${schema}](#/components/schemas/${schema})): ${text}`),
          '',
          'A client that reconnects with `Last-Event-ID` gets every event after that one while the platform still holds it (at least 60 s,',
          '`LIVE_EVENT_RETENTION_SECONDS`), through any gateway replica; otherwise a fresh `snapshot`. A comment line (`:`) comes at least',
          'every 15 s. The stream belongs to the session, not to the token it was opened with: a renewal keeps it. Logout, revocation, a',
          'disabled or deleted user or a role or space taken away end it within a second, the session expiring or the IP filter denying the',
          "client's address within 2 s, each with a last `event: end`; so does a gateway that stops (`shutdown`: reconnect). The opening",
          '(snapshot or replay) is written at the pace the client reads it and never counts against `LIVE_CLIENT_BUFFER_BYTES`; once',
          'live, a client that leaves more than that unread is disconnected. Any role of the space may follow it. `HEAD` answers the',
          "stream's headers at once and holds nothing (no stream is counted against `LIVE_STREAMS_PER_USER`).",
        ].join('\n'),
        security: [{ bearerAuth: [] }, { cookieAuth: [] }],
        parameters: [
          {
            name: 'X-Space',
            in: 'header',
            required: false,
            schema: { type: 'string', maxLength: 64 },
            description: "The space; else `space`, else the caller's default space.",
          },
          {
            name: 'space',
            in: 'query',
            required: false,
            schema: { type: 'string', maxLength: 64 },
            description: "The space, for clients that cannot set headers (a browser's `EventSource`).",
          },
          {
            name: 'connections',
            in: 'query',
            required: false,
            schema: { type: 'string' },
            description: `Comma-separated connection ids (at most ${maxLiveConnections}); default every connection of the space. Filters values and sessions.`,
          },
          {
            name: 'topics',
            in: 'query',
            required: false,
            schema: { type: 'string' },
            description: `Comma-separated of ${liveTopics.map((t) => `\`${t}\``).join(', ')}; default all.`,
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^\\d+(:\\d+)?$' },
            description: 'The id of the last event received, to resume after it.',
          },
        ],
        responses: {
          '200': {
            description: 'The stream. `X-Accel-Buffering: no` keeps proxies from buffering it.',
            headers: { 'X-Accel-Buffering': { schema: { type: 'string', enum: ['no'] } } },
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'Server-Sent Events; the data of each event name is described by `x-events`.' },
                'x-events': Object.fromEntries(events.map(([name, schema]) => [name, { $ref: `#/components/schemas/${schema}` }])),
                example: 'id: 41\nevent: value\ndata: {"connectionId":"…","reference":"LD0/MMXU1.TotW.mag.f","value":12.5,…}\n\n',
              },
            },
          },
          '400': problem('`validation_failed`: an unknown topic, a malformed connection id or parameter; `bad_header`: a bad `X-Space`'),
          '401': problem('No session, or it has ended'),
          '403': problem('`space_forbidden`, `ip_denied`, or `password_change_required` (a password someone else set, not changed yet)'),
          '429': problem('`rate_limited`: the user already has `LIVE_STREAMS_PER_USER` streams on this gateway; with `Retry-After`'),
          '503': problem('The snapshot could not be made (the protocol service has no live replica); with `Retry-After`'),
        },
      },
    },
  };
}
