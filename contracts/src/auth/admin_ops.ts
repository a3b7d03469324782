import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import {
  AuthAttemptPage,
  CurrentUser,
  EntityId,
  IpSettingsRequest,
  IpSettingsResponse,
  OtpEnrolment,
  OtpStepUp,
  SpaceRequest,
  SpaceResponse,
  UserCreateRequest,
  UserResponse,
  UserUpdateRequest,
} from './schemas.ts';

const userParams = Type.Object({ userId: EntityId }, { additionalProperties: false });
const spaceParams = Type.Object({ spaceId: EntityId }, { additionalProperties: false });
const usernameParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

/** Lists every user. */
export const getUsers = defineOperation({
  operationId: 'getUsers',
  service: 'auth',
  summary: 'List users',
  tags: ['Users'],
  request: requestSchema({}),
  response: Type.Array(UserResponse),
  http: { method: 'GET', path: '/api/users', status: 200, access: 'admin', spaceScoped: false },
});

/** Creates a user with a password, roles and spaces. */
export const createUser = defineOperation({
  operationId: 'createUser',
  service: 'auth',
  summary: 'Create a user',
  tags: ['Users'],
  request: requestSchema({ body: UserCreateRequest }),
  response: UserResponse,
  http: { method: 'POST', path: '/api/users', status: 200, access: 'admin', spaceScoped: false, errors: ['conflict', 'validation_failed'] },
});

/** Reads one user. */
export const getUser = defineOperation({
  operationId: 'getUser',
  service: 'auth',
  summary: 'Read a user',
  tags: ['Users'],
  request: requestSchema({ params: userParams }),
  response: UserResponse,
  http: { method: 'GET', path: '/api/users/:userId', status: 200, access: 'admin', spaceScoped: false, errors: ['not_found'] },
});

/** Changes a user; a change of roles, spaces or status applies on their next request. */
export const updateUser = defineOperation({
  operationId: 'updateUser',
  service: 'auth',
  summary: 'Update a user',
  tags: ['Users'],
  description:
    "A change of roles, spaces or status applies on the user's next request. A password set for another user ends their sessions and sets `requirePasswordReset` until they choose their own.",
  request: requestSchema({ params: userParams, body: UserUpdateRequest }),
  response: NoContent,
  http: { method: 'PUT', path: '/api/users/:userId', status: 204, access: 'admin', spaceScoped: false, errors: ['not_found', 'conflict'] },
});

/** Deletes a user and ends their sessions. */
export const deleteUser = defineOperation({
  operationId: 'deleteUser',
  service: 'auth',
  summary: 'Delete a user',
  tags: ['Users'],
  request: requestSchema({ params: userParams }),
  response: NoContent,
  http: {
    method: 'DELETE',
    path: '/api/users/:userId',
    status: 204,
    access: 'admin',
    spaceScoped: false,
    errors: ['not_found', 'conflict'],
  },
});

/** Enrols a user in TOTP (admin, or the user itself); the only answer that shows the secret. */
export const enableUserOtp = defineOperation({
  operationId: 'enableUserOtp',
  service: 'auth',
  summary: 'Enable TOTP for a user',
  tags: ['Users'],
  description:
    'Enrols the user in TOTP with a new secret, answered once. An administrator enrolling another user needs no ' +
    'step-up (the act is in the auth log); a user enrolling themself (administrators too) sends `currentPassword`, ' +
    'and the current `otpCode` when already enrolled: without them, or wrong, 403 `reauthentication_required`, and ' +
    'a wrong one counts toward the account lock.',
  request: requestSchema({ params: userParams, body: Type.Optional(OtpStepUp) }),
  response: OtpEnrolment,
  http: {
    method: 'POST',
    path: '/api/users/:userId/otp',
    status: 200,
    access: 'user',
    spaceScoped: false,
    errors: ['not_found', 'forbidden', 'reauthentication_required', 'account_locked'],
  },
});

/** Turns TOTP off for a user (admin, or the user itself). */
export const disableUserOtp = defineOperation({
  operationId: 'disableUserOtp',
  service: 'auth',
  summary: 'Disable TOTP for a user',
  tags: ['Users'],
  description:
    "An administrator turning off another user's TOTP needs no step-up (the act is in the auth log); a user " +
    'turning off their own (administrators too) sends `currentPassword` and the current `otpCode`: without them, or ' +
    'wrong, 403 `reauthentication_required`, and a wrong one counts toward the account lock.',
  request: requestSchema({ params: userParams, body: Type.Optional(OtpStepUp) }),
  response: NoContent,
  http: {
    method: 'DELETE',
    path: '/api/users/:userId/otp',
    status: 204,
    access: 'user',
    spaceScoped: false,
    errors: ['not_found', 'forbidden', 'reauthentication_required', 'account_locked'],
  },
});

/** The caller's spaces; every space for an admin. */
export const getSpaces = defineOperation({
  operationId: 'getSpaces_1',
  service: 'auth',
  summary: 'List spaces',
  tags: ['Spaces'],
  request: requestSchema({}),
  response: Type.Array(SpaceResponse),
  http: { method: 'GET', path: '/api/spaces', status: 200, access: 'user', spaceScoped: false },
});

/** Creates a space. */
export const createSpace = defineOperation({
  operationId: 'createSpace',
  service: 'auth',
  summary: 'Create a space',
  tags: ['Spaces'],
  request: requestSchema({ body: SpaceRequest }),
  response: SpaceResponse,
  http: { method: 'POST', path: '/api/spaces', status: 200, access: 'admin', spaceScoped: false, errors: ['conflict'] },
});

