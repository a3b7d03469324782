import { operationsOfAll } from './resource.ts';
import { projectResource } from './schemas.ts';

/** The project operations, from the project's definition (`schemas.ts`). */
export const {
  list: getProjects,
  create: createProject,
  get: getProject,
  update: updateProject,
  remove: deleteProject,
} = projectResource.operations;

/** The project operations. */
export const projectOperations = operationsOfAll([projectResource]);
