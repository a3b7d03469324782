import * as ops from '@scada/contracts';
import type { Implementation } from '@scada/platform';
import { boardGroups, boards, faceplates, placeholders, projects, scripts } from '../store/tables.ts';
import type { HandlerDeps } from './context.ts';
import { crudHandlers, type Resource } from './crud.ts';
import { updateScriptCodeHandler } from './script_code.ts';

/** The resources of the config service, each bound to its operations and its table. */
const resources: Resource[] = [
  {
    entity: 'project', table: projects, idParam: 'projectId',
    ops: { list: ops.getProjects, create: ops.createProject, get: ops.getProject, update: ops.updateProject, remove: ops.deleteProject },
  },
  {
    entity: 'board_group', table: boardGroups, idParam: 'boardGroupId',
    ops: { list: ops.getBoardGroups, create: ops.createBoardGroup, get: ops.getBoardGroup, update: ops.updateBoardGroup, remove: ops.deleteBoardGroup },
  },
  {
    entity: 'board', table: boards, idParam: 'boardId', parent: { param: 'boardGroupId', table: boardGroups },
    ops: { list: ops.getBoards, create: ops.createBoard, get: ops.getBoard, update: ops.updateBoard, remove: ops.deleteBoard },
  },
  {
    entity: 'faceplate', table: faceplates, idParam: 'faceplateId',
    ops: { list: ops.getFaceplates, create: ops.createFaceplate, get: ops.getFaceplate, update: ops.updateFaceplate, remove: ops.deleteFaceplate },
  },
  {
    entity: 'placeholder', table: placeholders, idParam: 'placeholderId', parent: { param: 'faceplateId', table: faceplates },
    ops: {
      list: ops.getFaceplatePlaceholders, create: ops.createFaceplatePlaceholder, get: ops.getFaceplatePlaceholder,
      update: ops.updateFaceplatePlaceholder, remove: ops.deleteFaceplatePlaceholder,
    },
  },
  {
    entity: 'script', table: scripts, idParam: 'scriptId',
    ops: { list: ops.getScripts, create: ops.createScript, get: ops.getScript, update: ops.updateScript, remove: ops.deleteScript },
  },
];

/** Every handler of the configuration resources. */
export function resourceHandlers(deps: HandlerDeps): Implementation[] {
  return [...resources.flatMap((r) => crudHandlers(deps, r)), updateScriptCodeHandler(deps)];
}
