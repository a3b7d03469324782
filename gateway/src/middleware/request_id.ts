import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id: the client's `X-Request-Id` when it is a sane token, a new UUID otherwise.
 * The id is answered in `X-Request-Id`, carried in bus headers, and bound to the request's logger
 * (`ctx.state.log`), which is built the first time something logs through it: most requests log only
 * their access line, which names the id itself.
 */
export function requestId(log: Logger): Middleware {
  return async (ctx, next) => {
    const offered = ctx.get('x-request-id');
    const id = acceptable.test(offered) ? offered : randomUUID();
    ctx.state.requestId = id;
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { enumerable: true, get: () => (child ??= log.child({ reqId: id })) });
    ctx.set('X-Request-Id', id);
    await next();
  };
}
