import { Type, type Static } from '@sinclair/typebox';
import { deadlines, defineOperation, NoContent, requestSchema } from '../operation.ts';
import { InclusionReason } from './events.ts';
import { binding, connectionParams, notConnected, refused } from './session_binding.ts';

/**
 * What a connected device keeps of its past: its file store (a protection relay's disturbance records,
 * COMTRADE), read with MMS file services, and its logs (IEC 61850-7-2 LOG), read as MMS journals
 * (IEC 61850-8-1); a file is deleted with MMS FileDelete. Each is answered by the replica holding the
 * connection; a file comes to the client in chunks the gateway asks for one after the other, each well
 * inside a bus message.
 */
const tags = ['IEC 61850 sessions'];

/** `MAX_FILE_DOWNLOAD_BYTES`: the largest device file a download fetches (64 MiB by default). */
export const maxFileDownloadBytesSetting = {
  name: 'MAX_FILE_DOWNLOAD_BYTES',
  fallback: 64 * 1024 * 1024,
  min: 1024,
  max: 2 ** 32 - 1,
} as const;

/**
 * Octets a download's chunk leaves for the reply's headers below the bus's largest message (`maxPayload`,
 * NATS counts headers in it): a chunk holds at most `maxPayload` less this.
 */
export const deviceFileChunkHeadroom = 4096;

/** Downloads of one connection's files under way at once (devices keep few files open for a client); one more is 503 `overloaded`. */
export const maxDownloadsPerConnection = 4;

/** A name in the device's file store, as MMS FileName carries it. */
const pathRule =
  "A name in the device's file store as its directory lists it (`COMTRADE/DR_0001.CFG`; some devices write a leading `/`). Up to 255 characters; a `.` or `..` segment, a backslash and control characters are refused with 400 before the device is asked.";
const DevicePath = (options: { minLength: number; description: string }) =>
  Type.String({
    minLength: options.minLength,
    maxLength: 255,
    pattern: '^(?!(?:.*/)?\\.{1,2}(?:/|$))[^\\u0000-\\u001f\\u007f\\\\]*$',
    description: `${options.description} ${pathRule}`,
  });

/** One entry of a device's directory. */
export const DeviceFileEntry = Type.Object({
  name: Type.String({
    description: "The entry's name as the device gives it: what `…/files/content?path=` takes. A directory's ends in `/`.",
  }),
  size: Type.Integer({ minimum: 0, description: 'Octets (0 for a directory).' }),
  lastModified: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the file last changed, as the device says; null when it does not.',
  }),
  kind: Type.Union([Type.Literal('file'), Type.Literal('directory'), Type.Literal('comtrade')], {
    description:
      '`comtrade`: a part of a COMTRADE record (`.cfg`, `.dat`, `.hdr`, `.inf`, `.cff`, either case); `directory`: a name ending in `/`.',
  }),
});

/** The files of one COMTRADE record. */
export const ComtradeRecord = Type.Object({
  name: Type.String({ description: 'The name the files share, without the extension (`COMTRADE/DR_0001`).' }),
  cfg: Type.Optional(Type.String()),
  dat: Type.Optional(Type.String()),
  hdr: Type.Optional(Type.String()),
  inf: Type.Optional(Type.String()),
  cff: Type.Optional(Type.String({ description: 'The single-file form of COMTRADE 2013.' })),
});

