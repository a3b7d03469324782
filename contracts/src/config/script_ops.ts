import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { writeBinding } from './http.ts';
import { operationsOfAll } from './resource.ts';
import { ConfigIdOf, maxScriptCharacters, ScriptCode, scriptResource } from './schemas.ts';

const params = Type.Object({ scriptId: ConfigIdOf('Id of a script of the space (a UUID).') }, { additionalProperties: false });
const tags = ['Scripts'];

/** The script operations, from the script's definition (`schemas.ts`). */
export const {
  list: getScripts,
  create: createScript,
  get: getScript,
  update: updateScript,
  remove: deleteScript,
} = scriptResource.operations;

/** Replaces a script's code with the whole `text/plain` body. */
export const updateScriptCode = defineOperation({
  operationId: 'updateScriptCode',
  service: 'config',
  summary: 'Replace the code of a script',
  tags,
  description:
    `The whole \`text/plain\` body (UTF-8) is the new code: at most ${maxScriptCharacters} Unicode characters, ` +
    'empty allowed, kept byte for byte (a byte order mark, line ends and NUL included). A body that is not ' +
    'valid UTF-8 is 400 `malformed_body`; a charset other than UTF-8, or another content type, is 415.',
  request: requestSchema({ params, body: ScriptCode }),
  response: NoContent,
  http: { ...writeBinding('PATCH', '/api/scripts/:scriptId/code', 204, ['not_found', 'malformed_body']), consumes: ['text/plain'] },
});

/** The script operations. */
export const scriptOperations = [...operationsOfAll([scriptResource]), updateScriptCode];
