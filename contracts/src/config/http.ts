import type { HttpBinding, HttpMethod } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';

/** Binding of a read of configuration: any role of the space may call it; the gateway may cache it. */
export function readBinding(path: string, errors: readonly ProblemCode[] = []): HttpBinding {
  return { method: 'GET', path, status: 200, access: 'viewer', spaceScoped: true, errors, cacheable: true };
}

/** Binding of a change: the editor role (or admin) in the space. */
export function writeBinding(method: HttpMethod, path: string, status: 200 | 204, errors: readonly ProblemCode[]): HttpBinding {
  return { method, path, status, access: 'editor', spaceScoped: true, errors };
}

/** How lists are ordered, said once for the descriptions. */
export const byName = 'Ordered by name (Unicode code point order); names are unique in the list.';

/** The deletion rule, said once for the descriptions of parents. */
export function refusedWithChildren(children: string): string {
  return (
    `Refused with 409 \`conflict\` while it still has ${children}; the problem names them (\`children\`). ` +
    'Nothing is deleted along with it.'
  );
}

/** What every create and update says about names. */
export const duplicateName = 'A name already used in the same parent is 409 `conflict`.';
