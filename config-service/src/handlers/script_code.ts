import { maxScriptCharacters, ProblemError, unicodeLength, updateScriptCode } from '@scada/contracts';
import { implement, notFound, spaceOf } from '@scada/platform';
import { updateScriptCode as storeScriptCode } from '../store/script_code.ts';
import { announce, auditOf, type HandlerDeps } from './context.ts';

/**
 * Replaces a script's code with the text the gateway received, unchanged. The length is counted in
 * Unicode characters here too, whatever checked the message before.
 */
export function updateScriptCodeHandler(deps: HandlerDeps) {
  return implement(updateScriptCode, async ({ params, body }, ctx) => {
    const space = spaceOf(ctx);
    const audit = auditOf(ctx, deps);
    const length = unicodeLength(body);
    if (length > maxScriptCharacters) {
      throw new ProblemError('validation_failed', `The code is ${length} characters long; the limit is ${maxScriptCharacters}`, {
        errors: [{ path: '/body', message: `Expected at most ${maxScriptCharacters} characters (Unicode code points), got ${length}` }],
      });
    }
    const id = params.scriptId.toLowerCase();
    if (!(await storeScriptCode(deps.store, space, id, body, audit))) throw notFound('script', id);
    announce(deps, ctx, audit, 'script', 'updated', id);
    return null;
  });
}
