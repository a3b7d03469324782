import { randomUUID } from 'node:crypto';
import type { ConfigEntity, Operation } from '@scada/contracts';
import { implement, notFound, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import type { EntityTable } from '../store/entity_table.ts';
import { announce, auditOf, type HandlerDeps } from './context.ts';

/** One resource of the API: its operations, its table and how its ids sit in the paths. */
export type Resource = {
  entity: ConfigEntity;
  table: EntityTable;
  ops: { list: Operation; create: Operation; get: Operation; update: Operation; remove: Operation };
  /** Path parameter of the resource's own id. */
  idParam: string;
  /** For resources under a parent in the path (boards, placeholders): its parameter and table. */
  parent?: { param: string; table: EntityTable };
  /** Checks a create's or replacement's body beyond its schema (rules between fields, references); throws the problem. */
  check?: (body: Record<string, unknown>, ctx: HandlerContext, id: string | null) => Promise<void>;
};

type Message = { params: Record<string, string>; body?: Record<string, unknown> };

/**
 * A request as the five use cases read it. Every resource's messages have this shape (the operations are
 * made by one builder, `defineResource`) and were checked against their schemas before a handler runs.
 */
const messageOf = (m: unknown): Message => m as Message;

/**
 * The five use cases of a resource: list, create, read, replace, delete. Each reads the space from the
 * request, the audit fields from the caller and the clock, and publishes its event after the change
 * committed. Creates answer the entity (200), replacements and deletions nothing (204).
 */
export function crudHandlers(deps: HandlerDeps, r: Resource): Implementation[] {
  const label = r.table.spec.label;
  const parentOf = (m: unknown) => (r.parent ? messageOf(m).params[r.parent.param] : undefined);
  const idOf = (m: unknown) => (messageOf(m).params[r.idParam] as string).toLowerCase();
  const bodyOf = (m: unknown) => messageOf(m).body ?? {};

  return [
    implement(r.ops.list, async (m, ctx) => {
      const space = spaceOf(ctx);
      const parentId = parentOf(m);
      if (r.parent && parentId !== undefined && !(await r.parent.table.exists(deps.store, space, parentId))) {
        throw notFound(r.parent.table.spec.label, parentId);
      }
      return r.table.list(deps.store, space, parentId);
    }),

    implement(r.ops.create, async (m, ctx) => {
      const space = spaceOf(ctx);
      const audit = auditOf(ctx, deps);
      await r.check?.(bodyOf(m), ctx, null);
      const created = await r.table.insert(deps.store, space, randomUUID(), bodyOf(m), audit, parentOf(m));
      announce(deps, ctx, audit, r.entity, 'created', created.id);
      return created;
    }),

    implement(r.ops.get, async (m, ctx) => {
      const found = await r.table.get(deps.store, spaceOf(ctx), idOf(m), parentOf(m));
      if (!found) throw notFound(label, idOf(m));
      return found;
    }),

    implement(r.ops.update, async (m, ctx) => {
      const space = spaceOf(ctx);
      const audit = auditOf(ctx, deps);
      const id = idOf(m);
      await r.check?.(bodyOf(m), ctx, id);
      if (!(await r.table.update(deps.store, space, id, bodyOf(m), audit, parentOf(m)))) throw notFound(label, id);
      announce(deps, ctx, audit, r.entity, 'updated', id);
      return null;
    }),

    implement(r.ops.remove, async (m, ctx) => {
      const space = spaceOf(ctx);
      const audit = auditOf(ctx, deps);
      const id = idOf(m);
      if (!(await r.table.remove(deps.store, space, id, parentOf(m)))) throw notFound(label, id);
      announce(deps, ctx, audit, r.entity, 'deleted', id);
      return null;
    }),
  ];
}
