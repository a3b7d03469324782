import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { EntityId, IpSettingsResponse, RoleName } from './schemas.ts';

/**
 * The session operations: served by the auth service, called by the gateway only. They have no HTTP
 * binding of their own because the gateway shapes `/login`, `/validate`, `/refresh` and `/logout`
 * (encodings, cookies, CSRF, rate limits) around them.
 */

/** Tokens and session facts handed to the gateway on a completed login or a refresh. */
export const SessionGrant = Type.Object({
  kind: Type.Literal('session'),
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  'expire-seconds': Type.Integer({ minimum: 1 }),
  'refresh-expire-seconds': Type.Integer({ minimum: 1 }),
  spaces: Type.Array(EntityId),
  activeSpace: Type.Union([EntityId, Type.Null()]),
  userId: EntityId,
  username: Type.String(),
});
export type SessionGrant = Static<typeof SessionGrant>;

/** The answer to a correct password of a user with TOTP: a single-use challenge for `/validate`. */
export const OtpChallenge = Type.Object({
  kind: Type.Literal('otp'),
  otp_required: Type.Literal(true),
  otp_type: Type.Literal('TOTP'),
  username: Type.String(),
  otp_token: Type.String(),
  'expire-seconds': Type.Integer({ minimum: 1 }),
});
export type OtpChallenge = Static<typeof OtpChallenge>;

// Credentials are bounded generously here; the service answers out-of-range ones as invalid credentials.
const LoginBody = Type.Object(
  { username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 4096 }) },
  { additionalProperties: false },
);

/** Checks a username and password; answers a session, or an OTP challenge when TOTP is enabled. */
export const login = defineOperation({
  operationId: 'login',
  service: 'auth',
  summary: 'Check a password and open a session',
  tags: ['Authentication'],
  request: requestSchema({ body: LoginBody }),
  response: Type.Union([SessionGrant, OtpChallenge]),
});

/** Completes a login with the OTP challenge and a TOTP code. */
export const validateOtp = defineOperation({
  operationId: 'validateOtp',
  service: 'auth',
  summary: 'Check a TOTP code against a login challenge',
  tags: ['Authentication'],
  request: requestSchema({
    body: Type.Object(
      { username: Type.String({ maxLength: 1024 }), otp_code: Type.String({ maxLength: 64 }), otp_token: Type.String({ maxLength: 4096 }) },
      { additionalProperties: false },
    ),
  }),
  response: SessionGrant,
});

/** Rotates a refresh token into a new pair. */
export const refresh = defineOperation({
  operationId: 'refresh',
  service: 'auth',
  summary: 'Rotate a refresh token',
  tags: ['Authentication'],
  request: requestSchema({ body: Type.Object({ refresh_token: Type.String({ maxLength: 4096 }) }, { additionalProperties: false }) }),
  response: SessionGrant,
});

/** Ends a session: the family named by `sid` (from a verified access token) or by a refresh token. */
export const logout = defineOperation({
  operationId: 'logout',
  service: 'auth',
  summary: 'Revoke a session family',
  tags: ['Authentication'],
  request: requestSchema({
    body: Type.Object(
      { sid: Type.Optional(Type.String({ maxLength: 64 })), refresh_token: Type.Optional(Type.String({ maxLength: 4096 })) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Null(),
});

/** A public signing key as a JWK. */
export const PublicJwk = Type.Object({
  kid: Type.String(),
  kty: Type.String(),
  alg: Type.String(),
  crv: Type.Optional(Type.String()),
  x: Type.Optional(Type.String()),
  y: Type.Optional(Type.String()),
});

/** The public keys that verify access tokens, newest first. */
export const signingKeys = defineOperation({
  operationId: 'signingKeys',
  service: 'auth',
  summary: 'Public keys of token signatures',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: Type.Object({ issuer: Type.String(), audience: Type.String(), algorithm: Type.String(), keys: Type.Array(PublicJwk) }),
});

/** What the gateway needs to know of a signed-in user on each request. */
export const Principal = Type.Object({
  id: EntityId,
  name: Type.String(),
  enabled: Type.Boolean(),
  roles: Type.Array(RoleName),
  spaces: Type.Array(EntityId),
  activeSpace: Type.Union([EntityId, Type.Null()]),
  /** The password was set by someone else: until the user chooses their own, they may do little else. */
  requirePasswordReset: Type.Boolean(),
});
export type Principal = Static<typeof Principal>;

/** The current state of a user, by id; 404 when the user no longer exists. */
export const principal = defineOperation({
  operationId: 'principal',
  service: 'auth',
  summary: 'Current roles, spaces and status of a user',
  tags: ['Authentication'],
  request: requestSchema({ params: Type.Object({ userId: EntityId }, { additionalProperties: false }) }),
  response: Principal,
});

/** A revoked session family and the time its last token expires (epoch seconds). */
export const RevokedSession = Type.Object({ sid: Type.String(), until: Type.Integer() });

/** Every revoked session family whose tokens could still be presented. */
export const revocations = defineOperation({
  operationId: 'revocations',
  service: 'auth',
  summary: 'Live revoked session families',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: Type.Object({ sessions: Type.Array(RevokedSession) }),
});

/** The most session families one `sessionStates` request names. */
export const maxSessionStates = 1000;

/** A session family as a gateway re-checks the live streams it holds for it. */
export const SessionFamilyState = Type.Object({
  sid: Type.String(),
  /** When the family ends unless it is renewed first: its current refresh token's expiry (epoch seconds). */
  expires: Type.Integer(),
  revoked: Type.Boolean(),
  /** The family's user as the gateway enforces them; null when the user no longer exists. */
  principal: Type.Union([Principal, Type.Null()]),
});
export type SessionFamilyState = Static<typeof SessionFamilyState>;

/**
 * The current state of session families, by sid: when each ends, whether it was revoked, and its user.
 * A family the store does not know (never opened, or its user deleted) is left out of the answer.
 */
export const sessionStates = defineOperation({
  operationId: 'sessionStates',
  service: 'auth',
  summary: 'Current state of session families',
  tags: ['Authentication'],
  request: requestSchema({
    body: Type.Object(
      { sids: Type.Array(Type.String({ maxLength: 64 }), { maxItems: maxSessionStates }) },
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({ sessions: Type.Array(SessionFamilyState) }),
});

/** The IP filter the gateways enforce. */
export const ipFilter = defineOperation({
  operationId: 'ipFilter',
  service: 'auth',
  summary: 'IP filter settings for the gateways',
  tags: ['Authentication'],
  request: requestSchema({}),
  response: IpSettingsResponse,
});

/** Every session operation, for the registry. */
export const sessionOperations = [login, validateOtp, refresh, logout, signingKeys, principal, revocations, sessionStates, ipFilter];