export const listConnectionFiles = defineOperation({
  operationId: 'listConnectionFiles',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: "List a directory of the device's file store",
  tags,
  description: `The entries of a directory of the device's file store (MMS FileDirectory), each with its size, its time and what it is, and the COMTRADE records among them (\`comtrade\`: a \`.cfg\` with its \`.dat\`, and the \`.hdr\` and \`.inf\` of the same name where there are). \`path\` names the directory (the root when absent) or one file. Devices list differently: libiec61850 lists every file below the directory with its path and no directories, many relays the entries directly in it with directories as names ending in \`/\`; the answer is what the device listed. The platform follows the device's pages (moreFollows) up to 1000 entries; past them \`moreFollows\` is true and \`next\` is the \`after\` of the next page. A name the device has no file or directory of is 404. ${notConnected} ${refused}`,
  request: requestSchema({
    params: connectionParams,
    query: Type.Object(
      {
        path: Type.Optional(DevicePath({ minLength: 0, description: 'The directory (or file) to list; the root when absent or empty.' })),
        after: Type.Optional(DevicePath({ minLength: 1, description: 'The `next` of the page before: the entries after this name.' })),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    path: Type.String({ description: 'The directory listed (empty: the root).' }),
    entries: Type.Array(DeviceFileEntry),
    comtrade: Type.Array(ComtradeRecord, { description: 'The COMTRADE records among `entries`.' }),
    moreFollows: Type.Boolean(),
    next: Type.Union([Type.String(), Type.Null()], { description: 'With `moreFollows`: the `after` of the next page.' }),
  }),
  http: binding('GET', '/api/connections/:connectionId/files', 200, 'editor', [
    'not_found',
    'not_connected',
    'site_unreachable',
    'overloaded',
    'device_refused',
    'validation_failed',
  ]),
});

const fileQuery = Type.Object(
  { path: DevicePath({ minLength: 1, description: 'The file to download.' }) },
  { additionalProperties: false },
);

export const downloadConnectionFile = defineOperation({
  operationId: 'downloadConnectionFile',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: "Download a file of the device's file store",
  tags,
  description: `The file's content, byte for byte (\`application/octet-stream\`, \`Content-Disposition: attachment\` with its name, \`Content-Length\` the size the device announced), read from the device with MMS FileOpen, FileRead and FileClose and streamed as it comes: the platform never holds the whole file. A file larger than \`MAX_FILE_DOWNLOAD_BYTES\` (64 MiB by default) is 413 and closed on the device at once, before anything is sent. Each download is kept in the control log (\`action: file-download\`, \`reference\` the name, \`value\` its size) with its outcome, refused or not. A name the device has no file of is 404. A device that ends the association, or sends other than it announced, cuts the stream short of \`Content-Length\`. A connection has at most ${maxDownloadsPerConnection} downloads under way (each holds a file open on the device); one more is 503 \`overloaded\` with \`Retry-After\` at once. ${notConnected} ${refused}`,
  request: requestSchema({ params: connectionParams, query: fileQuery }),
  response: Type.String({ format: 'binary' }),
  http: {
    ...binding('GET', '/api/connections/:connectionId/files/content', 200, 'editor', [
      'not_found',
      'not_connected',
      'site_unreachable',
      'overloaded',
      'device_refused',
      'payload_too_large',
      'validation_failed',
    ]),
    gatewayRoute: 'device-file-download',
    produces: 'application/octet-stream',
  },
});

export const deleteConnectionFile = defineOperation({
  operationId: 'deleteConnectionFile',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: "Delete a file of the device's file store",
  tags,
  description: `Deletes one file of the device's file store (MMS FileDelete): a disturbance record's part or a log the protocol engineer has fetched and wants gone from the relay. The device decides: many relays refuse to delete some files (libiec61850's example server refuses \`IEDSERVER.BIN\`), and that refusal is answered as it is. Each deletion is kept in the control log (\`action: file-delete\`, \`reference\` the name) with its outcome, refused or not. A name the device has no file of is 404. ${notConnected} ${refused}`,
  request: requestSchema({
    params: connectionParams,
    query: Type.Object({ path: DevicePath({ minLength: 1, description: 'The file to delete.' }) }, { additionalProperties: false }),
  }),
  response: NoContent,
  http: binding('DELETE', '/api/connections/:connectionId/files', 204, 'editor', [
    'not_found',
    'not_connected',
    'site_unreachable',
    'overloaded',
    'device_refused',
    'validation_failed',
  ]),
});

const downloadId = Type.String({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'The download openConnectionFile answered.',
});

/** Internal: opens a device file for a download (FileOpen) on the replica holding the connection; kept in the control log. */
export const openConnectionFile = defineOperation({
  operationId: 'openConnectionFile',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Open a device file for a download',
  tags,
  request: requestSchema({ params: connectionParams, query: fileQuery }),
  response: Type.Object({
    download: downloadId,
    name: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    lastModified: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
});

/**
 * Internal: the next chunk of an open download, the octets the device has sent since the chunk before (at
 * least one, unless it is the last; at most one bus message less {@link deviceFileChunkHeadroom}), as the
 * reply's body; the file is closed after the last.
 */
export const readConnectionFileChunk = defineOperation({
  operationId: 'readConnectionFileChunk',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Read the next chunk of a device file',
  tags,
  request: requestSchema({
    params: connectionParams,
    query: Type.Object(
      { download: downloadId, index: Type.Integer({ minimum: 0, maximum: 100_000_000 }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({ data: Type.Uint8Array(), done: Type.Boolean() }),
  replyOctets: true,
});

/** Internal: ends a download before its last chunk (FileClose); a download already ended changes nothing. */
export const closeConnectionFile = defineOperation({
  operationId: 'closeConnectionFile',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Close a device file',
  tags,
  request: requestSchema({ params: connectionParams, query: Type.Object({ download: downloadId }, { additionalProperties: false }) }),
  response: NoContent,
});

/** A log: `LD/LN.LogName` (IEC 61850) or `LD/LN$LogName` (its MMS journal). */
const LogReference = Type.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[A-Za-z0-9_]+/[A-Za-z0-9_]+[.$][A-Za-z0-9_]+$',
  description:
    "The log: `LD/LN.LogName` or `LD/LN$LogName` (the log control block's LogRef; libiec61850's examples: `simpleIOGenericIO/LLN0$EventLog`). The `/` travels as `%2F`.",
});

const time = (description: string) => Type.String({ format: 'date-time', description });

/** One logged value. */
const LogValue = Type.Object({
  reference: Type.String({ description: 'What was logged, as an IEC 61850 reference (`LD/LN.DO.DA[FC]`), or the tag the device gave.' }),
  value: Type.Unknown({ description: "The value, as `…/read` answers values (by the device's types)." }),
  reason: Type.Union([Type.Array(InclusionReason), Type.Null()], {
    description: "Why it was logged (the entry's ReasonCode); null without one.",
  }),
});

/** One log entry. */
export const LogEntry = Type.Object({
  entryId: Type.String({ description: 'Hex of the EntryID: with `time`, where `after` and `entryTime` resume.' }),
  time: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: "The entry's time (TimeOfEntry)." }),
  values: Type.Array(LogValue),
});
export type LogEntry = Static<typeof LogEntry>;

export const queryConnectionLog = defineOperation({
  operationId: 'queryConnectionLog',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Read the entries of a log',
  tags,
  description: `The entries of a log of the device (MMS ReadJournal, as IEC 61850-8-1 maps the log services), oldest first, each with its EntryID, its time and its values with the reasons they were logged. By time (QueryLogByTime): \`from\` and \`to\`, each optional (from the start of the log; up to now). After an entry (QueryLogAfter): \`after\`, the entry's \`entryId\`, with its \`time\` as \`entryTime\`, as IEC 61850-7-2 asks of QueryLogAfter; not together with \`from\`, and \`to\` then bounds the entries too. One page is what the device answers at once; when more follow, \`moreFollows\` is true and \`next\` holds the query of the next page (\`after\`, \`entryTime\` and, for a query by time, \`to\`). A log the device does not have is 404. ${notConnected} ${refused}`,
  request: requestSchema({
    params: Type.Object({ ...connectionParams.properties, logReference: LogReference }, { additionalProperties: false }),
    query: Type.Object(
      {
        from: Type.Optional(time('Entries at or after this time.')),
        to: Type.Optional(time('Entries at or before this time; now when absent.')),
        after: Type.Optional(
          Type.String({ pattern: '^([0-9A-Fa-f]{2}){1,64}$', description: 'The entries after this one: its `entryId` (hex).' }),
        ),
        entryTime: Type.Optional(time("With `after`: that entry's `time`.")),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({
    log: Type.String({ description: 'The log, as `LD/LN$LogName`.' }),
    entries: Type.Array(LogEntry),
    moreFollows: Type.Boolean(),
    next: Type.Union(
      [
        Type.Object({
          after: Type.String(),
          entryTime: Type.String({ format: 'date-time' }),
          to: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        Type.Null(),
      ],
      { description: 'With `moreFollows`: the query of the next page.' },
    ),
  }),
  http: binding('GET', '/api/connections/:connectionId/logs/:logReference', 200, 'viewer', [
    'not_found',
    'not_connected',
    'site_unreachable',
    'overloaded',
    'device_refused',
    'validation_failed',
  ]),
});

/** The device record operations, for the registry; the internal ones run on the holder. */
export const deviceRecordOperations = [
  listConnectionFiles,
  downloadConnectionFile,
  deleteConnectionFile,
  openConnectionFile,
  readConnectionFileChunk,
  closeConnectionFile,
  queryConnectionLog,
];
