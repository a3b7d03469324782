import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/**
 * Logs one line per request at info once it is answered, with its id, method, path, status and time. It
 * writes through the process's logger with the id as a field, so a request that logs nothing else costs
 * no logger of its own; and without redaction, since its fields are fixed and none of them is a secret.
 */
export function accessLog(baseLog: Logger): Middleware {
  const log = baseLog.child({}, { redact: { paths: [] } });
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (log.isLevelEnabled('info')) {
        const ms = Math.round((performance.now() - started) * 100) / 100;
        log.info({ reqId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms }, 'request answered');
      }
    }
  };
}
