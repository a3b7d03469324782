import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id: the client's `X-Request-Id` when it is a sane token, a new UUID otherwise.
 * The id is answered in `X-Request-Id`, carried in bus headers, and bound to the request's logger.
 */
export function requestId(log: Logger): Middleware {
  return async (ctx, next) => {
    const offered = ctx.get('x-request-id');
    const id = acceptable.test(offered) ? offered : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = log.child({ reqId: id });
    ctx.set('X-Request-Id', id);
    await next();
  };
}
