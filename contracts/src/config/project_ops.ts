import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { byName, duplicateName, readBinding, refusedWithChildren, writeBinding } from './http.ts';
import { ConfigIdOf, ProjectRequest, ProjectResponse } from './schemas.ts';

const params = Type.Object({ projectId: ConfigIdOf('Id of a project of the space (a UUID).') }, { additionalProperties: false });
const tags = ['Projects'];

/** Lists the projects of the space. */
export const getProjects = defineOperation({
  operationId: 'getProjects', service: 'config', summary: 'List the projects of the space', tags,
  description: byName,
  request: requestSchema({}), response: Type.Array(ProjectResponse),
  http: readBinding('/api/projects'),
});

/** Creates a project. */
export const createProject = defineOperation({
  operationId: 'createProject', service: 'config', summary: 'Create a project', tags,
  description: `Answers the project. ${duplicateName}`,
  request: requestSchema({ body: ProjectRequest }), response: ProjectResponse,
  http: { ...writeBinding('POST', '/api/projects', 200, ['conflict']), consumes: ['application/json', 'multipart/form-data'], bodyWrapper: 'project' },
});

/** Reads one project. */
export const getProject = defineOperation({
  operationId: 'getProject', service: 'config', summary: 'Read a project', tags,
  description: 'A project of another space is 404, as one that does not exist.',
  request: requestSchema({ params }), response: ProjectResponse,
  http: readBinding('/api/projects/:projectId', ['not_found']),
});

/** Replaces a project's fields. */
export const updateProject = defineOperation({
  operationId: 'updateProject', service: 'config', summary: 'Replace a project', tags,
  description: `Replaces every field; optional fields left out are cleared. ${duplicateName}`,
  request: requestSchema({ params, body: ProjectRequest }), response: NoContent,
  http: { ...writeBinding('PUT', '/api/projects/:projectId', 204, ['not_found', 'conflict']), consumes: ['application/json', 'multipart/form-data'], bodyWrapper: 'project' },
});

/** Deletes a project that has no faceplates and no scripts. */
export const deleteProject = defineOperation({
  operationId: 'deleteProject', service: 'config', summary: 'Delete a project', tags,
  description: refusedWithChildren('faceplates or scripts'),
  request: requestSchema({ params }), response: NoContent,
  http: writeBinding('DELETE', '/api/projects/:projectId', 204, ['not_found', 'conflict']),
});

/** The project operations. */
export const projectOperations = [getProjects, createProject, getProject, updateProject, deleteProject];
