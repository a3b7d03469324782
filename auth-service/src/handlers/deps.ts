import { authEvents, ProblemError, type Principal, type SessionGrant } from '@scada/contracts';
import { actorOf, publishEvent, type Bus, type HandlerContext, type Store } from '@scada/platform';
import type { Logger } from 'pino';
import type { AuthConfig } from '../config.ts';
import type { CheckQueue } from '../domain/check_queue.ts';
import type { Passwords } from '../domain/passwords.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { newJti, signPair, type PairClaims } from '../domain/tokens.ts';
import type { KeyRing } from '../store/keys.ts';
import { openSession, revokeUserSessions } from '../store/sessions.ts';
import { listSpaces } from '../store/spaces.ts';
import { findUser, type UserRecord } from '../store/users.ts';

/** What the auth service's handlers use. */
export type AuthDeps = {
  store: Store;
  bus: Bus;
  config: AuthConfig;
  keys: KeyRing;
  passwords: Passwords;
  checks: CheckQueue;
  secrets: SecretBox;
  log: Logger;
};

/** The caller's name for audit fields. */
export function actorName(ctx: HandlerContext): string | null {
  return ctx.actor?.name ?? null;
}

/** The one answer for every failed password check: unknown user, wrong password, disabled user. */
export function invalidCredentials(): ProblemError {
  return new ProblemError('invalid_credentials', 'The username or password is not correct');
}

/**
 * Roles, spaces and status of a user as the gateway enforces them (a password someone else set included:
 * until it is changed, the gateway lets the user do little else); administrators are in every space. The
 * active space is the default space the user chose while they still belong to it, else `default` when they
 * belong to it, else their first space.
 */
export async function principalOf(deps: AuthDeps, user: UserRecord): Promise<Principal> {
  const spaces = user.roles.includes('admin') ? (await listSpaces(deps.store)).map((s) => s.id) : [...user.spaces];
  const chosen = user.defaultSpace !== null && spaces.includes(user.defaultSpace) ? user.defaultSpace : null;
  const activeSpace = chosen ?? (spaces.includes('default') ? 'default' : (user.spaces[0] ?? spaces[0] ?? null));
  return {
    id: user.id,
    name: user.username,
    enabled: user.enabled,
    roles: user.roles,
    spaces,
    activeSpace,
    requirePasswordReset: user.requirePasswordReset,
  };
}

/** The time now in whole epoch seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Claims of a fresh pair in a family. */
export function freshClaims(deps: AuthDeps, user: { id: string; username: string }, sid: string): PairClaims {
  const iat = nowSeconds();
  return {
    sub: user.id,
    sid,
    name: user.username,
    iat,
    accessJti: newJti(),
    accessExp: iat + deps.config.accessTokenTtlSeconds,
    refreshJti: newJti(),
    refreshExp: iat + deps.config.refreshTokenTtlSeconds,
  };
}

/** Signs a pair and shapes the grant the gateway answers with. */
export async function grantOf(deps: AuthDeps, user: UserRecord, claims: PairClaims): Promise<SessionGrant> {
  const { access, refresh } = await signPair(deps.keys.current, claims);
  const principal = await principalOf(deps, user);
  return {
    kind: 'session',
    access_token: access,
    refresh_token: refresh,
    token_type: 'Bearer',
    'expire-seconds': claims.accessExp - claims.iat,
    'refresh-expire-seconds': claims.refreshExp - claims.iat,
    spaces: principal.spaces,
    activeSpace: principal.activeSpace,
    userId: user.id,
    username: user.username,
  };
}

/** Opens a new session family for a user and grants its first pair. */
export async function openGrant(deps: AuthDeps, user: UserRecord): Promise<SessionGrant> {
  const claims = freshClaims(deps, user, newJti());
  await openSession(deps.store, claims);
  return grantOf(deps, user, claims);
}

/** Tells every gateway that a session family is revoked. */
export function announceRevoked(deps: AuthDeps, ctx: HandlerContext, sid: string, until: number): void {
  publishEvent(
    deps.bus,
    authEvents.sessionRevoked,
    { id: null, space: null, actor: actorName(ctx), sid, until },
    { requestId: ctx.requestId },
  );
}

/**
 * Ends every live session of a user, but `keepSid` when given (the session making a change to its own
 * account), and tells every gateway, which refuses their tokens from then on.
 */
export async function endUserSessions(deps: AuthDeps, ctx: HandlerContext, userId: string, keepSid: string | null = null): Promise<void> {
  for (const { sid, until } of await revokeUserSessions(deps.store, userId, keepSid)) announceRevoked(deps, ctx, sid, until);
}

/** Tells every gateway that a user changed (or went): they drop their copy and load it on the next request. */
export function announceUser(deps: AuthDeps, ctx: HandlerContext, verb: 'created' | 'updated' | 'deleted', id: string): void {
  publishEvent(deps.bus, authEvents.user, { id, space: null, actor: actorName(ctx) }, { kind: verb, requestId: ctx.requestId });
}

/** The caller's own user record; a token of a user who is gone is refused. */
export async function callerRecord(deps: AuthDeps, ctx: HandlerContext): Promise<UserRecord> {
  const user = await findUser(deps.store, { id: actorOf(ctx).id });
  if (!user) throw new ProblemError('invalid_token', 'The user no longer exists');
  return user;
}
