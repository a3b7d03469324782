import { ProblemError } from '@scada/contracts';
import type { Middleware } from 'koa';
import { stringFault } from '../input/clean.ts';

/**
 * Refuses a request whose path or query, once percent-decoded, is not UTF-8 or holds U+0000 or an
 * unpaired surrogate: 400 `validation_failed` before any route sees it. The body is checked where it is
 * read (`input/body.ts`), by the same rules.
 */
export function cleanUrl(): Middleware {
  return (ctx, next) => {
    // Not async: it does nothing after `next`, and an async frame a request is garbage for nothing (a throw
    // here still reaches the problem middleware as a rejection: koa-compose turns it into one).
    const path = ctx.path;
    // Most paths hold neither, and need no look at each segment.
    if (path.includes('%') || path.includes('\u0000')) for (const segment of path.split('/')) check(segment, 'path', '/params');
    const query = ctx.querystring;
    if (query)
      for (const pair of query.split('&')) {
        const at = pair.indexOf('=');
        const name = check(at < 0 ? pair : pair.slice(0, at), 'query', '/query');
        if (at >= 0) check(pair.slice(at + 1), 'query', `/query/${name}`);
      }
    return next();
  };
}

/** The decoded text of one path segment or query component; 400 when it may not travel on. */
function check(raw: string, part: 'path' | 'query', pointer: string): string {
  if (!raw.includes('%') && !raw.includes('\u0000')) return raw;
  let decoded: string;
  try {
    decoded = decodeURIComponent(part === 'query' ? raw.replaceAll('+', ' ') : raw);
  } catch {
    throw new ProblemError('validation_failed', `The ${part} is not UTF-8 percent-encoding`, {
      errors: [{ path: pointer, message: 'is not UTF-8 percent-encoding' }],
    });
  }
  const why = stringFault(decoded);
  if (why) throw new ProblemError('validation_failed', `The ${part} ${why}`, { errors: [{ path: pointer, message: why }] });
  return decoded;
}
