import { ipAllowed, ProblemError, type IpFilter } from '@scada/contracts';
import type { Middleware } from 'koa';
import type { AuthView } from '../auth/auth_view.ts';

/** Paths the IP filter leaves open: the orchestrator's probes. */
const probes = new Set(['/healthz', '/readyz']);

/** Addresses whose verdict is remembered per filter at most; past it the memory starts afresh. */
const maxRemembered = 10_000;

/**
 * Enforces the IP filter the auth service keeps on every route but the probes, before any
 * authentication: a denied address, or one outside a non-empty allow-list, gets 403 `ip_denied`.
 * The verdict for an address is remembered for as long as the filter it came from is the current one:
 * a changed filter is a new object, and every address is judged again against it.
 */
export function ipFilter(auth: AuthView): Middleware {
  const verdicts = new WeakMap<IpFilter, Map<string, boolean>>();
  const allowed = (filter: IpFilter, address: string): boolean => {
    let known = verdicts.get(filter);
    if (!known) verdicts.set(filter, (known = new Map()));
    let verdict = known.get(address);
    if (verdict === undefined) {
      verdict = ipAllowed(filter, address);
      if (known.size >= maxRemembered) known.clear();
      known.set(address, verdict);
    }
    return verdict;
  };
  return async (ctx, next) => {
    if (probes.has(ctx.path)) return next();
    const filter = await auth.ipFilter(ctx.state.requestId);
    if (!allowed(filter, ctx.state.clientIp)) {
      throw new ProblemError('ip_denied', 'Requests from this address are not allowed');
    }
    await next();
  };
}
