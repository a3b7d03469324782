import { deadlineOf, ProblemError, refresh as refreshOp, type Actor, type Principal } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import type { Context } from 'koa';
import type { AccessClaims, AuthView } from './auth_view.ts';
import { cookieNames, setSessionCookies } from './cookies.ts';
import { isExpired } from './tokens.ts';

/** A signed-in caller as the gateway established it for one request. */
export type Session = { claims: AccessClaims; principal: Principal; viaCookie: boolean };

/** What resolving a session needs. */
export type SessionDeps = { bus: Bus; auth: AuthView; busTimeoutMs: number };

/**
 * Finds the caller's session. Session cookies win over a bearer token on the same request. An access
 * cookie that is missing or expired is renewed from a valid refresh cookie, and the answer carries the
 * fresh cookies. Revoked families, disabled and deleted users are refused with `invalid_token`.
 * Answers null when the request carries no credentials at all.
 */
export async function resolveSession(ctx: Context, deps: SessionDeps): Promise<Session | null> {
  const accessCookie = ctx.cookies.get(cookieNames.access);
  const refreshCookie = ctx.cookies.get(cookieNames.refresh);
  if (accessCookie || refreshCookie) {
    let claims: AccessClaims | null = null;
    if (accessCookie) {
      try {
        claims = await deps.auth.verifyAccess(accessCookie, ctx.state.requestId);
      } catch (err) {
        if (!isExpired(err) || !refreshCookie) throw err;
      }
    }
    claims ??= await renew(ctx, deps, refreshCookie as string);
    return { claims, principal: await checkLive(ctx, deps, claims), viaCookie: true };
  }
  const bearer = bearerToken(ctx);
  if (bearer === null) return null;
  const claims = await deps.auth.verifyAccess(bearer, ctx.state.requestId);
  return { claims, principal: await checkLive(ctx, deps, claims), viaCookie: false };
}

async function renew(ctx: Context, deps: SessionDeps, refreshToken: string): Promise<AccessClaims> {
  const grant = await call(
    deps.bus,
    refreshOp,
    { params: {}, query: {}, body: { refresh_token: refreshToken } },
    {
      requestId: ctx.state.requestId,
      clientIp: ctx.state.clientIp,
      timeoutMs: deadlineOf(refreshOp, deps.busTimeoutMs),
    },
  );
  setSessionCookies(ctx, grant);
  return deps.auth.verifyAccess(grant.access_token, ctx.state.requestId);
}

async function checkLive(ctx: Context, deps: SessionDeps, claims: AccessClaims): Promise<Principal> {
  if (deps.auth.isRevoked(claims.sid)) throw new ProblemError('invalid_token', 'The session has ended');
  const principal = await deps.auth.principal(claims.sub, ctx.state.requestId);
  if (!principal.enabled) throw new ProblemError('invalid_token', 'The account is disabled');
  return principal;
}

/** The bearer token of the Authorization header; null when there is none; 401 when it is malformed. */
function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  if (!header) return null;
  const match = /^Bearer ([A-Za-z0-9_.~+/-]+=*)$/i.exec(header);
  if (!match) throw new ProblemError('invalid_token', 'The Authorization header is not a bearer token');
  return match[1] as string;
}

/** The actor the services see for a session. */
export function actorOf(session: Session): Actor {
  const { principal } = session;
  return { id: principal.id, name: principal.name, roles: principal.roles, spaces: principal.spaces, sid: session.claims.sid };
}
