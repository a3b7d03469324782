import Router from '@koa/router';
import { ProblemError, validate, type Operation } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import { Value } from '@sinclair/typebox/value';
import type { TObject, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import getRawBody from 'raw-body';
import type { GatewayMetrics } from '../metrics.ts';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';

/** What the operation router needs. */
export type OperationRouteDeps = {
  bus: Bus;
  metrics: GatewayMetrics;
  busTimeoutMs: number;
  bodyLimitBytes: number;
  sessions: SessionDeps;
};

/**
 * Routes every operation that has an HTTP binding to its bus subject: the body is parsed by content type,
 * the `{params, query, body}` message is checked against the operation's request schema at the edge, sent
 * over the bus, and the reply answered with the operation's status.
 */
export function operationRoutes(ops: readonly Operation[], deps: OperationRouteDeps): Router {
  const router = new Router();
  const parseBody = koaBody({
    jsonLimit: deps.bodyLimitBytes,
    formLimit: deps.bodyLimitBytes,
    textLimit: deps.bodyLimitBytes,
    multipart: true,
    formidable: { maxFileSize: deps.bodyLimitBytes, maxFieldsSize: deps.bodyLimitBytes },
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  });
  for (const op of ops) {
    const http = op.http;
    // Uploads and downloads stream through routes of their own (scl_files.ts).
    if (!http || http.gatewayRoute) continue;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](op.operationId, http.path, async (ctx) => {
      await authorize(ctx, http, deps.sessions);
      const message = await buildMessage(ctx, op, parseBody, deps.bodyLimitBytes);
      const reply = await timedCall(deps, op, message, ctx);
      ctx.status = http.status;
      if (http.status === 204) return;
      // Every answer is JSON, a bare string too (Koa would send it as text/plain).
      ctx.type = 'application/json';
      ctx.body = typeof reply === 'string' ? JSON.stringify(reply) : reply;
    });
  }
  return router;
}

async function buildMessage(ctx: Context, op: Operation, parseBody: ReturnType<typeof koaBody>, limit: number): Promise<Record<string, unknown>> {
  const parts = op.request.properties as Record<string, TSchema>;
  const message: Record<string, unknown> = {
    params: { ...ctx.params },
    query: Value.Convert(parts.query as TObject, flattenQuery(ctx.query)),
  };
  if (parts.body) message.body = op.http?.consumes?.includes('text/plain') ? await readText(ctx, limit) : await readBody(ctx, op, parseBody);
  const checked = validate(op.request, message);
  if (!checked.ok) {
    throw new ProblemError('validation_failed', 'The request does not match the schema', { errors: checked.errors });
  }
  return message;
}

async function readBody(ctx: Context, op: Operation, parseBody: ReturnType<typeof koaBody>): Promise<unknown> {
  const consumes = op.http?.consumes ?? ['application/json'];
  if (!ctx.request.length && !ctx.get('transfer-encoding')) return undefined;
  if (!ctx.is(consumes as string[])) {
    throw new ProblemError('unsupported_media_type', `Send the body as ${consumes.join(' or ')}`);
  }
  await parseBody(ctx, async () => {});
  const wrapper = op.http?.bodyWrapper;
  return wrapper ? unwrap(ctx.request.body, wrapper) : ctx.request.body;
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
    throw new ProblemError('validation_failed', `Only the ${wrapper} part is accepted`, { errors: extra.map((k) => ({ path: `/body/${k}`, message: 'is not accepted' })) });
  }
  if (typeof inner !== 'string') return inner;
  try {
    return JSON.parse(inner) as unknown;
  } catch (err) {
    throw new ProblemError('malformed_body', `The ${wrapper} part is not JSON`, { cause: err });
  }
}

/**
 * A `text/plain` body as the exact text sent: the raw bytes (at most `limit`), decoded as strict UTF-8
 * with a byte order mark kept, so the service stores what the client sent. Invalid UTF-8 is 400; another
 * content type, a charset other than UTF-8 or a content coding is 415; an empty body is the empty string.
 */
async function readText(ctx: Context, limit: number): Promise<string> {
  if (!ctx.is('text/plain')) throw new ProblemError('unsupported_media_type', 'Send the body as text/plain');
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') throw new ProblemError('unsupported_media_type', 'Send text/plain as UTF-8');
  const coding = ctx.get('content-encoding').toLowerCase();
  if (coding !== '' && coding !== 'identity') throw new ProblemError('unsupported_media_type', 'Send the body without a content coding');
  const bytes = await getRawBody(ctx.req, { length: ctx.request.length, limit });
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ProblemError('malformed_body', 'The body is not valid UTF-8');
  }
}

/** A repeated query parameter keeps its first value; schemas decide types. */
function flattenQuery(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? (v[0] ?? '') : v;
  }
  return out;
}

async function timedCall(deps: OperationRouteDeps, op: Operation, message: Record<string, unknown>, ctx: Context): Promise<unknown> {
  const started = performance.now();
  let outcome: 'ok' | 'error' | 'timeout' | 'no_responders' = 'ok';
  try {
    return await call(deps.bus, op, message as never, {
      requestId: ctx.state.requestId,
      space: ctx.state.space ?? null,
      actor: ctx.state.actor ?? null,
      clientIp: ctx.state.clientIp ?? ctx.ip,
      timeoutMs: deps.busTimeoutMs,
    });
  } catch (err) {
    const code = err instanceof ProblemError ? err.code : 'internal_error';
    outcome = code === 'upstream_timeout' ? 'timeout' : code === 'service_unavailable' ? 'no_responders' : 'error';
    throw err;
  } finally {
    deps.metrics.observeBus(op.subject, outcome, (performance.now() - started) / 1000);
  }
}
