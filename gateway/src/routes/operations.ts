import Router from '@koa/router';
import { convertParameters, deadlineOf, NoContent, ProblemError, validate, type Operation } from '@scada/contracts';
import { relay, type Bus } from '@scada/platform';
import type { TObject, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import { mediaTypeOf, readBody, type BodyType } from '../input/body.ts';
import { parseJsonText } from '../input/text.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';
import { noneMatch, type ReadCache } from '../read_cache.ts';

/** What the operation router needs. */
export type OperationRouteDeps = {
  bus: Bus;
  metrics: GatewayMetrics;
  busTimeoutMs: number;
  bodyLimitBytes: number;
  sessions: SessionDeps;
  /** Where cacheable reads are answered from when they can be. */
  readCache?: ReadCache;
};

/**
 * Routes every operation that has an HTTP binding to its bus subject: the body is parsed by content type,
 * the `{params, query, body}` message is checked against the operation's request schema at the edge, sent
 * over the bus, and the reply answered with the operation's status. The reply's JSON goes to the client
 * as the bytes the service sent: the service checked it against the response schema (`serve`), and
 * parsing, checking and writing it again here was most of what a 100-row list cost the gateway (and
 * decoding it into a string, to be encoded again on the way out, a few percent more).
 */
export function operationRoutes(ops: readonly Operation[], deps: OperationRouteDeps): Router {
  const router = new Router();
  for (const op of literalsFirst(ops)) {
    const http = op.http;
    // Uploads and downloads stream through routes of their own (scl_files.ts, device_files.ts).
    if (!http || http.gatewayRoute) continue;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const cache = deps.readCache;
    if (http.cacheable && method === 'get' && cache) {
      router.get(op.operationId, http.path, async (ctx) => {
        await authorize(ctx, http, deps.sessions);
        // Checked at the edge as every request is, cached or not.
        const message = await buildMessage(ctx, op, deps.bodyLimitBytes);
        // Keyed by what the service is asked, not by the URL's spelling: `?&&&` or a repeated parameter
        // cannot make one read many entries.
        const key = `${op.operationId}\n${JSON.stringify(message)}`;
        const answer = await cache.read(ctx.state.space ?? null, key, () => timedCall(deps, op, message, ctx));
        deps.metrics.countRead(answer.outcome);
        ctx.status = 200;
        ctx.type = 'application/json';
        // `Cache-Control: no-store` stays (the contract's rule for user data): no HTTP cache keeps it, but
        // a client that polls sends the tag back in If-None-Match and gets 304 while nothing changed.
        ctx.set('ETag', answer.etag);
        if (noneMatch(ctx.get('If-None-Match'), answer.etag)) ctx.status = 304;
        else ctx.body = answer.text;
      });
      continue;
    }
    router[method](op.operationId, http.path, async (ctx) => {
      await authorize(ctx, http, deps.sessions);
      const message = await buildMessage(ctx, op, deps.bodyLimitBytes);
      const bytes = await timedCall(deps, op, message, ctx);
      forgetChangedCaller(deps, op, ctx);
      ctx.status = http.status;
      if (http.status === 204) return;
      if (op.response === NoContent) {
        // A 200 the reference answers without content (a bulk deletion): Koa would turn a null body into 204.
        ctx.body = '';
        ctx.remove('Content-Type');
        return;
      }
      if (http.csvFormat && (message.query as { format?: string }).format === 'csv') {
        // The service answered the CSV text as a JSON string.
        ctx.type = 'text/csv; charset=utf-8';
        ctx.body = JSON.parse(new TextDecoder().decode(bytes)) as string;
        return;
      }
      // Every answer is JSON, a bare string too (Koa would send a string body as text/plain by itself).
      ctx.type = 'application/json';
      ctx.body = bytes.byteLength === 0 ? null : bytes;
    });
  }
  return router;
}

/**
 * A write the auth service answered may have changed the caller's own account (their password, which lifts
 * `requirePasswordReset`, their profile or default space): this replica drops its copy of the caller, so
 * their next request here sees the change without waiting for the auth service's event.
 */
function forgetChangedCaller(deps: OperationRouteDeps, op: Operation, ctx: Context): void {
  const actor = ctx.state.actor;
  if (op.service === 'auth' && op.http?.method !== 'GET' && actor) deps.sessions.auth.forgetPrincipal(actor.id);
}

/**
 * The `{params, query, body}` message of a request, checked against the operation's request schema: 400
 * when it does not match. Path and query texts become the types their schemas declare, an integer only
 * from decimal digits (`convertParameters`).
 */
export async function buildMessage(ctx: Context, op: Operation, standardLimit: number): Promise<Record<string, unknown>> {
  // An operation may declare a larger body of its own (an animation's SVG); every other keeps the standard one.
  const limit = op.http?.bodyLimitBytes ?? standardLimit;
  const parts = op.request.properties as Record<string, TSchema>;
  const message: Record<string, unknown> = {
    params: convertParameters(parts.params as TObject, { ...ctx.params }),
    query: convertParameters(parts.query as TObject, flattenQuery(ctx.query, parts.query as TObject)),
  };
  if (parts.body) message.body = await bodyOf(ctx, op, limit);
  const checked = validate(op.request, message);
  if (!checked.ok) {
    throw new ProblemError('validation_failed', 'The request does not match the schema', { errors: checked.errors });
  }
  return message;
}

/**
 * The body of an operation's request, read by `input/body.ts` under the operation's media types. A
 * `text/plain` operation gets the exact text sent (an empty body is the empty string); a wrapped one
 * its bare entity.
 */
async function bodyOf(ctx: Context, op: Operation, limit: number): Promise<unknown> {
  const accepts = (op.http?.consumes ?? ['application/json']) as readonly BodyType[];
  const body = await readBody(ctx, { accepts, limit });
  if (accepts.includes('text/plain')) {
    // An empty body still has to be text/plain: the empty script is a real value.
    if (body === undefined) mediaTypeOf(ctx, accepts);
    return body?.value ?? '';
  }
  const wrapper = op.http?.bodyWrapper;
  return wrapper ? unwrap(body?.value, wrapper) : body?.value;
}

/**
 * The bare entity of a body the reference product wraps (`{project: {...}}`, or a multipart form whose
 * `project` part is JSON text). A file beside it is refused: the platform keeps no project or faceplate
 * files.
 */
function unwrap(body: unknown, wrapper: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !(wrapper in body)) return body;
  const { [wrapper]: inner, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) {
    throw new ProblemError('validation_failed', `Only the ${wrapper} part is accepted`, {
      errors: extra.map((k) => ({ path: `/body/${k}`, message: 'is not accepted' })),
    });
  }
  return typeof inner === 'string' ? parseJsonText(inner, `/body/${wrapper}`, `The ${wrapper} part`) : inner;
}

