import { Type } from '@sinclair/typebox';
import { deadlines, defineOperation, NoContent, requestSchema, type HttpBinding } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';
import { QueryList } from '../query.ts';
import { ConnectionRequest, ConnectionResponse, connectionSecurityRule, enableReportsRule } from './connections.ts';

/*
 * Connections as the reference's plain routes serve them: a connection with a JSON body and no file, start
 * and stop by project or by project and name, statuses of many connections at once, and bulk deletion.
 */

const tags = ['IEC 61850 connections'];
const uuid = (description: string) =>
  Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description });
const connectionParams = Type.Object({ connectionId: uuid('Id of a connection of the space (a UUID).') }, { additionalProperties: false });
const projectId = uuid("A project of the space; another space's project is 404.");
const byProject = Type.Object({ projectId }, { additionalProperties: false });
const byProjectAndName = Type.Object(
  { projectId, name: Type.String({ minLength: 1, maxLength: 100, description: "The connection's name in its project." }) },
  { additionalProperties: false },
);
const write = (
  method: HttpBinding['method'],
  path: string,
  status: 200 | 201 | 204,
  errors: readonly ProblemCode[] = ['not_found'],
): HttpBinding => ({
  method,
  path,
  status,
  access: 'editor',
  spaceScoped: true,
  errors,
});
const read = (path: string): HttpBinding => ({
  method: 'GET',
  path,
  status: 200,
  access: 'viewer',
  spaceScoped: true,
  errors: ['not_found'],
});

/** `Connected` or `Disconnected`, as the status routes answer it. */
export const ConnectionStatus = Type.Union([Type.Literal('Connected'), Type.Literal('Disconnected')]);

const statusRule = '`Connected` while a live MMS session with the device runs, `Disconnected` otherwise (stopped, or the device is away).';
const stopsFirst =
  "A started connection's session is stopped first (its association with the device concluded), then the connection is deleted with its file, report blocks and session record.";
const startRule =
  'Starting a started connection, or stopping a stopped one, changes nothing. A connection without an SCL file can be started: its model then comes from the device.';

/** Creates a connection without a file. */
export const createConnection = defineOperation({
  operationId: 'createConnection_1',
  service: 'protocol',
  summary: 'Create a connection',
  tags,
  description:
    "A connection without an SCL file, from a JSON body. It can be started; browsing it answers the device's own " +
    'model while connected and 409 `conflict` otherwise (no file to read it from). A file can be added later with ' +
    `\`PUT /api/protocols/iec61850/connections/{connectionId}/with-file\`. A name already used in the project is 409; a project of another space 404. ${connectionSecurityRule} ${enableReportsRule}`,
  request: requestSchema({ body: ConnectionRequest }),
  response: ConnectionResponse,
  http: write('POST', '/api/connections', 201, ['not_found', 'conflict']),
});

/** Replaces a connection's own fields; its file, if it has one, is kept. */
export const updateConnection = defineOperation({
  operationId: 'updateConnection_1',
  service: 'protocol',
  summary: 'Replace a connection',
  tags,
  description: `Replaces name, address, port, project, description and security settings; a stored SCL file is kept and checked again against the new address. A started connection reconnects to a new address, port or security settings within a few seconds. ${connectionSecurityRule} ${enableReportsRule}`,
  request: requestSchema({ params: connectionParams, body: ConnectionRequest }),
  response: NoContent,
  http: write('PUT', '/api/connections/:connectionId', 204, ['not_found', 'conflict']),
});

/** Deletes a connection. */
export const deleteConnection = defineOperation({
  operationId: 'deleteConnection_1',
  service: 'protocol',
  summary: 'Delete a connection',
  tags,
  deadlineMs: deadlines.deviceMs,
  description: stopsFirst,
  request: requestSchema({ params: connectionParams }),
  response: NoContent,
  http: write('DELETE', '/api/connections/:connectionId', 204),
});

/** Deletes several connections at once. */
export const deleteConnectionsByIds = defineOperation({
  operationId: 'deleteConnectionsByIds_1',
  service: 'protocol',
  summary: 'Delete connections',
  tags,
  deadlineMs: deadlines.deviceMs,
  description: `All or nothing: an id that names no connection of the space (missing, or another space's) is 404 and nothing is deleted. ${stopsFirst} Answers 200 with no content, as the reference does.`,
  request: requestSchema({
    query: Type.Object(
      { connectionIds: QueryList(uuid('A connection id.'), { maxItems: 500, description: 'Ids of the connections to delete.' }) },
      { additionalProperties: false },
    ),
  }),
  response: NoContent,
  http: write('DELETE', '/api/connections/multi/by-ids', 200),
});

