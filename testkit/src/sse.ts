import http from 'node:http';
import { Readable } from 'node:stream';

/** A Server-Sent Event as a test reads it: a comment line, or an event with its id and parsed data. */
export type SseEvent = { id: string | null; event: string; data: unknown } | { comment: string };

/** An open SSE stream: every event so far, a way to wait for the next one that matches, and close. */
export type SseStream = {
  res: Response;
  events: SseEvent[];
  /** Resolves with the first event (from `from` on) that matches, or rejects after `ms`. */
  wait(match: (e: SseEvent) => boolean, ms?: number, from?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream (or rejects after `ms`). */
  ended(ms?: number): Promise<void>;
  close(): void;
};

/** Opens `GET` on an SSE URL with fetch; the answer is returned as it came when it is not a stream. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  return follow(res, () => abort.abort());
}

/**
 * Opens `GET` on an SSE URL from a given loopback address (127.0.0.2, …), so the gateway sees that
 * address as the client's.
 */
export async function openSseFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const incoming = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(url, { localAddress, headers: { accept: 'text/event-stream', ...headers } }, resolve);
    req.on('error', reject);
  });
  const fields = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) fields.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const res = new Response(Readable.toWeb(incoming) as ReadableStream<Uint8Array>, { status: incoming.statusCode ?? 0, headers: fields });
  return follow(res, () => incoming.destroy());
}

/** Reads a stream's events as they come. */
function follow(res: Response, abort: () => void): SseStream {
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let done = false;
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            events.push(parse(block));
          }
          notify();
        }
      } catch {
        // aborted
      }
      done = true;
      notify();
    })();
  } else done = true;
  const until = (ok: () => boolean, ms: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (ok()) return resolve();
      const check = () => {
        if (!ok()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events).slice(0, 2000)}`));
      }, ms);
      waiters.add(check);
    });
  return {
    res,
    events,
    async wait(match, ms = 5000, from = 0) {
      let found: SseEvent | undefined;
      await until(() => (found = events.slice(from).find(match)) !== undefined || done, ms, 'an event');
      if (!found) throw new Error(`the stream ended without the event; got ${JSON.stringify(events).slice(0, 2000)}`);
      return found;
    },
    ended: (ms = 5000) => until(() => done, ms, 'the end of the stream'),
    close: abort,
  };
}

function parse(block: string): SseEvent {
  if (block.split('\n').every((l) => l.startsWith(':')))
    return {
      comment: block
        .split('\n')
        .map((l) => l.slice(1).trim())
        .join('\n'),
    };
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return { id, event, data: data.length ? JSON.parse(data.join('\n')) : null };
}

/** The event (not comment) of a given name. */
export const isEvent =
  (name: string, match: (data: any) => boolean = () => true) =>
  (e: SseEvent) =>
    'event' in e && e.event === name && match(e.data);