/**
 * The query as the schema reads it. A list parameter gathers every value, split on commas when it came
 * once (as the reference's server reads lists), a value repeated counting once; any other parameter keeps
 * its first value. Schemas decide types.
 */
function flattenQuery(query: Record<string, string | string[] | undefined>, schema: TObject): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if ((schema.properties[k] as TSchema | undefined)?.type === 'array') {
      const values = Array.isArray(v) ? v : v.split(',');
      out[k] = [...new Set(values)];
    } else out[k] = Array.isArray(v) ? (v[0] ?? '') : v;
  }
  return out;
}

/**
 * The operations in the order their routes are tried: where two paths could match one URL, the one with a
 * fixed segment where the other has a parameter comes first (`/api/users/profile` before
 * `/api/users/:userId`); the registry's order otherwise.
 */
function literalsFirst(ops: readonly Operation[]): Operation[] {
  const shape = (op: Operation) => (op.http?.path ?? '').split('/').map((segment) => (segment.startsWith(':') ? 1 : 0));
  return [...ops].sort((a, b) => {
    const x = shape(a);
    const y = shape(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
    return x.length - y.length;
  });
}

async function timedCall(deps: OperationRouteDeps, op: Operation, message: Record<string, unknown>, ctx: Context): Promise<Buffer> {
  const started = performance.now();
  let outcome: 'ok' | 'error' | 'timeout' | 'no_responders' = 'ok';
  try {
    return await relay(deps.bus, op, message as never, {
      requestId: ctx.state.requestId,
      space: ctx.state.space ?? null,
      actor: ctx.state.actor ?? null,
      clientIp: ctx.state.clientIp ?? ctx.ip,
      timeoutMs: deadlineOf(op, deps.busTimeoutMs),
      // `buildMessage` checked it against the operation's request schema.
      checked: true,
    });
  } catch (err) {
    const code = err instanceof ProblemError ? err.code : 'internal_error';
    outcome = code === 'upstream_timeout' ? 'timeout' : code === 'service_unavailable' ? 'no_responders' : 'error';
    throw err;
  } finally {
    deps.metrics.observeBus(op.subject, outcome, (performance.now() - started) / 1000);
  }
}
