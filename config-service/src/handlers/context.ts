import { configEvents, type ConfigEntity, type ConfigVerb } from '@scada/contracts';
import { actorOf, publishEvent, spaceOf, type Bus, type HandlerContext, type Store } from '@scada/platform';
import type { Audit } from '../store/entity_table.ts';

/** What the handlers of the config service use. */
export type HandlerDeps = {
  store: Store;
  bus: Bus;
  /** The service's clock, for audit fields. */
  now: () => Date;
};

/** Who changes what, and when: from the caller the gateway authenticated, and the service's clock. */
export function auditOf(ctx: HandlerContext, deps: HandlerDeps): Audit {
  return { actor: actorOf(ctx).name, at: deps.now() };
}

/** Publishes the entity's event (`config.<entity>`, of kind `verb`) once a change has committed. */
export function announce(deps: HandlerDeps, ctx: HandlerContext, audit: Audit, entity: ConfigEntity, verb: ConfigVerb, id: string): void {
  publishEvent(deps.bus, configEvents[entity], { space: spaceOf(ctx), id, actor: audit.actor }, { kind: verb, requestId: ctx.requestId });
}
