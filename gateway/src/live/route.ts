/**
 * `GET /api/live`: the live channel. The caller (cookie or bearer, viewer role) names a space by
 * `X-Space` or `?space=`, and may narrow the stream by `connections` and `topics`. The stream opens with
 * a snapshot, or with the events after `Last-Event-ID` while the event log still holds them, and then
 * carries every event of the space the filter covers, until the client leaves, its session ends, it
 * falls behind, or this gateway stops.
 */
import { deadlineOf, liveSnapshot, liveTopics, maxLiveConnections, ProblemError, type HttpBinding, type LiveTopic } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import type { Context, Middleware } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize, resolveSpace, sessionOf } from '../middleware/authorize.ts';
import type { LiveFilter } from './client.ts';
import type { LiveHub } from './hub.ts';
import { frame, liveMessage } from './messages.ts';

/** The route's place in the access rules: any signed-in role of the space reads it. */
export const liveBinding: HttpBinding = { method: 'GET', path: '/api/live', status: 200, access: 'viewer', spaceScoped: false, errors: [] };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const lastEventId = /^(\d{1,15})(?::(\d{1,6}))?$/;
const known = new Set(['space', 'connections', 'topics']);

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
    const log = deps.hub.log;
    if (!log) throw new ProblemError('service_unavailable', 'The live channel is not ready yet', { retryAfter: 1 });
    if (deps.hub.streamsOf(session.principal.id) >= deps.hub.settings.streamsPerUser) {
      throw new ProblemError('rate_limited', `At most ${deps.hub.settings.streamsPerUser} live streams per user`, { retryAfter: 5 });
    }
    const client = deps.hub.add({ userId: session.principal.id, sid: session.claims.sid, filter, res: ctx.res });
    let opening: { frames: Buffer[]; after: number };
    try {
      opening = await openingOf(ctx, deps, filter);
    } catch (err) {
      client.end('client', 'not opened');
      throw err;
    }
    if (client.ended) throw new ProblemError('invalid_token', 'The session has ended');
    ctx.respond = false;
    ctx.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    ctx.req.socket.setNoDelay(true);
    if (ctx.method === 'HEAD') return void client.end('client', 'head');
    deps.hub.sent(client.open(opening.frames, opening.after));
  };
}

/** The events after `Last-Event-ID` when the log still holds them all; otherwise a fresh snapshot. */
async function openingOf(
  ctx: Context,
  deps: { hub: LiveHub; bus: Bus; busTimeoutMs: number },
  filter: LiveFilter,
): Promise<{ frames: Buffer[]; after: number }> {
  const log = deps.hub.log!;
  const resume = lastEventId.exec(ctx.get('last-event-id').trim());
  if (resume) {
    const id = Number(resume[1]);
    const part = resume[2] === undefined ? null : Number(resume[2]);
    // A report cut short: its remaining values first, so the replay starts from the event before it.
    const held = await log.after(part === null ? id : id - 1);
    if (held) {
      const frames: Buffer[] = [];
      for (const event of held) {
        const message = liveMessage(event);
        if (!message || message.space !== filter.space) continue;
        const all = message.frames();
        const from = message.id === id && part !== null ? part + 1 : 0;
        if (from > 0 || wants(filter, message)) frames.push(...all.slice(from));
      }
      return { frames, after: held.at(-1)?.id ?? id };
    }
  }
  const at = log.last();
  const snapshot =
    filter.topics.has('sessions') || filter.topics.has('values')
      ? await call(
          deps.bus,
          liveSnapshot,
          {
            params: {},
            query: {},
            body: { connections: filter.connections ? [...filter.connections] : null, values: filter.topics.has('values') },
          },
          {
            requestId: ctx.state.requestId,
            space: filter.space,
            actor: ctx.state.actor,
            timeoutMs: deadlineOf(liveSnapshot, deps.busTimeoutMs),
          },
        )
      : { sessions: [], values: [] };
  if (!filter.topics.has('sessions')) snapshot.sessions = [];
  return { frames: [frame(String(at), 'snapshot', snapshot)], after: at };
}

function wants(filter: LiveFilter, message: { topic: LiveTopic; connectionId: string | null }): boolean {
  if (!filter.topics.has(message.topic)) return false;
  return message.connectionId === null || filter.connections === null || filter.connections.has(message.connectionId);
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
