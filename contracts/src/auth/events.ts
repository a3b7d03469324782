import { Type, type Static } from '@sinclair/typebox';

/**
 * Events the auth service publishes after a change commits. Gateways listen to keep their caches of
 * users, revoked sessions and the IP filter current.
 */
export const authEvents = {
  /** A user was created, changed (roles, spaces, status, OTP) or deleted: `events.auth.user.<verb>`. */
  user: (verb: 'created' | 'updated' | 'deleted') => `events.auth.user.${verb}`,
  /** Every user event. */
  userAny: 'events.auth.user.*',
  /** A session family was revoked. */
  sessionRevoked: 'events.auth.session.revoked',
  /** The IP filter changed. */
  ipUpdated: 'events.auth.ip.updated',
  /** A space was created, renamed or deleted: `events.auth.space.<verb>`. */
  space: (verb: 'created' | 'updated' | 'deleted') => `events.auth.space.${verb}`,
} as const;

/** Body of every auth event: what changed, where, by whom. */
export const AuthEvent = Type.Object({
  id: Type.Union([Type.String(), Type.Null()]),
  space: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Union([Type.String(), Type.Null()]),
  /** For `session.revoked`: the family and when its last token expires (epoch seconds). */
  sid: Type.Optional(Type.String()),
  until: Type.Optional(Type.Integer()),
});
export type AuthEvent = Static<typeof AuthEvent>;
