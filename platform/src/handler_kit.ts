import { ProblemError, type Actor } from '@scada/contracts';
import type { HandlerContext } from './rpc.ts';

/**
 * What every service's handlers ask of a request, answered one way across the platform. Deadlines are
 * in `rpc.ts` (`remainingMs`, `checkDeadline`); store constraint errors in `store/store.ts`
 * (`ConstraintViolation`).
 */

/** The space the request works in: the gateway resolves it for every space-scoped operation (400 `bad_header` when none). */
export function spaceOf(ctx: Pick<HandlerContext, 'space'>): string {
  if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
  return ctx.space;
}

/** The caller the gateway authenticated; 401 `unauthenticated` for an operation that needs one and has none. */
export function actorOf(ctx: Pick<HandlerContext, 'actor'>): Actor {
  if (!ctx.actor) throw new ProblemError('unauthenticated', 'This needs a signed-in caller');
  return ctx.actor;
}

/** 404 `not_found` for something the caller's space does not hold (`No project p-1 in this space`). */
export function notFound(label: string, id: string): ProblemError {
  return new ProblemError('not_found', `No ${label} ${id} in this space`);
}
