import { Type, type Static } from '@sinclair/typebox';
import { deadlines, defineOperation, NoContent, requestSchema, type HttpBinding } from '../operation.ts';
import { SclBrowseTree, SclIssue } from './scl_model.ts';

const tags = ['IEC 61850 connections'];
const uuid = (description: string) =>
  Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description });
const connectionParams = Type.Object({ connectionId: uuid('Id of a connection of the space (a UUID).') }, { additionalProperties: false });
const read = (path: string, errors: HttpBinding['errors'] = ['not_found']): HttpBinding => ({
  method: 'GET',
  path,
  status: 200,
  access: 'viewer',
  spaceScoped: true,
  errors,
});

/** Host names and addresses a device can be reached at: IPv4, IPv6 or a DNS name. */
const Host = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^([A-Za-z0-9.-]+|[0-9A-Fa-f:.]+)$',
  description: 'An IPv4 or IPv6 address or a host name.',
});

/**
 * The largest SCL file a connection takes: the setting `MAX_SCL_BYTES`, which the gateway (streaming an
 * upload) and the protocol service (staging it) both read, with one default and one range.
 */
export const maxSclBytesSetting = { name: 'MAX_SCL_BYTES', fallback: 32 * 1024 * 1024, min: 1024, max: 2 ** 31 - 1 } as const;

/** PEM text of certificates or of a key. */
const Pem = (description: string, maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: '-----BEGIN [A-Z0-9 ]+-----', description });

/** ACSE password authentication of a connection: what the device's association asks for. */
export const ConnectionAuthentication = Type.Object(
  {
    password: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7E]+$',
      description:
        'Sent in the association request (AARQ) as the calling authentication value of mechanism 2.2.3.1 (password), a GraphicString: printable ASCII. Sealed at rest under SECRETS_KEY and never answered.',
    }),
  },
  { additionalProperties: false, description: 'ACSE password authentication (IEC 61850-8-1, ISO 8650).' },
);

