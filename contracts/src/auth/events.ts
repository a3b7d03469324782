import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../event.ts';

/** Body of every auth event: what changed, where, by whom. */
export const AuthEvent = Type.Object({
  id: Type.Union([Type.String(), Type.Null()]),
  space: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Union([Type.String(), Type.Null()]),
  /** For `session.revoked`: the family and when its last token expires (epoch seconds). */
  sid: Type.Optional(Type.String()),
  until: Type.Optional(Type.Integer()),
  at: Type.String({ format: 'date-time' }),
});
export type AuthEvent = Static<typeof AuthEvent>;

const verbs = ['created', 'updated', 'deleted'] as const;

/**
 * Events the auth service publishes after a change commits. Gateways follow them to keep their caches of
 * users, revoked sessions and the IP filter current, and to end live streams whose access ended.
 */
export const authEvents = {
  user: defineEvent({
    name: 'auth.user',
    publisher: 'auth',
    kinds: verbs,
    schema: AuthEvent,
    summary: 'A user was created, changed (roles, spaces, status, OTP, password) or deleted.',
  }),
  sessionRevoked: defineEvent({
    name: 'auth.session.revoked',
    publisher: 'auth',
    schema: AuthEvent,
    summary: 'A session family was revoked (`sid`, and `until`: when its last token expires).',
  }),
  ipUpdated: defineEvent({ name: 'auth.ip.updated', publisher: 'auth', schema: AuthEvent, summary: 'The IP filter changed.' }),
  space: defineEvent({
    name: 'auth.space',
    publisher: 'auth',
    kinds: verbs,
    schema: AuthEvent,
    summary: 'A space was created, renamed or deleted.',
  }),
};
