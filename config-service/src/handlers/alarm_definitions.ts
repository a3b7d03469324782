/**
 * The rules of alarm definitions beyond their schemas, and the definitions as the protocol service's
 * evaluator takes them up. A group's priorities are a range (`minPriority` ≤ `maxPriority`); an alarm's
 * priority lies in its group's range, it carries the fields of its type and no other, its limits are in
 * order (LL < L < H < HH), and its reference is one the connection's SCL model holds (asked of the
 * protocol service, which owns connections; a connection of another space is 404 there).
 */
import { alarmDefinitionsOfSpace, checkAlarmReference, ProblemError } from '@scada/contracts';
import { call, implement, onBehalfOf, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import { alarmGroups, alarms } from '../store/tables.ts';
import type { HandlerDeps } from './context.ts';

/** A 400 naming the field and the reason. */
function invalid(field: string, reason: string): ProblemError {
  return new ProblemError('validation_failed', reason, { errors: [{ path: `/body/${field}`, message: reason }] });
}

/** An alarm group's priority range is in order, and holds the priorities of the alarms it has. */
export function alarmGroupChecker(deps: HandlerDeps) {
  return async (body: Record<string, unknown>, ctx: HandlerContext, id: string | null): Promise<void> => {
    const min = body.minPriority as number;
    const max = body.maxPriority as number;
    if (min > max) throw invalid('maxPriority', `maxPriority ${max} is below minPriority ${min}`);
    if (id === null) return;
    const outside = (await alarms.listWhere(deps.store, spaceOf(ctx), { groupId: id })).filter(
      (a) => (a.priority as number) < min || (a.priority as number) > max,
    );
    if (outside.length > 0) {
      const named = outside.slice(0, 5).map((a) => `"${String(a.name)}" (${String(a.priority)})`);
      throw invalid(
        'minPriority',
        `The range ${min} to ${max} leaves out alarms of the group: ${named.join(', ')}${outside.length > 5 ? ', …' : ''}`,
      );
    }
  };
}

const typeFields: Record<string, readonly string[]> = {
  state: ['alarmWhen'],
  analog: ['hh', 'h', 'l', 'll', 'deadband'],
  quality: [],
  stale: ['staleSeconds'],
};
const limitOrder = ['ll', 'l', 'h', 'hh'] as const;

/** An alarm's fields fit its type, its limits are in order, its priority in its group's range, its reference in the model. */
export function alarmChecker(deps: HandlerDeps) {
  return async (body: Record<string, unknown>, ctx: HandlerContext): Promise<void> => {
    const type = body.type as string;
    const given = (f: string) => body[f] !== undefined && body[f] !== null;
    for (const [other, fields] of Object.entries(typeFields)) {
      if (other === type) continue;
      for (const f of fields) {
        if (given(f) && !typeFields[type]?.includes(f)) throw invalid(f, `${f} is not a field of a ${type} alarm`);
      }
    }
    if (type === 'state' && !given('alarmWhen')) throw invalid('alarmWhen', 'A state alarm needs alarmWhen (true or false)');
    if (type === 'stale' && !given('staleSeconds')) throw invalid('staleSeconds', 'A stale alarm needs staleSeconds');
    if (type === 'analog') {
      const limits = limitOrder.filter(given);
      if (limits.length === 0) throw invalid('hh', 'An analog alarm needs at least one of hh, h, l, ll');
      for (let i = 1; i < limits.length; i++) {
        const lower = limits[i - 1] as string;
        const upper = limits[i] as string;
        if (!((body[lower] as number) < (body[upper] as number))) {
          throw invalid(
            upper,
            `Limits out of order: ${upper} (${body[upper]}) must be above ${lower} (${body[lower]}); the order is ll < l < h < hh`,
          );
        }
      }
      if (!Number.isFinite(body.deadband ?? 0)) throw invalid('deadband', 'deadband must be a finite number');
    }
    const space = spaceOf(ctx);
    const group = await alarmGroups.get(deps.store, space, String(body.groupId).toLowerCase());
    if (!group) throw new ProblemError('not_found', `No alarm group ${String(body.groupId)} in this space`);
    const priority = body.priority as number;
    if (priority < (group.minPriority as number) || priority > (group.maxPriority as number)) {
      throw invalid(
        'priority',
        `Priority ${priority} is outside the range of alarm group "${String(group.name)}" (${group.minPriority} to ${group.maxPriority})`,
      );
    }
    const checked = await call(
      deps.bus,
      checkAlarmReference,
      { params: {}, query: {}, body: { connectionId: String(body.connectionId), reference: String(body.reference) } },
      onBehalfOf(ctx),
    );
    if (checked.problem !== null) throw invalid('reference', checked.problem);
  };
}

/** The definitions of a space for the evaluator: every alarm with its group's project. */
export function alarmDefinitionHandlers(deps: HandlerDeps): Implementation[] {
  return [
    implement(alarmDefinitionsOfSpace, async (_m, ctx) => {
      const space = spaceOf(ctx);
      const [groups, defined] = await Promise.all([alarmGroups.list(deps.store, space), alarms.list(deps.store, space)]);
      const projectOf = new Map(groups.map((g) => [g.id, String(g.projectId)]));
      return defined.flatMap((a) => {
        const projectId = projectOf.get(String(a.groupId));
        return projectId ? [{ ...a, projectId } as never] : [];
      });
    }),
  ];
}
