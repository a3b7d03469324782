import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { QueryList } from '../query.ts';
import { byName, readBinding, writeBinding } from './http.ts';
import { EntityName } from './kinds.ts';
import { ConfigIdOf, FaceplateResponse, ProjectResponse, ScriptResponse } from './schemas.ts';

/*
 * Lookups HMI clients make (a project by name, the faceplates and scripts of a project), the project's
 * status, and the bulk deletion of scripts.
 */

const projectQuery = Type.Object(
  { projectId: ConfigIdOf("A project of the space; another space's project is 404.") },
  { additionalProperties: false },
);
const scheduled = Type.Union([Type.Literal('Scheduled'), Type.Literal('Not Scheduled')]);
const missingProject = "A project that does not exist, or is another space's, is 404.";

/** The statuses of what a project holds, each keyed by the id of the thing. */
export const ProjectStatusResponse = Type.Object({
  connectionStatuses: Type.Record(Type.String(), Type.Union([Type.Literal('Connected'), Type.Literal('Disconnected')]), {
    description: 'Every connection of the project, by id: `Connected` while a live session runs.',
  }),
  scriptStatuses: Type.Record(Type.String(), scheduled, {
    description: 'Every script of the project, by id: `Scheduled` or `Not Scheduled` (as `GET /api/scripts/{scriptId}/status`).',
  }),
  alarmGroupStatuses: Type.Record(Type.String(), Type.Union([Type.Literal('Active'), Type.Literal('Not Active')]), {
    description: 'Empty: the platform keeps no alarm groups.',
  }),
  reportStatuses: Type.Record(Type.String(), scheduled, { description: 'Empty: the platform keeps no reports.' }),
  dataTransferStatuses: Type.Record(Type.String(), scheduled, { description: 'Empty: the platform keeps no data transfers.' }),
});

/** A project by its name. */
export const getProjectByName = defineOperation({
  operationId: 'getProjectByName',
  service: 'config',
  summary: 'Find a project by name',
  tags: ['Projects'],
  description: 'The project of the space with exactly this name (names are unique in a space); 404 when there is none.',
  request: requestSchema({
    query: Type.Object({ name: EntityName("The project's name, compared exactly.") }, { additionalProperties: false }),
  }),
  response: ProjectResponse,
  http: readBinding('/api/projects/by-name', ['not_found']),
});

/** The active (or inactive) projects. */
export const getProjectsByActive = defineOperation({
  operationId: 'getProjectsByActive',
  service: 'config',
  summary: 'List active or inactive projects',
  tags: ['Projects'],
  description: `The projects of the space whose \`isActive\` is the one asked for. ${byName}`,
  request: requestSchema({ query: Type.Object({ isActive: Type.Boolean() }, { additionalProperties: false }) }),
  response: Type.Array(ProjectResponse),
  http: readBinding('/api/projects/by-active'),
});

/** What runs in a project now. */
export const getProjectStatus = defineOperation({
  operationId: 'getStatus',
  service: 'config',
  summary: 'Status of a project',
  tags: ['Projects'],
  description:
    'The live status of every connection of the project (as `GET /api/connections/{connectionId}/status`), ' +
    'whether every script is scheduled, and empty maps for alarm groups, ' +
    `reports and data transfers, which the platform does not keep. Each map is keyed by id. ${missingProject}`,
  request: requestSchema({
    params: Type.Object({ projectId: ConfigIdOf('Id of a project of the space (a UUID).') }, { additionalProperties: false }),
  }),
  response: ProjectStatusResponse,
  // Live: the statuses of the project's connections change without a write.
  http: { ...readBinding('/api/projects/:projectId/status', ['not_found']), cacheable: undefined },
});

/** The faceplates of a project. */
export const getFaceplatesByProjectId = defineOperation({
  operationId: 'getFaceplatesByProjectId',
  service: 'config',
  summary: 'List the faceplates of a project',
  tags: ['Faceplates'],
  description: `${byName} ${missingProject}`,
  request: requestSchema({ query: projectQuery }),
  response: Type.Array(FaceplateResponse),
  http: readBinding('/api/faceplates/by-project', ['not_found']),
});

/** Faceplates of a project by name. */
export const getFaceplatesByProjectIdAndNames = defineOperation({
  operationId: 'getFaceplatesByProjectIdAndNames',
  service: 'config',
  summary: 'Find faceplates of a project by name',
  tags: ['Faceplates'],
  description: `The faceplates of the project whose names are among \`names\` (compared exactly); a name no faceplate has is left out. ${byName} ${missingProject}`,
  request: requestSchema({
    query: Type.Object(
      {
        projectId: projectQuery.properties.projectId,
        names: QueryList(EntityName('A faceplate name, compared exactly.'), {
          maxItems: 200,
          description: 'Faceplate names; a name holding a comma is sent by repeating the parameter.',
        }),
      },
      { additionalProperties: false },
    ),
  }),
  response: Type.Array(FaceplateResponse),
  http: readBinding('/api/faceplates/by-project-and-names', ['not_found']),
});

/** The scripts of a project. */
export const getScriptsByProject = defineOperation({
  operationId: 'getScriptsByProject',
  service: 'config',
  summary: 'List the scripts of a project',
  tags: ['Scripts'],
  description: `Code included. ${byName} ${missingProject}`,
  request: requestSchema({ query: projectQuery }),
  response: Type.Array(ScriptResponse),
  http: readBinding('/api/scripts/by-project', ['not_found']),
});

/** Deletes several scripts at once. */
export const deleteScriptsByIds = defineOperation({
  operationId: 'deleteScriptsByIds',
  service: 'config',
  summary: 'Delete scripts',
  tags: ['Scripts'],
  description:
    "All or nothing: an id that names no script of the space (missing, or another space's) is 404, naming it, and nothing is deleted.",
  request: requestSchema({
    query: Type.Object(
      { scriptIds: QueryList(ConfigIdOf('A script id.'), { maxItems: 500, description: 'Ids of the scripts to delete.' }) },
      { additionalProperties: false },
    ),
  }),
  response: NoContent,
  http: writeBinding('DELETE', '/api/scripts/multi/by-ids', 204, ['not_found']),
});

/** The lookup, status and bulk operations of the config service. */
export const lookupOperations = [
  getProjectByName,
  getProjectsByActive,
  getProjectStatus,
  getFaceplatesByProjectId,
  getFaceplatesByProjectIdAndNames,
  getScriptsByProject,
  deleteScriptsByIds,
];
