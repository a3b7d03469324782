import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { duplicateName, readBinding, refusedWithChildren, writeBinding } from './http.ts';
import { ConfigIdOf, FaceplateRequest, FaceplateResponse, PlaceholderRequest, PlaceholderResponse } from './schemas.ts';

const faceplateId = ConfigIdOf('Id of a faceplate of the space (a UUID).');
const faceplateParams = Type.Object({ faceplateId }, { additionalProperties: false });
const placeholderParams = Type.Object(
  { faceplateId, placeholderId: ConfigIdOf('Id of a placeholder of that faceplate (a UUID).') },
  { additionalProperties: false },
);
const tags = ['Faceplates'];
const missingProject = 'A `projectId` that does not exist, or names another space\'s project, is 404.';
const missingFaceplate = 'A faceplate that does not exist, or belongs to another space, is 404.';

/** Lists the faceplates of the space. */
export const getFaceplates = defineOperation({
  operationId: 'getFaceplates', service: 'config', summary: 'List the faceplates of the space', tags,
  description: 'Ordered by name (Unicode code point order), then id; names are unique per project.',
  request: requestSchema({}), response: Type.Array(FaceplateResponse),
  http: readBinding('/api/faceplates'),
});

/** Creates a faceplate in a project. */
export const createFaceplate = defineOperation({
  operationId: 'createFaceplate', service: 'config', summary: 'Create a faceplate', tags,
  description: `Answers the faceplate. ${missingProject} ${duplicateName}`,
  request: requestSchema({ body: FaceplateRequest }), response: FaceplateResponse,
  http: { ...writeBinding('POST', '/api/faceplates', 200, ['not_found', 'conflict']), consumes: ['application/json', 'multipart/form-data'], bodyWrapper: 'faceplate' },
});

/** Reads one faceplate. */
export const getFaceplate = defineOperation({
  operationId: 'getFaceplate', service: 'config', summary: 'Read a faceplate', tags,
  description: missingFaceplate,
  request: requestSchema({ params: faceplateParams }), response: FaceplateResponse,
  http: readBinding('/api/faceplates/:faceplateId', ['not_found']),
});

/** Replaces a faceplate's fields, its project included. */
export const updateFaceplate = defineOperation({
  operationId: 'updateFaceplate', service: 'config', summary: 'Replace a faceplate', tags,
  description: `Replaces every field; optional fields left out are cleared. ${missingProject} ${duplicateName}`,
  request: requestSchema({ params: faceplateParams, body: FaceplateRequest }), response: NoContent,
  http: { ...writeBinding('PUT', '/api/faceplates/:faceplateId', 204, ['not_found', 'conflict']), consumes: ['application/json', 'multipart/form-data'], bodyWrapper: 'faceplate' },
});

/** Deletes a faceplate that has no placeholders. */
export const deleteFaceplate = defineOperation({
  operationId: 'deleteFaceplate', service: 'config', summary: 'Delete a faceplate', tags,
  description: refusedWithChildren('placeholders'),
  request: requestSchema({ params: faceplateParams }), response: NoContent,
  http: writeBinding('DELETE', '/api/faceplates/:faceplateId', 204, ['not_found', 'conflict']),
});

/** Lists the placeholders of a faceplate. */
export const getFaceplatePlaceholders = defineOperation({
  operationId: 'getFaceplatePlaceholders', service: 'config', summary: 'List the placeholders of a faceplate', tags,
  description: `Ordered by \`order\` (placeholders without one last), then by name (Unicode code point order); names are unique in the list. ${missingFaceplate}`,
  request: requestSchema({ params: faceplateParams }), response: Type.Array(PlaceholderResponse),
  http: readBinding('/api/faceplates/:faceplateId/placeholders', ['not_found']),
});

/** Creates a placeholder of a faceplate. */
export const createFaceplatePlaceholder = defineOperation({
  operationId: 'createFaceplatePlaceholder', service: 'config', summary: 'Create a placeholder of a faceplate', tags,
  description: `Answers the placeholder. ${missingFaceplate} ${duplicateName}`,
  request: requestSchema({ params: faceplateParams, body: PlaceholderRequest }), response: PlaceholderResponse,
  http: writeBinding('POST', '/api/faceplates/:faceplateId/placeholders', 200, ['not_found', 'conflict']),
});

/** Reads one placeholder. */
export const getFaceplatePlaceholder = defineOperation({
  operationId: 'getFaceplatePlaceholder', service: 'config', summary: 'Read a placeholder', tags,
  description: 'A placeholder that is not in that faceplate of the space is 404.',
  request: requestSchema({ params: placeholderParams }), response: PlaceholderResponse,
  http: readBinding('/api/faceplates/:faceplateId/placeholders/:placeholderId', ['not_found']),
});

/** Replaces a placeholder's fields; concurrent replacements: the last committed wins. */
export const updateFaceplatePlaceholder = defineOperation({
  operationId: 'updateFaceplatePlaceholder', service: 'config', summary: 'Replace a placeholder', tags,
  description:
    'Replaces every field; optional fields left out are cleared (204). Concurrent replacements of one ' +
    `placeholder each answer 204 and the one committed last wins; no version check. ${duplicateName}`,
  request: requestSchema({ params: placeholderParams, body: PlaceholderRequest }), response: NoContent,
  http: writeBinding('PUT', '/api/faceplates/:faceplateId/placeholders/:placeholderId', 204, ['not_found', 'conflict']),
});

/** Deletes a placeholder. */
export const deleteFaceplatePlaceholder = defineOperation({
  operationId: 'deleteFaceplatePlaceholder', service: 'config', summary: 'Delete a placeholder', tags,
  request: requestSchema({ params: placeholderParams }), response: NoContent,
  http: writeBinding('DELETE', '/api/faceplates/:faceplateId/placeholders/:placeholderId', 204, ['not_found']),
});

/** The faceplate and placeholder operations. */
export const faceplateOperations = [
  getFaceplates, createFaceplate, getFaceplate, updateFaceplate, deleteFaceplate,
  getFaceplatePlaceholders, createFaceplatePlaceholder, getFaceplatePlaceholder, updateFaceplatePlaceholder, deleteFaceplatePlaceholder,
];
