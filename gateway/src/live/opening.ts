/**
 * The opening of a live stream: a snapshot of what its filter covers, or the events after `Last-Event-ID`
 * while the event log still holds them; then a catch-up from the log to the live edge. The snapshot comes
 * from the protocol service in pages (each far below one bus message, whatever the size of the space) and
 * is written as one `event: snapshot`, a `data:` line a page (SSE joins them with line feeds, which JSON
 * reads as white space). All of it is written at the client's pace, not against its slow-client buffer.
 */
import { deadlineOf, liveSnapshot, type LiveTopic } from '@scada/contracts';
import { call, type Bus, type CallContext, type EventLog, type LoggedEvent } from '@scada/platform';
import type { LiveClient, LiveFilter } from './client.ts';
import { liveMessage } from './messages.ts';

/** Connections a snapshot page asks for at most (the protocol service also bounds a page by its size). */
const pageConnections = 200;

/** Catch-up rounds written at the client's pace before the rest is written as live events. */
const catchUpRounds = 10;

const lastEventId = /^(\d{1,15})(?::(\d{1,6}))?$/;

/** What an opening needs. */
export type OpeningDeps = { bus: Bus; busTimeoutMs: number; log: EventLog; bufferBytes: number };

/** An opening made ready: what could fail as an answer has been fetched; `write` sends it and goes live. */
export type Opening = { write(client: LiveClient): Promise<number> };

type Resume = { id: number; part: number | null };
type Part = 'sessions' | 'values';

/**
 * Prepares a stream's opening: the held events after `Last-Event-ID`, else the first page of a snapshot,
 * fetched before the stream's headers are written, so that a failure still answers as a problem.
 */
export async function prepareOpening(deps: OpeningDeps, filter: LiveFilter, lastId: string, ctx: CallContext): Promise<Opening> {
  const pace = Math.min(64 * 1024, Math.floor(deps.bufferBytes / 4));
  const resume = lastEventId.exec(lastId.trim());
  if (resume) {
    const from: Resume = { id: Number(resume[1]), part: resume[2] === undefined ? null : Number(resume[2]) };
    // A report cut short: its remaining values first, so the replay starts from the event before it.
    const start = from.part === null ? from.id : from.id - 1;
    if (await deps.log.after(start)) return { write: (client) => catchUp(client, deps, filter, start, from, pace) };
  }
  const at = deps.log.last();
  const parts = (['sessions', 'values'] as const).filter((part) => filter.topics.has(part));
  const pagers = new Map(parts.map((part) => [part, pager(deps, filter, part, ctx)]));
  const first = parts[0] ? await pagers.get(parts[0])!() : null;
  return {
    async write(client) {
      if (!(await writeSnapshot(client, at, { part: parts[0], items: first }, pagers, pace))) return 0;
      return 1 + (await catchUp(client, deps, filter, at, null, pace));
    },
  };
}

/** The pages of one part of a snapshot, one call each; null after the last. */
function pager(deps: OpeningDeps, filter: LiveFilter, part: Part, ctx: CallContext): () => Promise<unknown[] | null> {
  let cursor: string | null = null;
  let done = false;
  return async () => {
    if (done) return null;
    const page = await call(
      deps.bus,
      liveSnapshot,
      {
        params: {},
        query: {},
        body: {
          connections: filter.connections ? [...filter.connections] : null,
          sessions: part === 'sessions',
          values: part === 'values',
          after: cursor,
          limit: pageConnections,
        },
      },
      { ...ctx, timeoutMs: deadlineOf(liveSnapshot, deps.busTimeoutMs) },
    );
    cursor = page.next ?? null;
    done = cursor === null;
    return part === 'sessions' ? page.sessions : page.values;
  };
}

/**
 * Writes the snapshot event page by page. An end asked for meanwhile (the session ended) closes the event
 * where it stands, so that the end still comes as an event of its own; false when the stream did not
 * get past the snapshot.
 */
async function writeSnapshot(
  client: LiveClient,
  at: number,
  first: { part: Part | undefined; items: unknown[] | null },
  pagers: Map<Part, () => Promise<unknown[] | null>>,
  pace: number,
): Promise<boolean> {
  client.beginEvent();
  let part: Part = 'sessions';
  let open = await client.writeOpening(`id: ${at}\nevent: snapshot\ndata: {"sessions":[\n`, pace);
  for (const name of ['sessions', 'values'] as const) {
    if (!open) break;
    if (name === 'values') open = await client.writeOpening('data: ],"values":[\n', pace);
    part = name;
    const next = pagers.get(name);
    let written = 0;
    for (let items = name === first.part ? first.items : ((await next?.()) ?? null); open && items; items = await next!()) {
      if (items.length === 0) continue;
      const line = `data: ${written > 0 ? ',' : ''}${items.map((item) => JSON.stringify(item)).join(',')}\n`;
      written += items.length;
      open = await client.writeOpening(line, pace);
    }
  }
  if (client.ended) return false;
  if (open) client.reached(at);
  // Cut short by an end: the arrays are closed where they stand, and the end follows as an event of its own.
  client.endEvent(open || part === 'values' ? 'data: ]}\n\n' : 'data: ],"values":[]}\n\n');
  return open;
}

/**
 * Brings the stream from event `start` to the live edge: while far behind, held events are written at
 * the client's pace; then new events are collected while the last held ones are written, and the stream
 * goes live. Answers the number of events written.
 */
async function catchUp(client: LiveClient, deps: OpeningDeps, filter: LiveFilter, start: number, resume: Resume | null, pace: number) {
  let after = start;
  let sent = 0;
  for (let round = 0; round < catchUpRounds; round++) {
    const held = await deps.log.after(after);
    if (!held) return (client.end('slow'), sent);
    const frames = framesOf(held, filter, resume);
    if (frames.reduce((n, f) => n + f.length, 0) <= pace) break;
    for (const f of frames) {
      if (!(await client.writeOpening(f, pace))) return sent;
      sent++;
    }
    after = held.at(-1)!.id;
    client.reached(after);
  }
  client.collect();
  const rest = await deps.log.after(after);
  if (!rest) return (client.end('slow'), sent);
  return sent + client.goLive(framesOf(rest, filter, resume), rest.at(-1)?.id ?? after);
}

/** The frames of held events the filter covers; the rest of a report a resume names comes whole. */
function framesOf(held: LoggedEvent[], filter: LiveFilter, resume: Resume | null): Buffer[] {
  const frames: Buffer[] = [];
  for (const event of held) {
    const message = liveMessage(event);
    if (!message || message.space !== filter.space) continue;
    const from = resume && message.id === resume.id && resume.part !== null ? resume.part + 1 : 0;
    if (from > 0 || wants(filter, message)) frames.push(...message.frames().slice(from));
  }
  return frames;
}

function wants(filter: LiveFilter, message: { topic: LiveTopic; connectionId: string | null }): boolean {
  if (!filter.topics.has(message.topic)) return false;
  return message.connectionId === null || filter.connections === null || filter.connections.has(message.connectionId);
}
