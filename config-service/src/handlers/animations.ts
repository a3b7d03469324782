/**
 * The rules of animations beyond their schemas: the SVG passes its check (`domain/svg_check.ts`), every
 * binding names an element the SVG holds and a placeholder the animation lists, and a rotation or
 * translation says its range. The animations of a project are listed as the other resources' are.
 */
import { getAnimationsByProject, ProblemError, type AnimationBinding } from '@scada/contracts';
import { implement, notFound, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import { checkSvg } from '../domain/svg_check.ts';
import { animations, faceplates, placeholders, projects } from '../store/tables.ts';
import type { HandlerDeps } from './context.ts';

/** A 400 naming the binding's field and the reason. */
function invalid(path: string, reason: string): ProblemError {
  return new ProblemError('validation_failed', reason, { errors: [{ path: `/body/${path}`, message: reason }] });
}

/** The names of a faceplate's placeholders; 404 when the space has no such faceplate. */
async function faceplatePlaceholders(deps: HandlerDeps, ctx: HandlerContext, faceplateId: unknown): Promise<string[]> {
  if (typeof faceplateId !== 'string') return [];
  const id = faceplateId.toLowerCase();
  if (!(await faceplates.exists(deps.store, spaceOf(ctx), id))) throw notFound('faceplate', faceplateId);
  return (await placeholders.list(deps.store, spaceOf(ctx), id)).map((p) => String(p.name));
}

/** An animation's SVG is clean and its bindings fit it and the placeholders it (or its faceplate) has. */
export function animationChecker(deps: HandlerDeps) {
  return async (body: Record<string, unknown>, ctx: HandlerContext): Promise<void> => {
    const { ids } = checkSvg(String(body.svg));
    const named = new Set([...(body.placeholders as string[]), ...(await faceplatePlaceholders(deps, ctx, body.faceplateId))]);
    (body.bindings as AnimationBinding[]).forEach((b, i) => {
      if (!ids.has(b.elementId)) throw invalid(`bindings/${i}/elementId`, `Binding ${i}: the SVG has no element with id "${b.elementId}"`);
      if ('placeholder' in b.source && !named.has(b.source.placeholder)) {
        throw invalid(
          `bindings/${i}/source/placeholder`,
          `Binding ${i}: placeholder "${b.source.placeholder}" is not among the animation's placeholders or its faceplate's`,
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
