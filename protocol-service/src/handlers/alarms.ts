/**
 * The alarm operations: the active list, acknowledgement (one or several), shelving, out of service and
 * back, the journal (JSON or CSV); and, for the config service, the check of a definition's reference
 * against the connection's model and the project status's active alarm groups. Any replica answers them:
 * states are in the store, and each transition is made under its row's lock (`alarms/store.ts`).
 */
import {
  ackAlarm,
  ackAlarms,
  activeAlarmGroupsOfProject,
  alarmInService,
  alarmOutOfService,
  checkAlarmReference,
  getActiveAlarms,
  getAlarmJournal,
  getAlarmSettings,
  ProblemError,
  shelveAlarm,
  unshelveAlarm,
  type AlarmJournalRow,
} from '@scada/contracts';
import { actorOf, implement, notFound, spaceOf, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import { parseReference, type DataReference } from '@scada/iec61850';
import type { AlarmEvaluator } from '../alarms/evaluator.ts';
import type { AlarmAction } from '../alarms/lifecycle.ts';
import { activeAlarms, activeGroupsOfProject, journalPage, readAlarm, statusOf, type Written } from '../alarms/store.ts';
import { findConnection } from '../store/connections.ts';
import { browseOf } from '../store/files.ts';

export type AlarmHandlerDeps = { store: Store; evaluator: AlarmEvaluator; shelveMaxMinutes: number };

const actionWords: Record<AlarmAction, string> = {
  ack: 'acknowledged',
  shelve: 'shelved',
  unshelve: 'taken off the shelf',
  out_of_service: 'taken out of service',
  in_service: 'put in service',
};

export function alarmHandlers(deps: AlarmHandlerDeps): Implementation[] {
  /** An action on one alarm: 404 when the space holds none, 409 when its state does not allow it. */
  const act = async (
    ctx: HandlerContext,
    alarmId: string,
    action: AlarmAction,
    comment: string | null,
    shelf?: { until: Date; reason: string },
  ): Promise<Written> => {
    const space = spaceOf(ctx);
    const id = alarmId.toLowerCase();
    // The definitions of the space taken up, so that an alarm not evaluated yet has its (normal) state; without
    // the config service, the states already kept still answer.
    await deps.evaluator.definitions(space).catch(() => undefined);
    const written = await deps.evaluator.act(space, id, action, actorOf(ctx).name, comment, false, shelf);
    if (!written) throw notFound('alarm', alarmId);
    if (!written.journal) throw new ProblemError('conflict', `An alarm that is ${written.row.state} cannot be ${actionWords[action]}`);
    return written;
  };

  return [
    implement(getActiveAlarms, async ({ query }, ctx) => (await activeAlarms(deps.store, spaceOf(ctx), query)).map(statusOf)),

    implement(ackAlarm, async ({ params, body }, ctx) => statusOf((await act(ctx, params.alarmId, 'ack', body.comment ?? null)).row)),

    implement(ackAlarms, async ({ body }, ctx) => {
      const space = spaceOf(ctx);
      await deps.evaluator.definitions(space).catch(() => undefined);
      const ids = [...new Set(body.alarmIds.map((id) => id.toLowerCase()))];
      const found = await Promise.all(ids.map((id) => readAlarm(deps.store, space, id)));
      const missing = ids.filter((_, i) => !found[i]);
      if (missing.length > 0) {
        throw new ProblemError('not_found', `No alarm ${missing.join(', ')} in this space; nothing was acknowledged`, {
          extensions: { missing },
        });
      }
      const acknowledged = [];
      const skipped = [];
      for (const id of ids) {
        const written = await deps.evaluator.act(space, id, 'ack', actorOf(ctx).name, body.comment ?? null);
        if (written?.journal) acknowledged.push(statusOf(written.row));
        else if (written) skipped.push({ alarmId: id, state: written.row.state });
      }
      return { acknowledged, skipped };
    }),

    implement(shelveAlarm, async ({ params, body }, ctx) => {
      if (body.minutes > deps.shelveMaxMinutes) {
        throw new ProblemError('validation_failed', `An alarm is shelved for at most ${deps.shelveMaxMinutes} minutes`, {
          errors: [{ path: '/body/minutes', message: `at most ${deps.shelveMaxMinutes} (ALARM_SHELVE_MAX_MINUTES)` }],
        });
      }
      const until = new Date(deps.evaluator.now().getTime() + body.minutes * 60_000);
      return statusOf((await act(ctx, params.alarmId, 'shelve', body.reason, { until, reason: body.reason })).row);
    }),

    implement(unshelveAlarm, async ({ params, body }, ctx) =>
      statusOf((await act(ctx, params.alarmId, 'unshelve', body?.comment ?? null)).row),
    ),
    implement(alarmOutOfService, async ({ params, body }, ctx) =>
      statusOf((await act(ctx, params.alarmId, 'out_of_service', body?.comment ?? null)).row),
    ),
    implement(alarmInService, async ({ params, body }, ctx) =>
      statusOf((await act(ctx, params.alarmId, 'in_service', body?.comment ?? null)).row),
    ),

    implement(getAlarmJournal, async ({ query }, ctx) => {
      if (query.from && query.to && Date.parse(query.from) > Date.parse(query.to)) {
        throw new ProblemError('validation_failed', '`from` is after `to`', { errors: [{ path: '/query/from', message: 'after `to`' }] });
      }
      const page = await journalPage(deps.store, spaceOf(ctx), { ...query, limit: query.limit ?? 100 });
      return query.format === 'csv' ? csvOf(page.rows) : page;
    }),

    implement(getAlarmSettings, async () => ({ shelveMaxMinutes: deps.shelveMaxMinutes })),

    implement(checkAlarmReference, async ({ body }, ctx) => {
      const space = spaceOf(ctx);
      const id = body.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw notFound('connection', body.connectionId);
      let ref: DataReference;
      try {
        ref = parseReference(body.reference);
      } catch (err) {
        return { modelKnown: false, problem: (err as Error).message };
      }
      const kept = await browseOf(deps.store, space, id, { maxJsonBytes: 64 * 1024 * 1024 });
      if (!kept || !('tree' in kept)) return { modelKnown: false, problem: null };
      return { modelKnown: true, problem: modelProblem(kept.tree.ieds as TreeIed[], ref, body.reference) };
    }),

    implement(activeAlarmGroupsOfProject, async ({ query }, ctx) =>
      activeGroupsOfProject(deps.store, spaceOf(ctx), query.projectId.toLowerCase()),
    ),
  ];
}

type TreeIed = {
  logicalDevices: {
    name: string;
    logicalNodes: { name: string; dataObjects: { name: string; fcs: string[]; attributes: { name: string; fc: string }[] }[] }[];
  }[];
};

const withoutIndex = (element: string) => element.replace(/\(\d+\)$/, '');

/** What the SCL model says is wrong with a reference; null when it holds it. */
function modelProblem(ieds: TreeIed[], ref: DataReference, text: string): string | null {
  const ld = ieds.flatMap((i) => i.logicalDevices).find((d) => d.name === ref.ld);
  if (!ld) return `Unknown reference ${text}: the SCL model has no logical device ${ref.ld}`;
  const ln = ld.logicalNodes.find((n) => n.name === ref.ln);
  if (!ln) return `Unknown reference ${text}: logical device ${ref.ld} has no logical node ${ref.ln}`;
  const [first, ...rest] = ref.path.map(withoutIndex);
  if (first === undefined) return null;
  const dataObject = ln.dataObjects.find((o) => o.name === first);
  if (!dataObject) return `Unknown reference ${text}: ${ref.ld}/${ref.ln} has no data object ${first}`;
  if (ref.fc !== undefined && !dataObject.fcs.includes(ref.fc))
    return `Unknown reference ${text}: ${first} has no attribute of [${ref.fc}]`;
  if (rest.length === 0) return null;
  const below = rest.join('.');
  const held = dataObject.attributes.some(
    (a) =>
      (ref.fc === undefined || a.fc === ref.fc) && (withoutIndexes(a.name) === below || withoutIndexes(a.name).startsWith(`${below}.`)),
  );
  return held ? null : `Unknown reference ${text}: ${first} has no attribute ${below}${ref.fc ? `[${ref.fc}]` : ''}`;
}

const withoutIndexes = (path: string) => path.split('.').map(withoutIndex).join('.');

/** A page of the journal as CSV (RFC 4180): text fields quoted, `value` as JSON text. */
function csvOf(rows: AlarmJournalRow[]): string {
  const cell = (v: unknown) => {
    const text = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  // What users wrote is never read as a formula by a spreadsheet.
  const typed = (v: string | null) => (v !== null && /^[=+\-@\t\r]/.test(v) ? `'${v}` : v);
  const lines = rows.map((r) => [r.seq, r.alarmId, r.from, r.to, r.at, typed(r.by), r.value, typed(r.comment)].map(cell).join(','));
  return ['seq,alarmId,from,to,at,by,value,comment', ...lines].join('\r\n') + '\r\n';
}
