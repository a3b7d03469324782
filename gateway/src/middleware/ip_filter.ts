import { ipAllowed, ProblemError } from '@scada/contracts';
import type { Middleware } from 'koa';
import type { AuthView } from '../auth/auth_view.ts';

/** Paths the IP filter leaves open: the orchestrator's probes. */
const probes = new Set(['/healthz', '/readyz']);

/**
 * Enforces the IP filter the auth service keeps on every route but the probes, before any
 * authentication: a denied address, or one outside a non-empty allow-list, gets 403 `ip_denied`.
 */
export function ipFilter(auth: AuthView): Middleware {
  return async (ctx, next) => {
    if (probes.has(ctx.path)) return next();
    const filter = await auth.ipFilter(ctx.state.requestId);
    if (!ipAllowed(filter, ctx.state.clientIp)) {
      throw new ProblemError('ip_denied', 'Requests from this address are not allowed');
    }
    await next();
  };
}
