import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema, type HttpBinding } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';
import { QueryList } from '../query.ts';
import { AdminPasswordReset, EntityId, RoleName, RoleResponse, SpaceResponse, Username } from './schemas.ts';

/*
 * An administrator's view of one user's spaces, roles, default space and password, and the bulk deletion
 * of users. Roles are global (viewer, operator, editor, admin) and apply in every space the user belongs to; a role
 * or space given or taken applies from the user's next request.
 */

const tags = ['Users'];
const admin = (
  method: HttpBinding['method'],
  path: string,
  status: 200 | 204,
  errors: readonly ProblemCode[] = ['not_found'],
): HttpBinding => ({
  method,
  path,
  status,
  access: 'admin',
  spaceScoped: false,
  errors,
});
const userParams = Type.Object({ userId: EntityId }, { additionalProperties: false });
const userSpaceParams = Type.Object({ userId: EntityId, spaceId: EntityId }, { additionalProperties: false });
const userRoleParams = Type.Object(
  {
    userId: EntityId,
    roleId: Type.String({ minLength: 1, maxLength: 64, description: 'A role name: `viewer`, `operator`, `editor` or `admin`.' }),
  },
  { additionalProperties: false },
);
const usernameParams = Type.Object({ username: Username }, { additionalProperties: false });
const spaceQuery = Type.Object({ spaceId: EntityId }, { additionalProperties: false });
const adminsStay = "Refused with 409 `conflict` when it would leave no enabled administrator, or take the caller's own administrator role.";

/** The spaces a user belongs to. */
export const getUserSpaces = defineOperation({
  operationId: 'getSpaces',
  service: 'auth',
  summary: 'The spaces of a user',
  tags,
  description: 'The spaces the user was given, by name. An administrator reaches every space whether listed or not.',
  request: requestSchema({ params: userParams }),
  response: Type.Array(SpaceResponse),
  http: admin('GET', '/api/users/:userId/spaces', 200),
});

/** Gives a user a space. */
export const addUserSpace = defineOperation({
  operationId: 'addSpace',
  service: 'auth',
  summary: 'Give a user a space',
  tags,
  description: 'Answers the space. Giving a space the user has changes nothing. A missing user or space is 404.',
  request: requestSchema({ params: userParams, query: spaceQuery }),
  response: SpaceResponse,
  http: admin('POST', '/api/users/:userId/spaces', 200),
});

/** One space of a user. */
export const getUserSpace = defineOperation({
  operationId: 'getSpace_1',
  service: 'auth',
  summary: 'A space of a user',
  tags,
  description: 'The space when the user was given it; 404 otherwise.',
  request: requestSchema({ params: userSpaceParams }),
  response: SpaceResponse,
  http: admin('GET', '/api/users/:userId/spaces/:spaceId', 200),
});

/** Takes a space from a user. */
export const removeUserSpace = defineOperation({
  operationId: 'removeSpace',
  service: 'auth',
  summary: 'Take a space from a user',
  tags,
  description:
    '404 when the user does not have it. A user keeps at least one space: taking the last is 409 `conflict`. Their live streams of that space end.',
  request: requestSchema({ params: userSpaceParams }),
  response: NoContent,
  http: admin('DELETE', '/api/users/:userId/spaces/:spaceId', 204, ['not_found', 'conflict']),
});

/** The roles of a user. */
export const getUserRoles = defineOperation({
  operationId: 'getRoles',
  service: 'auth',
  summary: 'The roles of a user',
  tags,
  description: 'Roles are global: a role applies in every space the user belongs to.',
  request: requestSchema({ params: userParams }),
  response: Type.Array(RoleResponse),
  http: admin('GET', '/api/users/:userId/roles', 200),
});

/** Gives a user a role. */
export const addUserRole = defineOperation({
  operationId: 'addRole',
  service: 'auth',
  summary: 'Give a user a role',
  tags,
  description: 'Answers the role. Giving a role the user has changes nothing; an unknown role is 404.',
  request: requestSchema({
    params: userParams,
    query: Type.Object({ roleId: userRoleParams.properties.roleId }, { additionalProperties: false }),
  }),
  response: RoleResponse,
  http: admin('POST', '/api/users/:userId/roles', 200),
});

/** One role of a user. */
export const getUserRole = defineOperation({
  operationId: 'getRole',
  service: 'auth',
  summary: 'A role of a user',
  tags,
  description: 'The role when the user has it; 404 otherwise.',
  request: requestSchema({ params: userRoleParams }),
  response: RoleResponse,
  http: admin('GET', '/api/users/:userId/roles/:roleId', 200),
});

/** Takes a role from a user. */
export const removeUserRole = defineOperation({
  operationId: 'removeRole',
  service: 'auth',
  summary: 'Take a role from a user',
  tags,
  description: `404 when the user does not have it. A user keeps at least one role (409 \`conflict\`). ${adminsStay}`,
  request: requestSchema({ params: userRoleParams }),
  response: NoContent,
  http: admin('DELETE', '/api/users/:userId/roles/:roleId', 204, ['not_found', 'conflict']),
});

