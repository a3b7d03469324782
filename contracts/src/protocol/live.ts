import { Type, type Static } from '@sinclair/typebox';
import { deadlines, defineOperation, NoContent, requestSchema } from '../operation.ts';
import { ReportedValue, SessionWarning, ValueQualityOrNull } from './events.ts';
import { binding, connectionParams, notConnected, refused } from './session_binding.ts';

export { deviceRequestsPerConnectionSetting } from './session_binding.ts';

/**
 * Live IEC 61850 sessions: start and stop (kept across restarts), the session's state, and what an
 * engineer does with a connected device: read, write, control, report blocks, the last reported values.
 * Operations on the device are answered by the replica that holds the connection, wherever they arrive.
 */
const tags = ['IEC 61850 sessions'];
/** An object reference: `LD/LN.DO.DA[FC]` (IEC 61850) or `LD/LN$FC$DO$DA` (MMS); an array element by its index. */
export const ObjectReference = Type.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[A-Za-z0-9_]+/[A-Za-z0-9_$.\\[\\]()]+$',
  description:
    'An object reference: `LD/LN.DO.DA[FC]` or `LD/LN$FC$DO$DA`. An array element, or a part of one, is named by its index in parentheses: `LD/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`, `LD/MHAI1$MX$HA$phsAHar(2)$cVal$mag$f`.',
});

/** What the read and write operations say of array elements. */
const arrayElements =
  "An array element, or a part of one (`MHAI1.HA.phsAHar(2)`, `MHAI1.HA.phsAHar(2).cVal.mag.f`), is read and written through MMS alternate access and answered with the element's type; an index outside the array as the device describes it is 404 before the device is asked, a malformed index (`phsAHar(x)`, `phsAHar(01)`) 400.";

/** What the holding replica reports about a connection's session. */
export const SessionView = Type.Object({
  started: Type.Boolean({ description: 'Whether the connection is started (kept across restarts).' }),
  status: Type.Union([Type.Literal('Connected'), Type.Literal('Disconnected')]),
  state: Type.Union([Type.Literal('connecting'), Type.Literal('connected'), Type.Literal('waiting'), Type.Literal('stopped')], {
    description: '`waiting`: between two attempts to connect.',
  }),
  since: Type.String({ format: 'date-time' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  reconnects: Type.Integer({ minimum: 0, description: 'Attempts that failed or associations that ended since the connection was taken.' }),
  identity: Type.Union([Type.Object({ vendor: Type.String(), model: Type.String(), revision: Type.String() }), Type.Null()], {
    description: "The device's answer to MMS identify.",
  }),
  heldBy: Type.Union([Type.String(), Type.Null()], { description: 'The protocol-service replica holding the association.' }),
  warnings: Type.Array(SessionWarning, {
    description:
      "`model_mismatch`: the connected device's logical devices or nodes differ from the SCL file's IED; `buffer_overflow`: a buffered block lost reports while the device buffered them.",
  }),
});
export type SessionView = Static<typeof SessionView>;

export const startConnection = defineOperation({
  operationId: 'startConnection',
  service: 'protocol',
  summary: 'Start a connection',
  tags,
  description:
    'Marks the connection started: a protocol-service replica takes it and keeps an association with the device, reconnecting with backoff. Kept across restarts. Starting a started connection changes nothing.',
  request: requestSchema({ params: connectionParams }),
  response: NoContent,
  http: binding('POST', '/api/connections/:connectionId/start', 204, 'editor'),
});

export const stopConnection = defineOperation({
  operationId: 'stopConnection',
  service: 'protocol',
  summary: 'Stop a connection',
  tags,
  description: 'Marks the connection stopped; its association is concluded within a few seconds.',
  request: requestSchema({ params: connectionParams }),
  response: NoContent,
  http: binding('POST', '/api/connections/:connectionId/stop', 204, 'editor'),
});

export const getConnectionSession = defineOperation({
  operationId: 'getConnectionSession',
  service: 'protocol',
  summary: 'The session of a connection',
  tags,
  description:
    "State, since when, the last error, the reconnect count and the device's identity, as the replica holding the connection reports them.",
  request: requestSchema({ params: connectionParams }),
  response: SessionView,
  http: binding('GET', '/api/connections/:connectionId/session', 200, 'viewer'),
});

/**
 * With a value read: the quality and time stamp of its data object, where the same read carried them (a
 * read has no TimeOfEntry, so `timestampSource` is `attribute` or null).
 */
const ReadStamp = {
  quality: Type.Optional(ValueQualityOrNull),
  timestamp: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "The `t` of the value's data object in the same read; null where it did not carry it.",
    }),
  ),
  timestampSource: Type.Optional(Type.Union([Type.Literal('attribute'), Type.Null()])),
};

