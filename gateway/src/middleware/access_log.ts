import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** Logs one line per request once it is answered, with the request's own logger (so with its id). */
export function accessLog(): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const log: Logger = ctx.state.log;
      const ms = Math.round((performance.now() - started) * 100) / 100;
      log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms }, 'request answered');
    }
  };
}
