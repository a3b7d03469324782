import { Type } from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema } from '../operation.ts';
import { AuthFeatures, EntityId, OwnPasswordChange, ProfileUpdateRequest, SpaceResponse, UserResponse } from './schemas.ts';

/*
 * What a signed-in user reads and changes about themself, and what the sign-in offers. Every route here
 * acts on the caller; none takes a user id.
 */

const spaceQuery = Type.Object({ spaceId: EntityId }, { additionalProperties: false });

/** The caller's own user. */
export const getProfile = defineOperation({
  operationId: 'getProfile',
  service: 'auth',
  summary: "The caller's profile",
  tags: ['Profile'],
  description: 'The signed-in user as `GET /api/users/{userId}` shows them: never a password, hash or OTP secret.',
  request: requestSchema({}),
  response: UserResponse,
  http: { method: 'GET', path: '/api/users/profile', status: 200, access: 'user', spaceScoped: false, beforePasswordChange: true },
});

/** Changes the caller's email, phone and OTP type. */
export const updateProfile = defineOperation({
  operationId: 'updateProfile',
  service: 'auth',
  summary: "Change the caller's profile",
  tags: ['Profile'],
  description:
    'Sets `email` (required; empty or null removes it) and `phone` (left out: kept). Username, roles, spaces and ' +
    "status are the administrator's to change. `otpType` equal to the current type changes nothing. Turning TOTP " +
    'off (`none`) is a change of the OTP type and needs the same step-up as the OTP routes: `currentPassword` and ' +
    'the current `otpCode`; without them, or with a wrong one, 403 `reauthentication_required`, and a wrong one ' +
    'counts toward the account lock. Turning TOTP on through the profile is 400: enrolment answers the secret, so ' +
    'it is `POST /api/users/{userId}/otp`. OTP by SMS or mail is not offered (the platform sends no messages).',
  request: requestSchema({ body: ProfileUpdateRequest }),
  response: NoContent,
  http: {
    method: 'PUT',
    path: '/api/users/profile',
    status: 204,
    access: 'user',
    spaceScoped: false,
    errors: ['reauthentication_required', 'account_locked'],
  },
});

/** Changes the caller's own password. */
export const resetOwnPassword = defineOperation({
  operationId: 'resetOwnPassword',
  service: 'auth',
  summary: "Change the caller's password",
  tags: ['Profile'],
  description:
    'Needs the current password (`oldPassword`) and, when TOTP is enrolled, the current `otpCode`: without them, or ' +
    'with a wrong one, 403 `reauthentication_required`, and a wrong one counts toward the account lock (423 once ' +
    'locked). `newPasswordAgain` must equal `newPassword` (8 to 1024 characters), else 400. Every other session of ' +
    'the user ends; the one making the change stays. Clears `requirePasswordReset`: a user whose password was set ' +
    'by someone else may do nothing but this, sign out, refresh and read their own profile until they have ' +
    '(every other operation answers 403 `password_change_required`). Administrators change their own password here too.',
  request: requestSchema({ body: OwnPasswordChange }),
  response: NoContent,
  http: {
    method: 'POST',
    path: '/api/users/reset-password',
    status: 204,
    access: 'user',
    spaceScoped: false,
    errors: ['reauthentication_required', 'account_locked'],
    beforePasswordChange: true,
  },
});

/** The space a request of the caller works in when it names none. */
export const getOwnDefaultSpace = defineOperation({
  operationId: 'getOwnDefaultSpace',
  service: 'auth',
  summary: "The caller's default space",
  tags: ['Profile'],
  description:
    "The space the caller's requests work in when they send no `X-Space` (`activeSpace` of the sign-in): the one " +
    'chosen with `PUT`, while the caller still belongs to it; else `default` when the caller belongs to it; else ' +
    'their first space. 404 for a user in no space.',
  request: requestSchema({}),
  response: SpaceResponse,
  http: {
    method: 'GET',
    path: '/api/users/default-space',
    status: 200,
    access: 'user',
    spaceScoped: false,
    errors: ['not_found'],
    beforePasswordChange: true,
  },
});

/** Chooses the caller's default space. */
export const setOwnDefaultSpace = defineOperation({
  operationId: 'setOwnDefaultSpace',
  service: 'auth',
  summary: "Choose the caller's default space",
  tags: ['Profile'],
  description:
    "One of the caller's spaces (any space for an administrator); a space the caller is not in is 404, as one that does not exist. Applies from the next request.",
  request: requestSchema({ query: spaceQuery }),
  response: NoContent,
  http: { method: 'PUT', path: '/api/users/default-space', status: 204, access: 'user', spaceScoped: false, errors: ['not_found'] },
});

/** What the sign-in offers. */
export const getAuthFeatures = defineOperation({
  operationId: 'getAuthFeatures',
  service: 'auth',
  summary: 'What the sign-in offers',
  tags: ['Authentication'],
  description:
    'For a login page to adapt to: no self-registration and no OAuth (`registrationEnabled` and `oauthEnabled` ' +
    'are false), TOTP as the only second factor, the account-lock settings and the password length limits.',
  request: requestSchema({}),
  response: AuthFeatures,
  http: { method: 'GET', path: '/api/auth/features', status: 200, access: 'public', spaceScoped: false },
});

/** The profile operations, for the registry. */
export const profileOperations = [getProfile, updateProfile, resetOwnPassword, getOwnDefaultSpace, setOwnDefaultSpace, getAuthFeatures];
