import { ProblemError, configEvents, type ConfigEntity, type ConfigVerb } from '@scada/contracts';
import { publishEvent, type Bus, type HandlerContext, type Store } from '@scada/platform';
import type { Audit } from '../store/entity_table.ts';

/** What the handlers of the config service use. */
export type HandlerDeps = {
  store: Store;
  bus: Bus;
  /** The service's clock, for audit fields. */
  now: () => Date;
};

/** The space the request works in; the gateway resolves it for every space-scoped operation. */
export function spaceOf(ctx: HandlerContext): string {
  if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
  return ctx.space;
}

/** Who changes what, and when: from the caller the gateway authenticated, and the service's clock. */
export function auditOf(ctx: HandlerContext, deps: HandlerDeps): Audit {
  if (!ctx.actor) throw new ProblemError('unauthenticated', 'A change needs an authenticated caller');
  return { actor: ctx.actor.name, at: deps.now() };
}

/** Publishes `events.config.<entity>.<verb>` once a change has committed. */
export function announce(deps: HandlerDeps, ctx: HandlerContext, audit: Audit, entity: ConfigEntity, verb: ConfigVerb, id: string): void {
  publishEvent(deps.bus, configEvents.subject(entity, verb), { space: spaceOf(ctx), id, actor: audit.actor }, ctx.requestId);
}

/** 404 for an entity the space does not hold. */
export function notFound(label: string, id: string): ProblemError {
  return new ProblemError('not_found', `No ${label} ${id} in this space`);
}