/** A value read from a device, or why it could not be; a data set answers its members. */
export const ReadResult = Type.Object({
  reference: Type.String(),
  value: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String()),
  ...ReadStamp,
  members: Type.Optional(
    Type.Array(
      Type.Object({ reference: Type.String(), value: Type.Optional(Type.Unknown()), error: Type.Optional(Type.String()), ...ReadStamp }),
      { description: "A data set's members in order, each with its value (and its data object's quality and time) or error." },
    ),
  ),
});

/** A data set: `LD/LN.Name` or `LD/LN$Name`. */
const DataSetReference = Type.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[A-Za-z0-9_]+/[A-Za-z0-9_]+[.$][A-Za-z0-9_]+$',
  description: 'A data set: `LD/LN.Name` or `LD/LN$Name`.',
});

export const readConnectionValues = defineOperation({
  operationId: 'readConnectionValues',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Read values from the device',
  tags,
  description: `Reads up to 100 object references, each answering its value or its error, and up to 20 data sets (\`dataSets\`), each answering its members with their values, in that order. At least one of the two. A value carries \`quality\` and \`timestamp\` of its data object when the same read carries them: read \`AnIn1.mag.f\` with \`AnIn1.q\` and \`AnIn1.t\` (or a data set holding them), or the data object whole; at any depth (\`A.phsA.cVal.mag.f\` takes \`A.phsA.q\`, \`HA.phsAHar(2).cVal.mag.f\` takes \`HA.phsAHar(2).q\`); else null. ${arrayElements} A data set member that is an array element keeps its index in its reference. ${notConnected}`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object(
      {
        references: Type.Optional(Type.Array(ObjectReference, { maxItems: 100 })),
        dataSets: Type.Optional(Type.Array(DataSetReference, { maxItems: 20 })),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Array(ReadResult),
  http: {
    ...binding('POST', '/api/connections/:connectionId/read', 200, 'viewer', [
      'not_found',
      'not_connected',
      'site_unreachable',
      'overloaded',
      'device_refused',
      'bad_request',
      'bad_gateway',
    ]),
    consumes: ['application/json'],
  },
});

export const writeConnectionValue = defineOperation({
  operationId: 'writeConnectionValue',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Write a value to the device',
  tags,
  description: `Writes one data attribute, converted to its type on the device; a value of the wrong type, or an attribute the model says is read-only (functional constraint ST, MX, OR, EX or CO), is 400 before the device is asked; an attribute the device does not have is 404. ${arrayElements} ${notConnected} ${refused}`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object({ reference: ObjectReference, value: Type.Unknown() }, { additionalProperties: false }),
  }),
  response: NoContent,
  http: {
    ...binding('POST', '/api/connections/:connectionId/write', 204, 'editor', [
      'not_found',
      'not_connected',
      'site_unreachable',
      'overloaded',
      'device_refused',
      'bad_request',
      'validation_failed',
    ]),
    consumes: ['application/json'],
  },
});

export const operateConnectionControl = defineOperation({
  operationId: 'operateConnectionControl',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Operate a control',
  tags,
  description: `Operates a controllable data object (\`LD/LN.DO\`) by its control model: direct, select-before-operate or enhanced security, and answers when the device has (for enhanced security: its CommandTermination), within the request's deadline. One operation per control object at a time: while a select, operate or cancel is pending on it, another answers 409 \`control_in_progress\` at once. A status-only object is 400, an object the device does not have 404, both before anything is operated. ${notConnected} ${refused} For a control, \`addCause\` is the AddCause of the device's LastApplError or negative CommandTermination.`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object(
      {
        reference: ObjectReference,
        value: Type.Unknown({ description: 'ctlVal: a boolean for SPC/DPC, a number for APC/INC.' }),
        test: Type.Optional(Type.Boolean()),
        interlockCheck: Type.Optional(Type.Boolean()),
        synchroCheck: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  }),
  response: NoContent,
  http: {
    ...binding('POST', '/api/connections/:connectionId/control', 204, 'editor', [
      'not_found',
      'not_connected',
      'site_unreachable',
      'overloaded',
      'control_in_progress',
      'device_refused',
      'bad_request',
      'upstream_timeout',
    ]),
    consumes: ['application/json'],
  },
});

