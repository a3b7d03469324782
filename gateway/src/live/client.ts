import type { ServerResponse } from 'node:http';
import type { LiveEndReason, LiveTopic } from '@scada/contracts';
import type { LiveMessage } from './messages.ts';

/** What one stream follows: its space, its topics, and its connections (null: all of the space). */
export type LiveFilter = { space: string; topics: ReadonlySet<LiveTopic>; connections: ReadonlySet<string> | null };

/** Why a stream ended, for the metrics and the log: the reason its last event names, or `client` (it left, or failed). */
export type EndReason = LiveEndReason | 'client';

/** A client that leaves the opening unread this long is dropped as slow. */
const openingStallMs = 30_000;

/** The most live bytes held for the end of a turn of the event loop (a quarter of a smaller client buffer); more are written at once. */
const holdBytes = 64 * 1024;

/** An ended stream whose last bytes are still unread after this long is cut off, so it holds nothing. */
const endGraceMs = 1000;

/**
 * One open stream. It opens in three steps: the opening (snapshot or replay) written at the client's
 * pace, while events it would get are left to the event log; a short catch-up from the log while new
 * events wait in `pending`; then live, each event to the socket. A live write never waits: past
 * `bufferBytes` of unsent data the client is dropped, so a client that does not read holds up nobody
 * else. The live events of one turn of the event loop go to the socket together, as one write at its
 * end (`setImmediate`): a device reporting thousands of values a second costs each stream a write per
 * turn instead of a system call per value. The opening is never counted against that buffer: it waits for the client instead (up to
 * `openingStallMs`).
 */
export class LiveClient {
  readonly userId: string;
  readonly sid: string;
  readonly filter: LiveFilter;
  /** The client's address, judged again whenever the IP filter changes. */
  readonly clientIp: string;
  /** When the session ends at the earliest, unless renewed (epoch seconds); the auth service is asked then. */
  expires: number;
  /** The IP filter this stream was last judged against. */
  judgedWith: unknown = null;
  readonly #res: ServerResponse;
  readonly #bufferBytes: number;
  readonly #onEnd: (client: LiveClient, reason: EndReason) => void;
  #phase: 'opening' | 'collecting' | 'live' = 'opening';
  #pending: LiveMessage[] = [];
  #after = 0;
  /** Whether `#after` names an event the client has whole (else the end event resets its Last-Event-ID). */
  #reached = false;
  #ended: EndReason | null = null;
  /** Inside an event the opening is writing: nothing else may be written until it is complete. */
  #midEvent = false;
  #endRequested: EndReason | null = null;
  #wake: (() => void) | null = null;
  /** Live bytes of this turn of the event loop, written together at its end. */
  #held: Buffer[] = [];
  #heldBytes = 0;

