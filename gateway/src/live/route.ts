/**
 * `GET /api/live`: the live channel. The caller (cookie or bearer, viewer role) names a space by
 * `X-Space` or `?space=`, and may narrow the stream by `connections` and `topics`. The stream opens with
 * a snapshot, or with the events after `Last-Event-ID` while the event log still holds them (`opening.ts`),
 * and then carries every event of the space the filter covers, until the client leaves, its session may
 * no longer see it (`access.ts`), it falls behind, or this gateway stops. `HEAD` answers the stream's
 * headers at once and holds nothing.
 */
import { liveTopics, maxLiveConnections, ProblemError, type HttpBinding, type LiveTopic } from '@scada/contracts';
import type { Bus } from '@scada/platform';
import type { Context, Middleware } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize, resolveSpace, sessionOf } from '../middleware/authorize.ts';
import type { EndReason, LiveClient, LiveFilter } from './client.ts';
import type { LiveHub } from './hub.ts';
import { prepareOpening, type Opening } from './opening.ts';

/** The route's place in the access rules: any signed-in role of the space reads it. */
export const liveBinding: HttpBinding = { method: 'GET', path: '/api/live', status: 200, access: 'viewer', spaceScoped: false, errors: [] };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const known = new Set(['space', 'connections', 'topics']);
const streamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
};

/** The live route, answered by this middleware before the operation routes see the path. */
export function liveRoute(deps: { hub: LiveHub; sessions: SessionDeps; bus: Bus; busTimeoutMs: number }): Middleware {
  return async function live(ctx, next) {
    if (ctx.path !== liveBinding.path) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ProblemError('method_not_allowed', 'The live channel is read with GET', { headers: { Allow: 'GET, HEAD' } });
    }
    await authorize(ctx, liveBinding, deps.sessions);
    const session = (await sessionOf(ctx, deps.sessions))!;
    const space = resolveSpace(ctx, session, listOf(ctx, 'space'));
    const filter = { space, ...filterOf(ctx) };
    if (!deps.hub.ready) throw notReady();
    const capped = () => deps.hub.streamsOf(session.principal.id) >= deps.hub.settings.streamsPerUser;
    if (capped()) throw tooMany(deps.hub.settings.streamsPerUser);
    // HEAD: what a GET would answer, without a stream behind it (no place taken, no snapshot made, no log followed).
    if (ctx.method === 'HEAD') return void ((ctx.status = 200), ctx.set(streamHeaders));
    // The log is followed from here on (opened when no stream needed it until now), and while the stream is open.
    const held = await deps.hub.holdLog();
    if (!held) throw notReady();
    // A client that left while the log was being opened gets no stream: its response closed already, so a
    // stream added now would never hear of it and would hold one of the user's places.
    if (ctx.req.socket.destroyed || ctx.res.destroyed) {
      held.release();
      ctx.respond = false;
      return;
    }
    let client: LiveClient;
    let opening: Opening;
    try {
      // Asked again: other streams of the user may have opened while the log was being opened.
      if (capped()) throw tooMany(deps.hub.settings.streamsPerUser);
      client = deps.hub.add({
        userId: session.principal.id,
        sid: session.claims.sid,
        filter,
        clientIp: ctx.state.clientIp,
        // The session lives at least as long as the token it was opened with; after that the auth service says.
        expires: session.claims.exp,
        res: ctx.res,
      });
    } finally {
      held.release();
    }
    try {
      const callContext = { requestId: ctx.state.requestId, space, actor: ctx.state.actor };
      opening = await prepareOpening(
        { bus: deps.bus, busTimeoutMs: deps.busTimeoutMs, log: held.log, bufferBytes: deps.hub.settings.clientBufferBytes },
        filter,
        ctx.get('last-event-id'),
        callContext,
      );
    } catch (err) {
      client.fail();
      throw err;
    }
    if (client.ended) throw refusalOf(client.ended);
    ctx.respond = false;
    ctx.res.writeHead(200, streamHeaders);
    ctx.req.socket.setNoDelay(true);
    try {
      deps.hub.sent(await opening.write(client));
    } catch (err) {
      // The stream has answered 200 already: a failure now can only cut it, and the client reconnects.
      ctx.state.log?.warn({ err }, 'a live stream failed while opening; cutting it');
      client.fail();
    }
  };
}

function tooMany(perUser: number): ProblemError {
  return new ProblemError('rate_limited', `At most ${perUser} live streams per user`, { retryAfter: 5 });
}

/** The answer while the event log cannot be opened. */
function notReady(): ProblemError {
  return new ProblemError('service_unavailable', 'The live channel is not ready yet', { retryAfter: 1 });
}

/** The answer to a stream whose access ended while it was being opened. */
function refusalOf(reason: EndReason): ProblemError {
  if (reason === 'ip_denied') return new ProblemError('ip_denied', 'Requests from this address are not allowed');
  if (reason === 'access_ended') return new ProblemError('forbidden', 'Access to this stream has ended');
  if (reason === 'shutdown') return new ProblemError('service_unavailable', 'This gateway is stopping', { retryAfter: 1 });
  return new ProblemError('invalid_token', 'The session has ended');
}

/** `connections` and `topics` from the query; 400 naming what is wrong. */
function filterOf(ctx: Context): Omit<LiveFilter, 'space'> {
  for (const name of Object.keys(ctx.query)) {
    if (!known.has(name)) throw invalid(name, 'is not a parameter of the live channel');
  }
  const connections = listOf(ctx, 'connections')
    ?.flatMap((v) => v.split(','))
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '');
  for (const id of connections ?? []) if (!uuid.test(id)) throw invalid('connections', `"${id.slice(0, 80)}" is not a connection id`);
  if (connections && connections.length > maxLiveConnections) throw invalid('connections', `at most ${maxLiveConnections} connections`);
  const topics = listOf(ctx, 'topics')
    ?.flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  for (const topic of topics ?? []) {
    if (!(liveTopics as readonly string[]).includes(topic))
      throw invalid('topics', `"${topic.slice(0, 80)}" is not one of ${liveTopics.join(', ')}`);
  }
  return {
    connections: connections?.length ? new Set(connections) : null,
    topics: new Set<LiveTopic>(topics?.length ? (topics as LiveTopic[]) : liveTopics),
  };
}

function listOf(ctx: Context, name: string): string[] | undefined {
  const value = ctx.query[name];
  return value === undefined ? undefined : Array.isArray(value) ? value : [value];
}

function invalid(path: string, message: string): ProblemError {
  return new ProblemError('validation_failed', `${path} ${message}`, { errors: [{ path: `/query/${path}`, message }] });
}