/** TLS settings of a connection (IEC 62351-3), PEM text throughout. */
export const ConnectionTlsRequest = Type.Object(
  {
    caCert: Pem(
      "The CA certificate(s) the device's certificate must chain to. Only these are trusted for the connection, not the system's roots.",
      65536,
    ),
    clientCert: Type.Optional(
      Pem('The certificate (with its chain) the platform presents, for devices that ask for one. Goes with clientKey.', 65536),
    ),
    clientKey: Type.Optional(
      Pem(
        'The private key of clientCert, unencrypted PKCS#8, PKCS#1 or SEC1 PEM. Sealed at rest under SECRETS_KEY and never answered.',
        16384,
      ),
    ),
    serverName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        pattern: '^([A-Za-z0-9*.-]+|[0-9A-Fa-f:.]+)$',
        description:
          "The name the device's certificate must carry (a subjectAltName DNS name or address; its common name when it has no DNS names, as RFC 6125 checks allow), also sent as SNI. Without it the device's certificate is checked against caCert only, not against a name: IEC 62351-3 lets the CA pin the device, whose certificate names the IED rather than the address it is reached at.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "TLS 1.2 or 1.3 under MMS (IEC 62351-3; devices listen on port 3782 for it). The certificates and key are PEM text, sealed at rest under SECRETS_KEY; references to files are not taken (a file the service can read is not a tenant's to name).",
  },
);

/** What an answer says of a connection's TLS: names and dates of its certificates, never a key. */
export const ConnectionTlsInfo = Type.Object({
  caSubject: Type.String({ description: 'Subject of the (first) CA certificate.' }),
  caExpires: Type.String({ format: 'date-time' }),
  clientCertSubject: Type.Union([Type.String(), Type.Null()], { description: 'Subject of the client certificate; null without one.' }),
  clientCertExpires: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  serverName: Type.Union([Type.String(), Type.Null()], {
    description: "The name the device's certificate must carry; null: checked against the CA only.",
  }),
});

/** The site a platform without sites has, and a connection belongs to unless it names another. */
export const centralSite = 'central';

/** A site's name: the JetStream domain of its NATS server and a subject token, so lower-case letters, digits and '-'. */
export const sitePattern = '^[a-z][a-z0-9-]{0,31}$';

/** A report control block instance by its MMS name, as the browse names it: `LD/LLN0$RP$urcbMeas01`, `LD/LLN0$BR$brcbEvents01`. */
const ReportBlockReference = Type.String({
  minLength: 8,
  maxLength: 255,
  pattern: '^[A-Za-z0-9_]{1,64}/[A-Za-z0-9_]{1,64}\\$(RP|BR)\\$[A-Za-z0-9_]{1,64}$',
  description: 'A report control block instance by its MMS name: `LD/LLN0$RP$urcbMeas01` or `LD/LLN0$BR$brcbEvents01`.',
});

/** The report blocks a connection enables when its session is started: at most this many. */
export const maxEnableReports = 64;

/** What the create and replace operations say of `enableReports`. */
export const enableReportsRule =
  "`enableReports` lists report control blocks (`LD/LLN0$RP$urcbMeas01`) the platform enables, with a general interrogation and the triggers `dchg`, `qchg` and `gi`, each time the connection is started (`POST …/start`, by project or by name): they are kept enabled as `POST /api/connections/{connectionId}/reports` keeps a block, so they are enabled again after every reconnect and listed by `GET …/reports`, and values arrive without a manual step. A block already kept with options of its own keeps them; one disabled by hand stays disabled until the next start. At most 64, each once; a name that is not a report block's MMS name is 400. Absent in a replacement: the stored list is kept; `[]` empties it.";

/** The `connection` part of the with-file bodies, and the plain connection bodies. Unknown fields are rejected. */
export const ConnectionRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique among the connections of its project.' }),
    ip: Host,
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    projectId: uuid("A project of the caller's space; another space's project is 404."),
    protocol: Type.Literal('IEC 61850', { description: 'This service owns IEC 61850 connections only.' }),
    dsc: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    site: Type.Optional(
      Type.String({
        pattern: sitePattern,
        description:
          "The site whose protocol service talks to the device (`central` unless said): a lower-case letter, then up to 31 lower-case letters, digits or '-'. Absent in a replacement: the stored site is kept.",
      }),
    ),
    authentication: Type.Optional(
      Type.Union([ConnectionAuthentication, Type.Null()], {
        description: 'ACSE password authentication. Absent in a replacement: the stored one is kept; null: removed.',
      }),
    ),
    tls: Type.Optional(
      Type.Union([ConnectionTlsRequest, Type.Null()], {
        description: 'TLS (IEC 62351-3). Absent in a replacement: the stored settings are kept; null: removed (plain MMS).',
      }),
    ),
    enableReports: Type.Optional(
      Type.Array(ReportBlockReference, {
        maxItems: maxEnableReports,
        uniqueItems: true,
        description:
          'Report control blocks enabled (with a general interrogation) whenever the connection is started, without a manual step. Absent in a replacement: the stored list is kept.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConnectionRequest = Static<typeof ConnectionRequest>;

/** A check of the connection against its SCL file (ip, port, IED), kept as a warning. */
export const ConnectionCheck = Type.Object({ code: Type.String(), message: Type.String() });

/** What the platform keeps of a connection's SCL file. */
export const SclFileInfo = Type.Object({
  name: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String(),
  edition: Type.String(),
  warnings: Type.Array(SclIssue),
  connectionWarnings: Type.Array(ConnectionCheck),
});

/** A connection with its audit fields and, when one was uploaded, a summary of its SCL file (else null). */
export const ConnectionResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ip: Type.String(),
  port: Type.Integer(),
  projectId: Type.String(),
  protocol: Type.Literal('IEC 61850'),
  dsc: Type.Optional(Type.String()),
  site: Type.String({ description: 'The site whose protocol service talks to the device (`central`: the central one).' }),
  createdBy: Type.String(),
  creationDate: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.String(),
  lastModifiedDate: Type.String({ format: 'date-time' }),
  sclFile: Type.Union([SclFileInfo, Type.Null()]),
  hasPassword: Type.Boolean({ description: 'Whether the connection authenticates with an ACSE password (never answered itself).' }),
  tls: Type.Union([ConnectionTlsInfo, Type.Null()], { description: 'The TLS settings without their key; null: plain MMS.' }),
  enableReports: Type.Array(Type.String(), {
    description: 'Report control blocks enabled (with a general interrogation) whenever the connection is started; empty: none.',
  }),
});
export type ConnectionResponse = Static<typeof ConnectionResponse>;

/** A staged upload as the gateway hands it over once every chunk arrived. */
export const StagedUpload = Type.Object({
  id: uuid('Id of the staged upload.'),
  name: Type.String({ maxLength: 255 }),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  chunks: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
});

/** The multipart body as documented: a JSON `connection` part and an optional SCL `file` part. */
const WithFileBody = Type.Object(
  {
    connection: Type.String({
      contentMediaType: 'application/json',
      // The OpenAPI document lists ConnectionRequest among its components; the part is its JSON text.
      contentSchema: Type.Unsafe({ $ref: '#/components/schemas/ConnectionRequest' }),
      description: 'JSON text of a ConnectionRequest (name, ip, port, projectId, protocol, dsc, authentication, tls, enableReports).',
    }),
    file: Type.Optional(
      Type.String({ format: 'binary', description: 'An SCL file (ICD, CID, IID, SCD or SSD) of at most MAX_SCL_BYTES.' }),
    ),
  },
  { additionalProperties: false },
);

/** The message the gateway sends the service for a with-file operation. */
const WithFileMessage = Type.Object(
  { connection: ConnectionRequest, upload: Type.Union([StagedUpload, Type.Null()]) },
  { additionalProperties: false },
);

/** What the create and replace operations say of a connection's security settings. */
export const connectionSecurityRule =
  "`authentication` (an ACSE password) and `tls` (IEC 62351-3: CA, client certificate and key, server name) are sealed at rest under SECRETS_KEY and never answered: answers carry `hasPassword` and `tls` with the certificates' subjects and expiry dates instead. In a replacement an absent field keeps what is stored and null removes it; a started connection associates again with the new settings. A certificate or key that does not parse, or a key that is not the client certificate's, is 400. A device that refuses the password or a certificate says so in the session's `lastError`.";

const sclErrors =
  'An SCL file that does not parse is 400 `scl_invalid`; each finding is in `errors` as `{path: "/file", message: "line L, column C: …"}`. Larger than MAX_SCL_BYTES: 413. Slips that tools in the field write are kept with the file as `sclFile.warnings` instead: a type repeated identically, an empty type id referenced consistently, an unknown common data class, and a reference to an undefined type inside a type that no logical node uses (such a type may be incomplete; in a type a logical node uses it is `scl_invalid`).';

/** Creates a connection with its SCL file, both stored together or not at all. */
export const createConnectionWithFile = defineOperation({
  operationId: 'createConnectionWithFile',
  service: 'protocol',
  summary: 'Create an IEC 61850 connection with its SCL file',
  tags,
  description: `multipart/form-data: a \`connection\` part (JSON) and an optional \`file\` part. ${sclErrors} ${connectionSecurityRule} ${enableReportsRule}`,
  request: requestSchema({ body: WithFileMessage }),
  response: ConnectionResponse,
  http: {
    method: 'POST',
    path: '/api/protocols/iec61850/connections/with-file',
    status: 200,
    access: 'editor',
    spaceScoped: true,
    consumes: ['multipart/form-data'],
    gatewayRoute: 'scl-upload',
    documentedBody: WithFileBody,
    errors: ['scl_invalid', 'not_found', 'conflict', 'payload_too_large'],
  },
});

/** Replaces a connection and, when a file is sent, its SCL file; a failed parse keeps both as they were. */
export const updateConnectionWithFile = defineOperation({
  operationId: 'updateConnectionWithFile',
  service: 'protocol',
  summary: 'Replace an IEC 61850 connection and its SCL file',
  tags,
  description: `As create; without a \`file\` part the stored file is kept. ${sclErrors} ${connectionSecurityRule} ${enableReportsRule}`,
  request: requestSchema({ params: connectionParams, body: WithFileMessage }),
  response: NoContent,
  http: {
    method: 'PUT',
    path: '/api/protocols/iec61850/connections/:connectionId/with-file',
    status: 204,
    access: 'editor',
    spaceScoped: true,
    consumes: ['multipart/form-data'],
    gatewayRoute: 'scl-upload',
    documentedBody: WithFileBody,
    errors: ['scl_invalid', 'not_found', 'conflict', 'payload_too_large'],
  },
});

/** Deletes a connection with its file. */
export const deleteConnectionWithFile = defineOperation({
  operationId: 'deleteConnectionWithFile',
  service: 'protocol',
  summary: 'Delete an IEC 61850 connection and its file',
  tags,
  deadlineMs: deadlines.deviceMs,
  description:
    "A started connection's session is stopped first (its association with the device concluded), then the connection is deleted with its file.",
  request: requestSchema({ params: connectionParams }),
  response: NoContent,
  http: {
    method: 'DELETE',
    path: '/api/protocols/iec61850/connections/:connectionId/with-file',
    status: 204,
    access: 'editor',
    spaceScoped: true,
    errors: ['not_found'],
  },
});

/** Lists the connections of the space, by name. */
export const getConnections = defineOperation({
  operationId: 'getConnections_1',
  service: 'protocol',
  summary: 'List the connections of the space',
  tags,
  request: requestSchema({}),
  response: Type.Array(ConnectionResponse),
  http: { ...read('/api/connections', []), cacheable: true },
});

/** Lists the connections of one project, by name. */
export const getConnectionsByProject = defineOperation({
  operationId: 'getConnectionsByProject_1',
  service: 'protocol',
  summary: 'List the connections of a project',
  tags,
  request: requestSchema({ query: Type.Object({ projectId: uuid('A project of the space.') }, { additionalProperties: false }) }),
  response: Type.Array(ConnectionResponse),
  http: { ...read('/api/connections/by-project', []), cacheable: true },
});

/** Reads one connection. */
export const getConnection = defineOperation({
  operationId: 'getConnection_1',
  service: 'protocol',
  summary: 'Read a connection',
  tags,
  request: requestSchema({ params: connectionParams }),
  response: ConnectionResponse,
  http: { ...read('/api/connections/:connectionId'), cacheable: true },
});

/** Whether a live session with the device runs. */
export const getConnectionStatus = defineOperation({
  operationId: 'getConnectionStatus',
  service: 'protocol',
  summary: 'Status of a connection',
  tags,
  description: '`Connected` while a live MMS session runs, `Disconnected` otherwise.',
  request: requestSchema({ params: connectionParams }),
  response: Type.Union([Type.Literal('Connected'), Type.Literal('Disconnected')]),
  http: read('/api/connections/:connectionId/status'),
});

/** The device model of a connection, from its SCL file. */
export const browseConnection = defineOperation({
  operationId: 'browseConnection',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Browse the data model of a connection',
  tags,
  description:
    'While the connection is connected, the model the device itself declares (`source: "device"`: logical devices, logical nodes, data objects with their functional constraints and types, data sets, report blocks; an array with its `count` and the parts of its first element as `children`, `phsAHar(0).cVal`). Otherwise, or with `ied`, the model of the SCL file (`source: "scl"`): ' +
    'IEDs, logical devices, logical nodes, data objects with functional constraints and their `arrays` (SCL `count`, sub data objects and attributes alike), data sets, report, GOOSE and sampled-value blocks and addresses. A connection without a file has no SCL model: browsing it while it is not connected (or with `ied`) is 409 `no_scl_file`. ' +
    "`ied` limits the answer to one IED (404 when the file has no such IED); `source=scl` asks for the model of the file while connected too. Data objects and attributes carry the `desc` the file gives them (the instance's `DOI`/`SDI`/`DAI` `desc` or `dU` before the templates' `DO`/`DOType`/`DA`/`BDA` `desc`) and measured values their `unit` (`kV`: the nearest `units`, SIUnit with its multiplier, configured or by default); enumerations are named by their `id`. A model too large for one answer (a station file of hundreds of IEDs) is refused with 413 `payload_too_large`, whose `ieds` lists the names to browse one at a time.",
  request: requestSchema({
    params: connectionParams,
    query: Type.Object(
      {
        ied: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only this IED of the file.' })),
        source: Type.Optional(
          Type.Literal('scl', {
            description:
              "`scl`: the model of the SCL file even while the connection is connected (its units, descriptions and enumerations, which the device's own model does not carry).",
          }),
        ),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Union([
    Type.Composite([Type.Object({ source: Type.Literal('scl') }), SclBrowseTree]),
    Type.Object({ source: Type.Literal('device'), logicalDevices: Type.Array(Type.Unknown()) }),
  ]),
  http: read('/api/connections/:connectionId/browse', ['not_found', 'payload_too_large', 'no_scl_file', 'overloaded']),
});

/** The stored SCL file, byte for byte. */
export const getConnectionFile = defineOperation({
  operationId: 'getConnectionFile',
  service: 'protocol',
  summary: 'Download the SCL file of a connection',
  tags,
  description: 'The file exactly as uploaded (application/xml). 404 when the connection has no file.',
  request: requestSchema({ params: connectionParams }),
  response: Type.String({ format: 'binary' }),
  http: { ...read('/api/protocols/iec61850/connections/:connectionId/file'), gatewayRoute: 'file-download', produces: 'application/xml' },
});

/** Internal: one chunk of an upload, staged until the create or update that uses it. */
export const stageUploadChunk = defineOperation({
  operationId: 'stageUploadChunk',
  service: 'protocol',
  summary: 'Stage a chunk of an upload',
  tags,
  request: requestSchema({
    body: Type.Object(
      { uploadId: uuid('upload'), index: Type.Integer({ minimum: 0, maximum: 1_000_000 }), data: Type.String({ maxLength: 512 * 1024 }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Null(),
});

/** Internal: one chunk of a stored file, with what the download needs to know. */
export const readFileChunk = defineOperation({
  operationId: 'readFileChunk',
  service: 'protocol',
  summary: 'Read a chunk of a stored file',
  tags,
  request: requestSchema({
    params: Type.Object(
      { connectionId: uuid('connection'), index: Type.Integer({ minimum: 0, maximum: 1_000_000 }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({ name: Type.String(), size: Type.Integer(), chunks: Type.Integer(), data: Type.String() }),
});

/** Bytes of one chunk on the bus, before base64: well under NATS' default 1 MiB payload. */
export const uploadChunkBytes = 256 * 1024;

/** Every connection operation, for the registry. */
export const connectionOperations = [
  createConnectionWithFile,
  updateConnectionWithFile,
  deleteConnectionWithFile,
  getConnections,
  getConnectionsByProject,
  getConnection,
  getConnectionStatus,
  browseConnection,
  getConnectionFile,
  stageUploadChunk,
  readFileChunk,
];