/** The roles a user has in one space. */
export const getUserRolesBySpace = defineOperation({
  operationId: 'getRolesBySpace',
  service: 'auth',
  summary: 'The roles of a user in a space',
  tags,
  description:
    "Roles are global: the user's roles when they belong to the space (an administrator belongs to every space), none otherwise.",
  request: requestSchema({ params: userParams, query: spaceQuery }),
  response: Type.Array(RoleResponse),
  http: admin('GET', '/api/users/:userId/roles/by-space', 200),
});

/** Usernames of the users of the active space. */
export const getActiveSpaceUsernames = defineOperation({
  operationId: 'getActiveSpaceUsernames',
  service: 'auth',
  summary: 'Users of the active space',
  tags,
  description:
    'Usernames, in order, of the users who belong to the active space (administrators belong to every space). ' +
    "The active space is the one `X-Space` names, else the caller's default space, by the rule of space-scoped routes.",
  request: requestSchema({}),
  response: Type.Array(Type.String()),
  http: { method: 'GET', path: '/api/users/by-active-space', status: 200, access: 'admin', spaceScoped: true },
});

/** A user's default space, by username. */
export const getUserDefaultSpace = defineOperation({
  operationId: 'getDefaultSpace',
  service: 'auth',
  summary: 'The default space of a user',
  tags,
  description:
    "The space the user's requests work in when they send no `X-Space` (see `GET /api/users/default-space`). 404 for an unknown user or a user in no space.",
  request: requestSchema({ params: usernameParams }),
  response: SpaceResponse,
  http: admin('GET', '/api/users/:username/default-space', 200),
});

/** Chooses a user's default space. */
export const setUserDefaultSpace = defineOperation({
  operationId: 'setDefaultSpace',
  service: 'auth',
  summary: 'Choose the default space of a user',
  tags,
  description:
    "A missing user or space is 404; a space the user does not belong to is 409 `conflict` (give it first). Applies from the user's next request.",
  request: requestSchema({ params: usernameParams, query: spaceQuery }),
  response: NoContent,
  http: admin('PUT', '/api/users/:username/default-space', 204, ['not_found', 'conflict']),
});

/** An administrator resets another user's password. */
export const resetUserPassword = defineOperation({
  operationId: 'resetPassword',
  service: 'auth',
  summary: "Reset a user's password",
  tags,
  description:
    'The platform sends no mail, so no password travels to the user from here, and none is ever answered or logged. ' +
    "With `newPassword`, that is the user's password from now on: a temporary one the administrator hands over " +
    'in person. Without a body (as the reference sends it) the current password stops working at once and nobody ' +
    'knows the new one: the account waits for an administrator to set one (this route with `newPassword`, or ' +
    '`PUT /api/users/{userId}`), which suits a password believed known to someone else. Either way every session ' +
    'of the user ends, `requirePasswordReset` becomes true until the user chooses their own password ' +
    '(`POST /api/users/reset-password`), and the act is in the auth log. An administrator resetting their own ' +
    'password is 409 `conflict`: they change it with `POST /api/users/reset-password`, which asks for the current one.',
  request: requestSchema({ params: usernameParams, body: Type.Optional(AdminPasswordReset) }),
  response: NoContent,
  http: admin('POST', '/api/users/:username/reset-password', 204, ['not_found', 'conflict']),
});

/** Deletes several users at once. */
export const deleteUsersByIds = defineOperation({
  operationId: 'deleteUsersByIds',
  service: 'auth',
  summary: 'Delete users',
  tags,
  description:
    'All or nothing: an id that names no user is 404 and nobody is deleted. The guards of a single deletion hold ' +
    'for the set: the caller cannot delete themself, and the last enabled administrator stays (409 `conflict`, ' +
    "nobody deleted). Each deleted user's sessions end.",
  request: requestSchema({
    query: Type.Object(
      { userIds: QueryList(EntityId, { maxItems: 500, description: 'Ids of the users to delete.' }) },
      { additionalProperties: false },
    ),
  }),
  response: NoContent,
  http: admin('DELETE', '/api/users/multi/by-ids', 204, ['not_found', 'conflict']),
});

/** Roles by name, for the handlers. */
export const roleNames = RoleName.anyOf.map((r) => r.const);

/** The membership, default-space, reset and bulk operations, for the registry. */
export const membershipOperations = [
  getUserSpaces,
  addUserSpace,
  getUserSpace,
  removeUserSpace,
  getUserRoles,
  addUserRole,
  getUserRole,
  removeUserRole,
  getUserRolesBySpace,
  getActiveSpaceUsernames,
  getUserDefaultSpace,
  setUserDefaultSpace,
  resetUserPassword,
  deleteUsersByIds,
];