/** A report block the connection keeps enabled. */
export const ReportSubscription = Type.Object(
  {
    rcb: ObjectReference,
    integrityPeriodMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
    generalInterrogation: Type.Optional(Type.Boolean()),
    triggers: Type.Optional(
      Type.Array(
        Type.Union([Type.Literal('dchg'), Type.Literal('qchg'), Type.Literal('dupd'), Type.Literal('period'), Type.Literal('gi')]),
        { uniqueItems: true },
      ),
    ),
    optionalFields: Type.Optional(
      Type.Array(
        Type.Union(
          [
            'sequence-number',
            'report-time-stamp',
            'reason-for-inclusion',
            'data-set-name',
            'data-reference',
            'buffer-overflow',
            'entry-id',
            'conf-revision',
            'segmentation',
          ].map((f) => Type.Literal(f)),
        ),
        { uniqueItems: true, description: "OptFlds to set; the block's own when absent." },
      ),
    ),
    bufferTimeMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 3_600_000, description: 'BufTm: how long the device gathers changes into one report.' }),
    ),
  },
  { additionalProperties: false },
);

export const enableConnectionReport = defineOperation({
  operationId: 'enableConnectionReport',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Enable a report block',
  tags,
  description:
    "Keeps the report block enabled: now when connected, and again after every reconnect (a buffered block resumes after the last EntryID received). Each report is published as `events.protocol.report`, attributed to the block that sent it: when another block enabled on the connection already sends this block's RptID, a unique RptID is written into it first; a device that refuses that write answers 409 `rptid_conflict` (`rptIdOf` names the other block) and nothing changes.",
  request: requestSchema({ params: connectionParams, body: ReportSubscription }),
  response: NoContent,
  http: {
    ...binding('POST', '/api/connections/:connectionId/reports', 204, 'editor', [
      'not_found',
      'rptid_conflict',
      'device_refused',
      'overloaded',
    ]),
    consumes: ['application/json'],
  },
});

export const disableConnectionReport = defineOperation({
  operationId: 'disableConnectionReport',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Disable a report block',
  tags,
  description:
    'Stops keeping the report block enabled, disables it on the device when connected and gives its reservation up; its values are dropped. No other block is touched. 404 when it was not enabled.',
  request: requestSchema({ params: connectionParams, query: Type.Object({ rcb: ObjectReference }, { additionalProperties: false }) }),
  response: NoContent,
  http: binding('DELETE', '/api/connections/:connectionId/reports', 204, 'editor'),
});

export const getConnectionReports = defineOperation({
  operationId: 'getConnectionReports',
  service: 'protocol',
  summary: 'Report blocks kept enabled',
  tags,
  request: requestSchema({ params: connectionParams }),
  response: Type.Array(ReportSubscription),
  http: binding('GET', '/api/connections/:connectionId/reports', 200, 'viewer'),
});

