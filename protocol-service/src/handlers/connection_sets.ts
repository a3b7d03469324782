/**
 * Start, stop and status of connections named by project and name, of every connection of a project, and
 * of many connections by id. Starting and stopping go through the same store change and supervisor round
 * as `POST /api/connections/{connectionId}/start|stop`.
 */
import {
  connectionStatusesOfProject,
  getConnectionStatusByProjectAndName,
  getConnectionStatusesByIds,
  ProblemError,
  startConnectionByName,
  startConnectionByProjectAndName,
  startConnectionsByProject,
  stopConnectionByProjectAndName,
  stopConnectionsByProject,
} from '@scada/contracts';
import { implement, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import { connectionIds, connectionStatuses, type ConnectionSet } from '../store/connection_sets.ts';
import { setStarted } from '../store/sessions.ts';
import { connectionSaver } from './connection_save.ts';
import type { PlainConnectionDeps } from './plain_connections.ts';

type ByName = { projectId: string; name: string };

/** The operations on sets of connections. */
export function connectionSetHandlers(deps: PlainConnectionDeps): Implementation[] {
  const { checkProject } = connectionSaver(deps);
  const named = (q: ByName): ConnectionSet => ({ projectId: q.projectId.toLowerCase(), name: q.name });
  const noSuch = (q: ByName) => new ProblemError('not_found', `Project ${q.projectId} has no connection named "${q.name}" in this space`);

  /** Marks the connections started or stopped and lets this replica's supervisor act on it at once. */
  const switchAll = async (ctx: HandlerContext, ids: string[], started: boolean) => {
    const space = spaceOf(ctx);
    for (const id of ids) await setStarted(deps.store, space, id, started);
    if (ids.length > 0) await deps.supervisor.kick();
    return null;
  };
  const byName =
    (started: boolean) =>
    async ({ query }: { query: ByName }, ctx: HandlerContext) => {
      const ids = await connectionIds(deps.store, spaceOf(ctx), named(query));
      if (ids.length === 0) throw noSuch(query);
      return switchAll(ctx, ids, started);
    };
  const byProject =
    (started: boolean) =>
    async ({ query }: { query: { projectId: string } }, ctx: HandlerContext) => {
      // A project without connections is no error, but another space's project is.
      await checkProject(ctx, query.projectId);
      return switchAll(ctx, await connectionIds(deps.store, spaceOf(ctx), { projectId: query.projectId.toLowerCase() }), started);
    };

  return [
    implement(startConnectionByName, byName(true)),
    implement(startConnectionByProjectAndName, byName(true)),
    implement(stopConnectionByProjectAndName, byName(false)),
    implement(startConnectionsByProject, byProject(true)),
    implement(stopConnectionsByProject, byProject(false)),

    implement(getConnectionStatusesByIds, async ({ query }, ctx) => {
      const ids = [...new Set(query.connectionIds.map((id) => id.toLowerCase()))];
      const statuses = await connectionStatuses(deps.store, spaceOf(ctx), { ids });
      const missing = ids.filter((id) => !(id in statuses));
      if (missing.length > 0)
        throw new ProblemError('not_found', `No connection ${missing.join(', ')} in this space`, { extensions: { missing } });
      return statuses;
    }),

    implement(getConnectionStatusByProjectAndName, async ({ query }, ctx) => {
      const [status] = Object.values(await connectionStatuses(deps.store, spaceOf(ctx), named(query)));
      if (!status) throw noSuch(query);
      return status;
    }),

    implement(connectionStatusesOfProject, async ({ query }, ctx) =>
      connectionStatuses(deps.store, spaceOf(ctx), { projectId: query.projectId.toLowerCase() }),
    ),
  ];
}