/** Starts a connection named by project and name (the reference's older path). */
export const startConnectionByName = defineOperation({
  operationId: 'startConnection_1',
  service: 'protocol',
  summary: 'Start a connection by project and name',
  tags,
  description: `The same as \`POST /api/connections/start/by-project-and-name\`. ${startRule}`,
  request: requestSchema({ query: byProjectAndName }),
  response: NoContent,
  http: { ...write('POST', '/api/connections/start', 204), keepsConfiguration: true },
});

/** Starts every connection of a project. */
export const startConnectionsByProject = defineOperation({
  operationId: 'startConnectionsByProject',
  service: 'protocol',
  summary: 'Start every connection of a project',
  tags,
  description: `Every connection the project has now; a project without connections changes nothing. ${startRule}`,
  request: requestSchema({ query: byProject }),
  response: NoContent,
  http: { ...write('POST', '/api/connections/start/by-project', 204), keepsConfiguration: true },
});

/** Stops every connection of a project. */
export const stopConnectionsByProject = defineOperation({
  operationId: 'stopConnectionsByProject',
  service: 'protocol',
  summary: 'Stop every connection of a project',
  tags,
  description: `Their associations are concluded within a few seconds. ${startRule}`,
  request: requestSchema({ query: byProject }),
  response: NoContent,
  http: { ...write('POST', '/api/connections/stop/by-project', 204), keepsConfiguration: true },
});

/** Starts one connection named by project and name. */
export const startConnectionByProjectAndName = defineOperation({
  operationId: 'startConnectionByProjectAndName',
  service: 'protocol',
  summary: 'Start a connection by project and name',
  tags,
  description: `404 when the project has no connection of that name. ${startRule}`,
  request: requestSchema({ query: byProjectAndName }),
  response: NoContent,
  http: { ...write('POST', '/api/connections/start/by-project-and-name', 204), keepsConfiguration: true },
});

/** Stops one connection named by project and name. */
export const stopConnectionByProjectAndName = defineOperation({
  operationId: 'stopConnectionByProjectAndName',
  service: 'protocol',
  summary: 'Stop a connection by project and name',
  tags,
  description: `404 when the project has no connection of that name. ${startRule}`,
  request: requestSchema({ query: byProjectAndName }),
  response: NoContent,
  http: { ...write('POST', '/api/connections/stop/by-project-and-name', 204), keepsConfiguration: true },
});

/** Statuses of several connections. */
export const getConnectionStatusesByIds = defineOperation({
  operationId: 'getConnectionStatusesByIds',
  service: 'protocol',
  summary: 'Statuses of connections',
  tags,
  description: `An object from each id to its status. ${statusRule} All or nothing: an id that names no connection of the space is 404.`,
  request: requestSchema({
    query: Type.Object(
      { connectionIds: QueryList(uuid('A connection id.'), { maxItems: 500, description: 'Ids of the connections.' }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Record(Type.String(), ConnectionStatus),
  http: read('/api/connections/status/by-ids'),
});

/** Status of one connection named by project and name. */
export const getConnectionStatusByProjectAndName = defineOperation({
  operationId: 'getConnectionStatusByProjectAndName',
  service: 'protocol',
  summary: 'Status of a connection by project and name',
  tags,
  description: `${statusRule} 404 when the project has no connection of that name.`,
  request: requestSchema({ query: byProjectAndName }),
  response: ConnectionStatus,
  http: read('/api/connections/status/by-project-and-name'),
});

/** Internal: the status of every connection of a project, by id, for the project status. */
export const connectionStatusesOfProject = defineOperation({
  operationId: 'connectionStatusesOfProject',
  service: 'protocol',
  summary: 'Statuses of the connections of a project',
  tags,
  request: requestSchema({ query: byProject }),
  response: Type.Record(Type.String(), ConnectionStatus),
});

/** The plain connection operations, for the registry. */
export const plainConnectionOperations = [
  createConnection,
  updateConnection,
  deleteConnection,
  deleteConnectionsByIds,
  startConnectionByName,
  startConnectionsByProject,
  stopConnectionsByProject,
  startConnectionByProjectAndName,
  stopConnectionByProjectAndName,
  getConnectionStatusesByIds,
  getConnectionStatusByProjectAndName,
  connectionStatusesOfProject,
];
