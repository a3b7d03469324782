import { operationsOfAll } from './resource.ts';
import { boardGroupResource, boardResource } from './schemas.ts';

/** The board group operations, from the board group's definition (`schemas.ts`). */
export const {
  list: getBoardGroups,
  create: createBoardGroup,
  get: getBoardGroup,
  update: updateBoardGroup,
  remove: deleteBoardGroup,
} = boardGroupResource.operations;

/** The board operations, from the board's definition (`schemas.ts`). */
export const { list: getBoards, create: createBoard, get: getBoard, update: updateBoard, remove: deleteBoard } = boardResource.operations;

/** The board group and board operations. */
export const dashboardOperations = operationsOfAll([boardGroupResource, boardResource]);
