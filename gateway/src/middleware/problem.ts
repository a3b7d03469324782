import { ProblemError, problemCodes, type ProblemCode } from '@scada/contracts';
import { toProblem } from '@scada/platform';
import type { Middleware } from 'koa';
import { releaseBody } from '../input/body.ts';
import { setJson } from '../json.ts';

const codeByStatus: Record<number, ProblemCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
  504: 'upstream_timeout',
};

/**
 * 5xx answers that are not this platform's failure (the service that owns them logged them, or, for
 * `overloaded`, a refusal by design that the metrics count): no error line here. A login storm answered
 * `overloaded` must not turn into a storm of error lines with stacks.
 */
const quietCodes = new Set<ProblemCode>(['service_unavailable', 'upstream_timeout', 'device_refused', 'overloaded']);

/**
 * Turns every failure below it into an RFC 9457 problem: ProblemErrors as they are; errors of the body
 * readers (which carry `status` or `httpCode`) by their status; anything else as a bare 500
 * whose internals stay in the log. A request no route took is a 404 problem. The unread rest of a refused
 * body is let go of (`releaseBody`), so the client's connection stays usable.
 */
export function problemDetails(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status === 404) throw new ProblemError('not_found', `No resource at ${ctx.path}`);
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        const allow = ctx.response.get('Allow');
        throw new ProblemError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`, {
          headers: allow ? { Allow: allow } : undefined,
        });
      }
    } catch (err) {
      const problem = asProblem(err);
      releaseBody(ctx);
      if (problem.status >= 500 && !quietCodes.has(problem.code)) {
        // A service's failure is logged once, by the service that met it; here only its trace at debug.
        if (problem.relayed) ctx.state.log.debug({ code: problem.code, status: problem.status }, 'a service answered with a failure');
        else ctx.app.emit('error', err, ctx);
      }
      ctx.status = problem.status;
      for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
      if (problem.retryAfter !== undefined) ctx.set('Retry-After', String(problem.retryAfter));
      if (problem.code === 'invalid_token') ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      ctx.set('Cache-Control', 'no-store');
      setJson(ctx, { ...problem.toBody(), instance: ctx.path }, 'application/problem+json');
    }
  };
}

/** Maps an error of any layer to a problem. */
export function asProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    httpCode?: unknown;
    expose?: boolean;
    message?: string;
    type?: string;
    headers?: Record<string, string>;
  };
  const status = [e?.status, e?.statusCode, e?.httpCode].find((s): s is number => typeof s === 'number' && s >= 400 && s < 600);
  if (status === 501) return new ProblemError('method_not_allowed', 'The method is not supported', { cause: err });
  if (status === undefined || status >= 500) return toProblem(err);
  if (status === 400 && (e.type === 'entity.parse.failed' || err instanceof SyntaxError)) {
    return new ProblemError('malformed_body', 'The request body is not well-formed', { cause: err });
  }
  const code = codeByStatus[status] ?? 'bad_request';
  const detail = status === 413 ? 'The request body is too large' : e.expose && e.message ? e.message : problemCodes[code].title;
  return new ProblemError(code, detail, { cause: err, headers: pickAllow(e.headers) });
}

function pickAllow(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  const allow = headers?.Allow ?? headers?.allow;
  return allow ? { Allow: allow } : undefined;
}
