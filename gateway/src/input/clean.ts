import { ProblemError, type ProblemFieldError } from '@scada/contracts';

/** How deep objects and arrays may nest in a request (JSON bodies and JSON parts). */
export const maxNesting = 64;

type Frame = { value: unknown; key: string; parent: Frame | null; depth: number };

/**
 * Refuses what no service should see: a string or a key holding U+0000 or an unpaired surrogate (no
 * store keeps them, and no client means them), or objects and arrays nested past {@link maxNesting}
 * levels (a handler that walks them would run out of stack). Walks without recursion, so the check
 * itself cannot overflow. Answers 400 `validation_failed` naming where the first fault is.
 */
export function assertClean(value: unknown, root: string): void {
  const fault = findFault(value, root);
  if (fault) throw new ProblemError('validation_failed', `${fault.path} ${fault.message}`, { errors: [fault] });
}

/** The first fault of a value, or null; see {@link assertClean}. */
export function findFault(value: unknown, root: string): ProblemFieldError | null {
  const stack: Frame[] = [{ value, key: '', parent: null, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const v = frame.value;
    if (typeof v === 'string') {
      const why = stringFault(v);
      if (why) return { path: pathOf(frame, root), message: why };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (frame.depth >= maxNesting) return { path: pathOf(frame, root), message: `nests deeper than ${maxNesting} levels` };
    const entries = Array.isArray(v) ? v.map((item, i) => [String(i), item] as const) : Object.entries(v);
    for (const [key, item] of entries) {
      const child: Frame = { value: item, key, parent: frame, depth: frame.depth + 1 };
      const why = Array.isArray(v) ? null : stringFault(key);
      if (why) return { path: pathOf(child, root), message: `has a name that ${why}` };
      stack.push(child);
    }
  }
  return null;
}

/** Why a string may not travel on, or null. */
export function stringFault(s: string): string | null {
  if (s.includes('\u0000')) return 'holds the character U+0000';
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'holds an unpaired surrogate';
  return null;
}

/** The JSON pointer of a frame below `root` (`/body/items/3/name`). */
function pathOf(frame: Frame, root: string): string {
  const keys: string[] = [];
  for (let f: Frame | null = frame; f?.parent; f = f.parent) keys.push(f.key.replaceAll('~', '~0').replaceAll('/', '~1'));
  return [root, ...keys.reverse()].join('/') || '/';
}
