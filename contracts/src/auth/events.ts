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

/** The body the registry's tests publish of a user or space event. */
const authExample: AuthEvent = {
  id: '6a1d2b7e-3f48-4c0a-8e5d-91b2c3d4e5f6',
  space: null,
  actor: 'admin',
  at: '2026-04-22T09:30:00.000Z',
};

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
    example: authExample,
    summary: 'A user was created, changed (roles, spaces, status, OTP, password) or deleted.',
  }),
  sessionRevoked: defineEvent({
    name: 'auth.session.revoked',
    publisher: 'auth',
    schema: AuthEvent,
    example: { ...authExample, sid: '5c0e8a3f-2b1d-4e6a-9f7c-0d4b8a2e1c35', until: 1776850200 },
    summary: 'A session family was revoked (`sid`, and `until`: when its last token expires).',
  }),
  ipUpdated: defineEvent({
    name: 'auth.ip.updated',
    publisher: 'auth',
    schema: AuthEvent,
    example: { id: null, space: null, actor: 'admin', at: '2026-04-22T09:30:00.000Z' },
    summary: 'The IP filter changed.',
  }),
  space: defineEvent({
    name: 'auth.space',
    publisher: 'auth',
    kinds: verbs,
    schema: AuthEvent,
    example: { id: 'plant-north', space: 'plant-north', actor: 'admin', at: '2026-04-22T09:30:00.000Z' },
    summary: 'A space was created, renamed or deleted.',
  }),
};
