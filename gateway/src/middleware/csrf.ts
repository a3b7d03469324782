import { ProblemError } from '@scada/contracts';
import type { Context, Middleware } from 'koa';
import { cookieNames } from '../auth/cookies.ts';

const unsafe = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const sessionRoutes = new Set(['/login', '/validate']);

/**
 * Refuses cross-site requests that a browser would send with the session cookies: a cookie-carrying
 * `POST`, `PUT`, `PATCH` or `DELETE` (and any `/login` or `/validate`) whose `Sec-Fetch-Site` says
 * cross-site or whose `Origin` is not this gateway's own origin (scheme, host and port, the scheme as
 * the client used it: see `client_ip.ts`) answers 403 `csrf_rejected`.
 * Requests without cookies (bearer clients, scripts) are not a CSRF risk and pass.
 */
export function csrf(): Middleware {
  return (ctx, next) => {
    // Not async: it does nothing after `next`, and an async frame a request is garbage for nothing (a throw
    // here still reaches the problem middleware as a rejection: koa-compose turns it into one).
    const login = sessionRoutes.has(ctx.path) && ctx.method === 'POST';
    const cookieAuthed = unsafe.has(ctx.method) && hasSessionCookie(ctx);
    if ((login || cookieAuthed) && isCrossSite(ctx)) {
      throw new ProblemError('csrf_rejected', 'Cross-site requests are not accepted here');
    }
    return next();
  };
}

function hasSessionCookie(ctx: Context): boolean {
  return Boolean(ctx.cookies.get(cookieNames.access) || ctx.cookies.get(cookieNames.refresh));
}

function isCrossSite(ctx: Context): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site === 'cross-site') return true;
  const origin = ctx.get('origin');
  if (!origin) return false;
  if (origin === 'null') return true;
  try {
    return new URL(origin).origin !== new URL(`${ctx.state.scheme ?? ctx.protocol}://${ctx.host}`).origin;
  } catch {
    return true;
  }
}
