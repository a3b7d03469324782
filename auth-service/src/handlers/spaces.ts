import { randomUUID } from 'node:crypto';
import { authEvents, createSpace, deleteSpace, getSpace, getSpaces, ProblemError, updateSpace } from '@scada/contracts';
import { actorOf, implement, publishEvent, type HandlerContext, type Implementation } from '@scada/platform';
import { deleteSpaceRow, findSpace, insertSpace, listSpaces, renameSpace, usersOnlyIn } from '../store/spaces.ts';
import { actorName, type AuthDeps } from './deps.ts';

/** The id of the space every platform has from its first start. */
export const defaultSpaceId = 'default';

/** Spaces: the caller's list, create, read, rename, delete. */
export function spaceHandlers(deps: AuthDeps): Implementation[] {
  const announce = (ctx: HandlerContext, verb: 'created' | 'updated' | 'deleted', id: string) =>
    publishEvent(deps.bus, authEvents.space, { id, space: id, actor: actorName(ctx) }, { kind: verb, requestId: ctx.requestId });
  const visible = (ctx: HandlerContext, id: string) => {
    const actor = actorOf(ctx);
    return actor.roles.includes('admin') || actor.spaces.includes(id);
  };

  return [
    implement(getSpaces, async (_req, ctx) => {
      const actor = actorOf(ctx);
      return listSpaces(deps.store, actor.roles.includes('admin') ? undefined : actor.spaces);
    }),

    implement(getSpace, async ({ params }) => {
      const space = await findSpace(deps.store, params.spaceId);
      if (!space) throw new ProblemError('not_found', `No space ${params.spaceId}`);
      return space;
    }),

    implement(createSpace, async ({ body }, ctx) => {
      const id = randomUUID();
      if (!(await insertSpace(deps.store, id, body.name, actorName(ctx))))
        throw new ProblemError('conflict', `A space named ${body.name} exists`);
      announce(ctx, 'created', id);
      return (await findSpace(deps.store, id))!;
    }),

    implement(updateSpace, async ({ params, body }, ctx) => {
      if (!(await findSpace(deps.store, params.spaceId))) throw new ProblemError('not_found', `No space ${params.spaceId}`);
      if (!(await renameSpace(deps.store, params.spaceId, body.name, actorName(ctx))))
        throw new ProblemError('conflict', `A space named ${body.name} exists`);
      announce(ctx, 'updated', params.spaceId);
      return null;
    }),

    implement(deleteSpace, async ({ params }, ctx) => {
      if (!(await findSpace(deps.store, params.spaceId))) throw new ProblemError('not_found', `No space ${params.spaceId}`);
      if (params.spaceId === defaultSpaceId) throw new ProblemError('conflict', 'The default space cannot be deleted');
      const stranded = await usersOnlyIn(deps.store, params.spaceId);
      if (stranded > 0) throw new ProblemError('conflict', `${stranded} user(s) have no other space`);
      await deleteSpaceRow(deps.store, params.spaceId);
      announce(ctx, 'deleted', params.spaceId);
      return null;
    }),
  ].map((impl) => (impl.op === getSpace ? guardVisible(impl, visible) : impl));
}

/** A space the caller is not in is a 404 for them, as if it did not exist. */
function guardVisible(impl: Implementation, visible: (ctx: HandlerContext, id: string) => boolean): Implementation {
  return {
    op: impl.op,
    handle: async (request, ctx) => {
      const id = (request as { params: { spaceId: string } }).params.spaceId;
      if (!visible(ctx, id)) throw new ProblemError('not_found', `No space ${id}`);
      return impl.handle(request, ctx);
    },
  };
}
