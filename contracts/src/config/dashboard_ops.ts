import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { byName, duplicateName, readBinding, refusedWithChildren, writeBinding } from './http.ts';
import { BoardGroupRequest, BoardGroupResponse, BoardRequest, BoardResponse, ConfigIdOf } from './schemas.ts';

const groupId = ConfigIdOf('Id of a board group of the space (a UUID).');
const groupParams = Type.Object({ boardGroupId: groupId }, { additionalProperties: false });
const boardParams = Type.Object({ boardGroupId: groupId, boardId: ConfigIdOf('Id of a board of that group (a UUID).') }, { additionalProperties: false });
const tags = ['Dashboards'];
const missingGroup = 'A board group that does not exist, or belongs to another space, is 404.';

/** Lists the board groups of the space. */
export const getBoardGroups = defineOperation({
  operationId: 'getBoardGroups', service: 'config', summary: 'List the board groups of the space', tags,
  description: 'Ordered by rank (groups without a rank last), then by name (Unicode code point order); names are unique in the list.',
  request: requestSchema({}), response: Type.Array(BoardGroupResponse),
  http: readBinding('/api/dashboard'),
});

/** Creates a board group. */
export const createBoardGroup = defineOperation({
  operationId: 'createBoardGroup', service: 'config', summary: 'Create a board group', tags,
  description: `Answers the board group. ${duplicateName}`,
  request: requestSchema({ body: BoardGroupRequest }), response: BoardGroupResponse,
  http: writeBinding('POST', '/api/dashboard', 200, ['conflict']),
});

/** Reads one board group. */
export const getBoardGroup = defineOperation({
  operationId: 'getBoardGroup', service: 'config', summary: 'Read a board group', tags,
  description: missingGroup,
  request: requestSchema({ params: groupParams }), response: BoardGroupResponse,
  http: readBinding('/api/dashboard/:boardGroupId', ['not_found']),
});

/** Replaces a board group's fields. */
export const updateBoardGroup = defineOperation({
  operationId: 'updateBoardGroup', service: 'config', summary: 'Replace a board group', tags,
  description: `Replaces every field; optional fields left out are cleared. ${duplicateName}`,
  request: requestSchema({ params: groupParams, body: BoardGroupRequest }), response: NoContent,
  http: writeBinding('PUT', '/api/dashboard/:boardGroupId', 204, ['not_found', 'conflict']),
});

/** Deletes a board group that has no boards. */
export const deleteBoardGroup = defineOperation({
  operationId: 'deleteBoardGroup', service: 'config', summary: 'Delete a board group', tags,
  description: refusedWithChildren('boards'),
  request: requestSchema({ params: groupParams }), response: NoContent,
  http: writeBinding('DELETE', '/api/dashboard/:boardGroupId', 204, ['not_found', 'conflict']),
});

/** Lists the boards of a board group. */
export const getBoards = defineOperation({
  operationId: 'getBoards', service: 'config', summary: 'List the boards of a board group', tags,
  description: `${byName} ${missingGroup}`,
  request: requestSchema({ params: groupParams }), response: Type.Array(BoardResponse),
  http: readBinding('/api/dashboard/:boardGroupId/boards', ['not_found']),
});

/** Creates a board in a board group and answers it. */
export const createBoard = defineOperation({
  operationId: 'createBoard', service: 'config', summary: 'Create a board in a board group', tags,
  description: `Answers the board (200). ${missingGroup} ${duplicateName}`,
  request: requestSchema({ params: groupParams, body: BoardRequest }), response: BoardResponse,
  http: writeBinding('POST', '/api/dashboard/:boardGroupId/boards', 200, ['not_found', 'conflict']),
});

/** Reads one board. */
export const getBoard = defineOperation({
  operationId: 'getBoard', service: 'config', summary: 'Read a board', tags,
  description: 'A board that is not in that group of the space is 404.',
  request: requestSchema({ params: boardParams }), response: BoardResponse,
  http: readBinding('/api/dashboard/:boardGroupId/boards/:boardId', ['not_found']),
});

/** Replaces a board's fields; it stays in its group. */
export const updateBoard = defineOperation({
  operationId: 'updateBoard', service: 'config', summary: 'Replace a board', tags,
  description: `Replaces every field; optional fields left out are cleared; the board stays in its group. ${duplicateName}`,
  request: requestSchema({ params: boardParams, body: BoardRequest }), response: NoContent,
  http: writeBinding('PUT', '/api/dashboard/:boardGroupId/boards/:boardId', 204, ['not_found', 'conflict']),
});

/** Deletes a board. */
export const deleteBoard = defineOperation({
  operationId: 'deleteBoard', service: 'config', summary: 'Delete a board', tags,
  request: requestSchema({ params: boardParams }), response: NoContent,
  http: writeBinding('DELETE', '/api/dashboard/:boardGroupId/boards/:boardId', 204, ['not_found']),
});

/** The board group and board operations. */
export const dashboardOperations = [
  getBoardGroups, createBoardGroup, getBoardGroup, updateBoardGroup, deleteBoardGroup,
  getBoards, createBoard, getBoard, updateBoard, deleteBoard,
];
