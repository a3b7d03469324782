/**
 * Connections through the reference's plain routes: created and replaced from a JSON body without a file,
 * and deleted one at a time or several at once. Every deletion stops a started connection's session first.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createConnection,
  deleteConnection,
  deleteConnectionsByIds,
  deleteConnectionWithFile,
  ProblemError,
  updateConnection,
  protocolEvents,
} from '@scada/contracts';
import {
  actorOf,
  implement,
  publishEvent,
  remainingMs,
  spaceOf,
  type Bus,
  type HandlerContext,
  type Implementation,
  type SecretBox,
  type Store,
} from '@scada/platform';
import type { ProtocolConfig } from '../config.ts';
import type { Supervisor } from '../sessions/supervisor.ts';
import { connectionIds, deleteConnections, heldConnections } from '../store/connection_sets.ts';
import { findConnection } from '../store/connections.ts';
import { setStarted } from '../store/sessions.ts';
import { connectionSaver } from './connection_save.ts';
import { connectionNotFound } from '../sessions/device_router.ts';

/** What these handlers use: the store, the bus, the settings, this replica's supervisor and the box that seals secrets. */
export type PlainConnectionDeps = { store: Store; bus: Bus; config: ProtocolConfig; supervisor: Supervisor; secrets: SecretBox };

/** Time kept for the deletion itself after waiting for another replica to let a session go. */
const deleteMarginMs = 1000;
const pollMs = 100;

/** Create and replace without a file; delete one, one with its file, or several. */
export function plainConnectionHandlers(deps: PlainConnectionDeps): Implementation[] {
  const { save } = connectionSaver(deps);
  const remove = connectionRemover(deps);
  return [
    implement(createConnection, async ({ body }, ctx) => {
      const id = randomUUID();
      await save(ctx, id, { connection: body, upload: null }, true, '/body');
      return (await findConnection(deps.store, spaceOf(ctx), id))!;
    }),
    implement(updateConnection, async ({ params, body }, ctx) => {
      await save(ctx, params.connectionId.toLowerCase(), { connection: body, upload: null }, false, '/body');
      // A started connection held here associates again with what changed at once; elsewhere on the holder's next round.
      await deps.supervisor.kick();
      return null;
    }),
    implement(deleteConnection, async ({ params }, ctx) => (await remove(ctx, [params.connectionId]), null)),
    implement(deleteConnectionWithFile, async ({ params }, ctx) => (await remove(ctx, [params.connectionId]), null)),
    implement(deleteConnectionsByIds, async ({ query }, ctx) => (await remove(ctx, query.connectionIds), null)),
  ];
}

/**
 * Deletes connections of the caller's space, all or none: an id the space does not hold is 404 and
 * nothing changes. Started connections are stopped first and their sessions ended (here at once; at
 * another replica on its next round, which this waits for while the request's time allows), so that no
 * association outlives its connection.
 */
export function connectionRemover(deps: PlainConnectionDeps) {
  const stopFirst = async (ctx: HandlerContext, space: string, ids: string[]) => {
    for (const id of ids) await setStarted(deps.store, space, id, false);
    // Sessions held here end now, before anything is deleted; those held by another replica on its next round.
    await Promise.all(ids.map((id) => deps.supervisor.end(space, id)));
    if ((await heldConnections(deps.store, space, ids)).length === 0) return;
    // No bound of its own beyond the request's time: a holder that died stops renewing, and its lease is
    // gone (expired) within a lease time; a live holder ends the session on its next round, however slow.
    const until = Date.now() + Math.max(0, remainingMs(ctx) - deleteMarginMs);
    while ((await heldConnections(deps.store, space, ids)).length > 0 && Date.now() < until) await sleep(pollMs);
  };

  return async (ctx: HandlerContext, requested: readonly string[]): Promise<void> => {
    const space = spaceOf(ctx);
    const actor = actorOf(ctx).name;
    const ids = [...new Set(requested.map((id) => id.toLowerCase()))];
    const found = new Set(await connectionIds(deps.store, space, { ids }));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length === 1 && ids.length === 1) throw connectionNotFound(missing[0] as string);
    if (missing.length > 0)
      throw new ProblemError('not_found', `No connection ${missing.join(', ')} in this space; nothing was deleted`, {
        extensions: { missing },
      });
    await stopFirst(ctx, space, ids);
    await deleteConnections(deps.store, space, ids);
    for (const id of ids)
      publishEvent(deps.bus, protocolEvents.connection, { space, id, actor }, { kind: 'deleted', requestId: ctx.requestId });
  };
}
