import {
  activeAlarmGroupsOfProject,
  connectionStatusesOfProject,
  deleteScriptsByIds,
  getFaceplatesByProjectId,
  getFaceplatesByProjectIdAndNames,
  getProjectByName,
  getProjectsByActive,
  getProjectStatus,
  getScriptsByProject,
  ProblemError,
} from '@scada/contracts';
import { call, implement, notFound, onBehalfOf, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import { scheduledAmong } from '../store/script_schedules.ts';
import { alarmGroups, faceplates, projects, scripts } from '../store/tables.ts';
import { announce, auditOf, type HandlerDeps } from './context.ts';

/** Lookups by project and by name, the project status, and the bulk deletion of scripts. */
export function lookupHandlers(deps: HandlerDeps): Implementation[] {
  /** The project must be one of the space: another space's, or none, is 404. */
  const projectOf = async (ctx: HandlerContext, projectId: string) => {
    const id = projectId.toLowerCase();
    if (!(await projects.exists(deps.store, spaceOf(ctx), id))) throw notFound('project', projectId);
    return id;
  };

  return [
    implement(getProjectByName, async ({ query }, ctx) => {
      const [found] = await projects.listWhere(deps.store, spaceOf(ctx), { name: query.name });
      if (!found) throw new ProblemError('not_found', `No project named "${query.name}" in this space`);
      return found as never;
    }),

    implement(
      getProjectsByActive,
      async ({ query }, ctx) => (await projects.listWhere(deps.store, spaceOf(ctx), { isActive: query.isActive })) as never,
    ),

    implement(
      getFaceplatesByProjectId,
      async ({ query }, ctx) =>
        (await faceplates.listWhere(deps.store, spaceOf(ctx), { projectId: await projectOf(ctx, query.projectId) })) as never,
    ),

    implement(
      getFaceplatesByProjectIdAndNames,
      async ({ query }, ctx) =>
        (await faceplates.listWhere(deps.store, spaceOf(ctx), {
          projectId: await projectOf(ctx, query.projectId),
          name: query.names,
        })) as never,
    ),

    implement(
      getScriptsByProject,
      async ({ query }, ctx) =>
        (await scripts.listWhere(deps.store, spaceOf(ctx), { projectId: await projectOf(ctx, query.projectId) })) as never,
    ),

    implement(getProjectStatus, async ({ params }, ctx) => {
      const projectId = await projectOf(ctx, params.projectId);
      const [inProject, connectionStatuses, groups, activeGroups] = await Promise.all([
        scripts.listWhere(deps.store, spaceOf(ctx), { projectId }),
        call(deps.bus, connectionStatusesOfProject, { params: {}, query: { projectId } }, onBehalfOf(ctx)),
        alarmGroups.listWhere(deps.store, spaceOf(ctx), { projectId }),
        call(deps.bus, activeAlarmGroupsOfProject, { params: {}, query: { projectId } }, onBehalfOf(ctx)),
      ]);
      const active = new Set(activeGroups);
      const scheduled = await scheduledAmong(
        deps.store,
        spaceOf(ctx),
        inProject.map((s) => s.id),
      );
      return {
        connectionStatuses,
        scriptStatuses: Object.fromEntries(
          inProject.map((s) => [s.id, scheduled.has(s.id) ? ('Scheduled' as const) : ('Not Scheduled' as const)]),
        ),
        alarmGroupStatuses: Object.fromEntries(groups.map((g) => [g.id, active.has(g.id) ? ('Active' as const) : ('Not Active' as const)])),
        reportStatuses: {},
        dataTransferStatuses: {},
      };
    }),

    implement(deleteScriptsByIds, async ({ query }, ctx) => {
      const space = spaceOf(ctx);
      const audit = auditOf(ctx, deps);
      const ids = [...new Set(query.scriptIds.map((id) => id.toLowerCase()))];
      const missing = await deps.store.transaction((tx) => scripts.removeAll(tx, space, ids));
      if (missing.length > 0) {
        throw new ProblemError('not_found', `No script ${missing.join(', ')} in this space; nothing was deleted`, {
          extensions: { missing },
        });
      }
      for (const id of ids) announce(deps, ctx, audit, 'script', 'deleted', id);
      return null;
    }),
  ];
}
