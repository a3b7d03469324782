import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { duplicateName, readBinding, writeBinding } from './http.ts';
import { ConfigIdOf, maxScriptCharacters, ScriptCode, ScriptRequest, ScriptResponse } from './schemas.ts';

const params = Type.Object({ scriptId: ConfigIdOf('Id of a script of the space (a UUID).') }, { additionalProperties: false });
const tags = ['Scripts'];
const missingProject = 'A `projectId` that does not exist, or names another space\'s project, is 404.';

/** Lists the scripts of the space, code included. */
export const getScripts = defineOperation({
  operationId: 'getScripts', service: 'config', summary: 'List the scripts of the space', tags,
  description: 'Ordered by name (Unicode code point order), then id; names are unique per project.',
  request: requestSchema({}), response: Type.Array(ScriptResponse),
  http: readBinding('/api/scripts'),
});

/** Creates a script in a project. */
export const createScript = defineOperation({
  operationId: 'createScript', service: 'config', summary: 'Create a script', tags,
  description: `Answers the script. ${missingProject} ${duplicateName}`,
  request: requestSchema({ body: ScriptRequest }), response: ScriptResponse,
  http: writeBinding('POST', '/api/scripts', 200, ['not_found', 'conflict']),
});

/** Reads one script; its code exactly as it was stored. */
export const getScript = defineOperation({
  operationId: 'getScript', service: 'config', summary: 'Read a script', tags,
  description: 'The code reads back byte for byte as it was sent. A script of another space is 404.',
  request: requestSchema({ params }), response: ScriptResponse,
  http: readBinding('/api/scripts/:scriptId', ['not_found']),
});

/** Replaces a script's fields, its code and project included. */
export const updateScript = defineOperation({
  operationId: 'updateScript', service: 'config', summary: 'Replace a script', tags,
  description: `Replaces every field; optional fields left out are cleared. ${missingProject} ${duplicateName}`,
  request: requestSchema({ params, body: ScriptRequest }), response: NoContent,
  http: writeBinding('PUT', '/api/scripts/:scriptId', 204, ['not_found', 'conflict']),
});

/** Deletes a script. */
export const deleteScript = defineOperation({
  operationId: 'deleteScript', service: 'config', summary: 'Delete a script', tags,
  request: requestSchema({ params }), response: NoContent,
  http: writeBinding('DELETE', '/api/scripts/:scriptId', 204, ['not_found']),
});

/** Replaces a script's code with the whole `text/plain` body. */
export const updateScriptCode = defineOperation({
  operationId: 'updateScriptCode', service: 'config', summary: 'Replace the code of a script', tags,
  description:
    `The whole \`text/plain\` body (UTF-8) is the new code: at most ${maxScriptCharacters} Unicode characters, ` +
    'empty allowed, kept byte for byte (a byte order mark, line ends and NUL included). A body that is not ' +
    'valid UTF-8 is 400 `malformed_body`; a charset other than UTF-8, or another content type, is 415.',
  request: requestSchema({ params, body: ScriptCode }), response: NoContent,
  http: { ...writeBinding('PATCH', '/api/scripts/:scriptId/code', 204, ['not_found', 'malformed_body']), consumes: ['text/plain'] },
});

/** The script operations. */
export const scriptOperations = [getScripts, createScript, getScript, updateScript, deleteScript, updateScriptCode];