export const getConnectionValues = defineOperation({
  operationId: 'getConnectionValues',
  service: 'protocol',
  summary: 'Last reported values',
  tags,
  description:
    "The last value of every attribute the device has reported since the holding replica took the connection, one per data set member (a member that is an array element keeps its index: `HA.phsAHar(2)[MX]`, `HA.phsAHar(3).cVal.mag.f[MX]`): its `quality` and the device's `timestamp`, `receivedAt`, the block that sent it, the reasons for inclusion and the report's sequence number. `quality` and `timestamp` are those of the attribute's data object in the same report, at any depth (`AnIn1.mag.f` takes `AnIn1.q` and `AnIn1.t`, `A.phsA.cVal.mag.f` of a WYE takes `A.phsA.q` and `A.phsA.t`; the data object is found from the device's model); without that `t`, `timestamp` is the report's TimeOfEntry; `timestampSource` says which (`attribute`, `entry`, or null with neither). Device times are decoded as libiec61850 decodes them. While the device is away the last values answer with `stale: true`. Values of a disabled block are dropped; all are dropped when the device's identity or model changes. An empty list when no replica holds the connection.",
  request: requestSchema({ params: connectionParams }),
  response: Type.Array(
    Type.Composite([
      Type.Omit(ReportedValue, ['connectionId']),
      Type.Object({
        stale: Type.Boolean(),
        at: Type.String({ format: 'date-time', description: 'The same as `receivedAt` (kept for older clients).' }),
      }),
    ]),
  ),
  http: binding('GET', '/api/connections/:connectionId/values', 200, 'viewer', ['not_found', 'site_unreachable']),
});

/** Internal: the live model of a connected device, browsed by the replica holding it (see browseConnection). */
export const browseConnectionDevice = defineOperation({
  operationId: 'browseConnectionDevice',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Browse the connected device',
  tags,
  request: requestSchema({ params: connectionParams }),
  response: Type.Object({ logicalDevices: Type.Array(Type.Unknown()) }),
});

/** One write, control or setting group change an operator sent to a device, and how it ended. */
export const ControlLogEntry = Type.Object({
  at: Type.String({ format: 'date-time' }),
  userId: Type.Union([Type.String(), Type.Null()]),
  username: Type.Union([Type.String(), Type.Null()]),
  action: Type.Union(
    [
      'write',
      'control',
      'select-active-sg',
      'select-edit-sg',
      'set-edit-sg-values',
      'confirm-edit-sg-values',
      'file-download',
      'file-delete',
    ].map((a) => Type.Literal(a)),
    {
      description:
        "`write`, `control`, or a setting group service (IEC 61850-7-2): `select-active-sg`, `select-edit-sg` (group 0: the edit cancelled), `set-edit-sg-values`, `confirm-edit-sg-values`. `reference` is then the block (`LD/LLN0.SGCB`). `file-download`: a file of the device's file store (`reference` its name, `value` `{size}`); `file-delete`: a file deleted from it (`reference` its name, `value` null).",
    },
  ),
  reference: Type.String(),
  value: Type.Unknown(),
  outcome: Type.String({ description: '`ok`, or the problem code it was answered with (`device_refused`, `control_in_progress`, …).' }),
  status: Type.Integer({ description: 'The HTTP status it was answered with.' }),
  deviceError: Type.Union(
    [Type.Object({ service: Type.String(), error: Type.String(), addCause: Type.Optional(Type.String()) }), Type.Null()],
    { description: "The device's reason, when it refused." },
  ),
  detail: Type.Union([Type.String(), Type.Null()]),
});

export const getConnectionControlLog = defineOperation({
  operationId: 'getConnectionControlLog',
  service: 'protocol',
  summary: 'Writes, controls, setting group changes and file downloads',
  tags,
  description:
    "Every write, control and setting group change (active group, edit selection, edit values, confirmation) sent through the platform to this connection's device, and every file downloaded from its file store, newest first, paged: who, what, when, the outcome and the device's reason (IEC 62443-3-3 SR 2.8). Editors of the space.",
  request: requestSchema({
    params: connectionParams,
    query: Type.Object(
      {
        page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
        size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    content: Type.Array(ControlLogEntry),
    number: Type.Integer(),
    size: Type.Integer(),
    totalElements: Type.Integer(),
    totalPages: Type.Integer(),
  }),
  http: binding('GET', '/api/connections/:connectionId/control-log', 200, 'editor'),
});

/** The live operations that must run on the replica holding the connection. */
export const liveOperations = [
  readConnectionValues,
  writeConnectionValue,
  operateConnectionControl,
  getConnectionValues,
  browseConnectionDevice,
];

export const sessionOperations61850 = [
  startConnection,
  stopConnection,
  getConnectionSession,
  enableConnectionReport,
  disableConnectionReport,
  getConnectionReports,
  getConnectionControlLog,
  ...liveOperations,
];