/** Reads a space the caller belongs to (any space for an admin). */
export const getSpace = defineOperation({
  operationId: 'getSpace',
  service: 'auth',
  summary: 'Read a space',
  tags: ['Spaces'],
  request: requestSchema({ params: spaceParams }),
  response: SpaceResponse,
  http: { method: 'GET', path: '/api/spaces/:spaceId', status: 200, access: 'user', spaceScoped: false, errors: ['not_found'] },
});

/** Renames a space. */
export const updateSpace = defineOperation({
  operationId: 'updateSpace',
  service: 'auth',
  summary: 'Rename a space',
  tags: ['Spaces'],
  request: requestSchema({ params: spaceParams, body: SpaceRequest }),
  response: NoContent,
  http: {
    method: 'PUT',
    path: '/api/spaces/:spaceId',
    status: 204,
    access: 'admin',
    spaceScoped: false,
    errors: ['not_found', 'conflict'],
  },
});

/** Deletes a space; the `default` space and a space some user has as their only one are kept (409). */
export const deleteSpace = defineOperation({
  operationId: 'deleteSpace',
  service: 'auth',
  summary: 'Delete a space',
  tags: ['Spaces'],
  request: requestSchema({ params: spaceParams }),
  response: NoContent,
  http: {
    method: 'DELETE',
    path: '/api/spaces/:spaceId',
    status: 204,
    access: 'admin',
    spaceScoped: false,
    errors: ['not_found', 'conflict'],
  },
});

/** Reads the IP filter. */
export const getIpFilterSettings = defineOperation({
  operationId: 'getIpFilterSettings',
  service: 'auth',
  summary: 'Read the IP filter',
  tags: ['IP filter'],
  request: requestSchema({}),
  response: IpSettingsResponse,
  http: { method: 'GET', path: '/api/ip/settings', status: 200, access: 'admin', spaceScoped: false },
});

/** Replaces the IP filter; every gateway applies it within 2 seconds. */
export const setIpFilterSettings = defineOperation({
  operationId: 'setIpFilterSettings',
  service: 'auth',
  summary: 'Replace the IP filter',
  tags: ['IP filter'],
  request: requestSchema({ body: IpSettingsRequest }),
  response: NoContent,
  http: {
    method: 'PUT',
    path: '/api/ip/settings',
    status: 204,
    access: 'admin',
    spaceScoped: false,
    errors: ['validation_failed', 'would_lock_out_self'],
  },
});

/** Usernames locked now. */
export const findLockedUsers = defineOperation({
  operationId: 'findLockedUsers',
  service: 'auth',
  summary: 'List locked usernames',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: Type.Array(Type.String()),
  http: { method: 'GET', path: '/api/auth/locked-users', status: 200, access: 'admin', spaceScoped: false },
});

/** The same listing under the alias path. */
export const lockedUsers = defineOperation({
  operationId: 'lockedUsers',
  service: 'auth',
  summary: 'List locked usernames (alias)',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: Type.Array(Type.String()),
  http: { method: 'GET', path: '/api/auth/lockedUsers', status: 200, access: 'admin', spaceScoped: false },
});

/** Lifts the lock of a username and resets its failure count. */
export const unlockUser = defineOperation({
  operationId: 'unlockUser',
  service: 'auth',
  summary: 'Unlock a username',
  tags: ['Authentication'],
  request: requestSchema({ params: usernameParams }),
  response: NoContent,
  http: { method: 'DELETE', path: '/api/auth/lockedUsers/:username', status: 204, access: 'admin', spaceScoped: false },
});

/** Login and OTP attempts, newest first, paged. */
export const findAuthAttempts = defineOperation({
  operationId: 'findAuthAttempts',
  service: 'auth',
  summary: 'Read the auth log',
  tags: ['Authentication'],
  request: requestSchema({
    query: Type.Object(
      {
        page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
        size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20 })),
      },
      { additionalProperties: false },
    ),
  }),
  response: AuthAttemptPage,
  http: { method: 'GET', path: '/api/auth/auth-logs', status: 200, access: 'admin', spaceScoped: false },
});

/** Usernames with a live session. */
export const getLoggedInUsers = defineOperation({
  operationId: 'getLoggedInUsers',
  service: 'auth',
  summary: 'List users with a live session',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: Type.Array(Type.String()),
  http: { method: 'GET', path: '/api/auth/logged-in-users', status: 200, access: 'admin', spaceScoped: false },
});

/** Who the caller is, with their active space and address. */
export const getCurrentUser = defineOperation({
  operationId: 'getCurrentUser',
  service: 'auth',
  summary: 'The signed-in user',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: CurrentUser,
  http: { method: 'GET', path: '/api/auth/current-user', status: 200, access: 'user', spaceScoped: false, beforePasswordChange: true },
});

/** Every administration operation of the auth service, for the registry. */
export const adminOperations = [
  getUsers,
  createUser,
  getUser,
  updateUser,
  deleteUser,
  enableUserOtp,
  disableUserOtp,
  getSpaces,
  createSpace,
  getSpace,
  updateSpace,
  deleteSpace,
  getIpFilterSettings,
  setIpFilterSettings,
  findLockedUsers,
  lockedUsers,
  unlockUser,
  findAuthAttempts,
  getLoggedInUsers,
  getCurrentUser,
];