  constructor(options: {
    userId: string;
    sid: string;
    filter: LiveFilter;
    clientIp: string;
    expires: number;
    res: ServerResponse;
    bufferBytes: number;
    onEnd: (client: LiveClient, reason: EndReason) => void;
  }) {
    this.userId = options.userId;
    this.sid = options.sid;
    this.filter = options.filter;
    this.clientIp = options.clientIp;
    this.expires = options.expires;
    this.#res = options.res;
    this.#bufferBytes = options.bufferBytes;
    this.#onEnd = options.onEnd;
    options.res.once('close', () => this.#finish('client'));
  }

  /** Whether the filter covers a message of the client's space. */
  wants(message: LiveMessage): boolean {
    if (!this.filter.topics.has(message.topic)) return false;
    return message.connectionId === null || this.filter.connections === null || this.filter.connections.has(message.connectionId);
  }

  /** Hands the client a message of its space; answers the number of events written. */
  deliver(message: LiveMessage): number {
    if (this.#ended || this.#phase === 'opening' || !this.wants(message)) return 0;
    if (this.#phase === 'collecting') {
      this.#pending.push(message);
      return 0;
    }
    if (message.id <= this.#after) return 0;
    this.#after = message.id;
    return this.write(message.all()) ? message.frames().length : 0;
  }

  /**
   * Writes part of the opening and waits while the client has more than `paceBytes` unread; false once
   * the stream ends or an end is asked for (the opening then stops).
   */
  async writeOpening(bytes: Buffer | string, paceBytes: number): Promise<boolean> {
    if (this.#ended || this.#endRequested) return false;
    let timer: NodeJS.Timeout | undefined;
    // The write's callback comes once these bytes (and so all before them) are handed to the system.
    const flushed = new Promise<boolean>((resolve) => {
      this.#res.write(bytes, () => resolve(true));
      this.#wake = () => resolve(true);
      if (this.#res.writableLength > paceBytes) timer = setTimeout(() => resolve(false), openingStallMs);
    });
    const ok = timer === undefined || (await flushed);
    clearTimeout(timer);
    this.#wake = null;
    if (!ok && !this.#ended && !this.#endRequested) this.#drop();
    return !this.#ended && !this.#endRequested;
  }

  /** The opening starts an event that must be complete before anything else is written. */
  beginEvent(): void {
    this.#midEvent = true;
  }

  /**
   * Completes the opening's event with `closing` (written whatever the client has unread: an end asked
   * for meanwhile must get through); that end happens now.
   */
  endEvent(closing: string): void {
    if (!this.#ended) this.#res.write(closing);
    this.#midEvent = false;
    if (this.#endRequested) this.end(this.#endRequested);
  }

  /** The event id the opening reached: a resume continues after it. */
  reached(id: number): void {
    this.#after = id;
    this.#reached = true;
  }

  /** From now on, events the client would get wait in `pending` until `goLive`. */
  collect(): void {
    if (this.#phase === 'opening') this.#phase = 'collecting';
  }

  /** Writes the last frames of the catch-up, then what waited meanwhile; answers the number of events written. */
  goLive(frames: Buffer[], after: number): number {
    let sent = 0;
    for (const f of frames) if (this.write(f)) sent++;
    this.#after = Math.max(this.#after, after);
    this.#reached = true;
    const waiting = this.#pending;
    this.#pending = [];
    this.#phase = 'live';
    for (const message of waiting) sent += this.deliver(message);
    return sent;
  }

  /**
   * Writes bytes (at the end of this turn of the event loop, with the others of the turn), or drops the
   * client when they would exceed its buffer; false once it is gone.
   */
  write(bytes: Buffer | string): boolean {
    if (this.#ended) return false;
    const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    if (this.#res.writableLength + buffer.length > this.#bufferBytes) {
      this.#drop();
      return false;
    }
    if (this.#held.length === 0) setImmediate(() => this.#release());
    this.#held.push(buffer);
    this.#heldBytes += buffer.length;
    // A turn that gathers much writes it at once: bytes held here are not the client's to be slow on, and
    // are judged against its buffer once written.
    if (this.#heldBytes >= Math.min(holdBytes, this.#bufferBytes / 4)) this.#release();
    return true;
  }

  /** Writes what this turn held, in one piece. */
  #release(): void {
    if (this.#held.length === 0) return;
    const bytes = this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    if (!this.#ended) this.#res.write(bytes);
  }

  /**
   * Ends the stream with a last `event: end` naming the reason, then closes it. A stream whose headers
   * are not written yet is only marked (its route answers instead); one in the middle of its opening
   * event ends as soon as that event is closed.
   */
  end(reason: EndReason): void {
    if (this.#ended) return;
    if (!this.#res.headersSent) return this.#finish(reason);
    if (this.#midEvent) {
      this.#endRequested ??= reason;
      this.#wake?.();
      return;
    }
    // The id of the last event the client has whole, so a resume continues after it; none (an empty id)
    // when its opening was cut short, so a reconnect gets a fresh snapshot.
    const id = this.#reached ? String(this.#after) : '';
    this.#release();
    if (reason !== 'client') this.#res.write(`id: ${id}\nevent: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    this.#finish(reason);
    this.#res.end();
    // A client that reads nothing more would keep the socket: it gets a moment, then the cut.
    if (this.#res.writableLength > 0) setTimeout(() => this.#res.destroy(), endGraceMs).unref();
  }

  /**
   * Cuts the stream off without a last event (it failed); one whose headers are not written yet is only
   * let go, so that its route can still answer with a problem.
   */
  fail(): void {
    this.#finish('client');
    if (this.#res.headersSent) this.#res.destroy();
  }

  /** Whether the stream is live (until then only the opening writes to it). */
  get opened(): boolean {
    return this.#phase === 'live' && !this.#ended;
  }

  /** Whether the stream has ended, and why. */
  get ended(): EndReason | null {
    return this.#ended;
  }

  /** An end asked for while the opening was writing its event, which the opening must now close. */
  get endRequested(): EndReason | null {
    return this.#endRequested;
  }

  #drop(): void {
    this.#finish('slow');
    this.#res.destroy();
  }

  #finish(reason: EndReason): void {
    if (this.#ended) return;
    this.#ended = reason;
    this.#pending = [];
    this.#held = [];
    this.#heldBytes = 0;
    this.#wake?.();
    this.#onEnd(this, reason);
  }
}
