/**
 * The rules of animations beyond their schemas: the SVG passes its check (`domain/svg_check.ts`), every
 * binding names an element the SVG holds and a placeholder the animation lists, and a rotation or
 * translation says its range. The animations of a project are listed as the other resources' are.
 */
import { getAnimationsByProject, ProblemError, type AnimationBinding } from '@scada/contracts';
import { implement, notFound, spaceOf, type Implementation } from '@scada/platform';
import { checkSvg } from '../domain/svg_check.ts';
import { animations, projects } from '../store/tables.ts';
import type { HandlerDeps } from './context.ts';

/** A 400 naming the binding's field and the reason. */
function invalid(path: string, reason: string): ProblemError {
  return new ProblemError('validation_failed', reason, { errors: [{ path: `/body/${path}`, message: reason }] });
}

/** An animation's SVG is clean and its bindings fit it. */
export function animationChecker() {
  return async (body: Record<string, unknown>): Promise<void> => {
    const { ids } = checkSvg(String(body.svg));
    const placeholders = new Set(body.placeholders as string[]);
    (body.bindings as AnimationBinding[]).forEach((b, i) => {
      if (!ids.has(b.elementId)) throw invalid(`bindings/${i}/elementId`, `Binding ${i}: the SVG has no element with id "${b.elementId}"`);
      if ('placeholder' in b.source && !placeholders.has(b.source.placeholder)) {
        throw invalid(
          `bindings/${i}/source/placeholder`,
          `Binding ${i}: placeholder "${b.source.placeholder}" is not among the animation's placeholders`,
        );
      }
      if ((b.kind === 'rotate' || b.kind === 'translate') && !b.range) {
        throw invalid(`bindings/${i}/range`, `Binding ${i}: a ${b.kind} binding needs a range`);
      }
    });
  };
}

/** The animations of a project of the space. */
export function animationHandlers(deps: HandlerDeps): Implementation[] {
  return [
    implement(getAnimationsByProject, async ({ query }, ctx) => {
      const projectId = query.projectId.toLowerCase();
      if (!(await projects.exists(deps.store, spaceOf(ctx), projectId))) throw notFound('project', query.projectId);
      return (await animations.listWhere(deps.store, spaceOf(ctx), { projectId })) as never;
    }),
  ];
}
