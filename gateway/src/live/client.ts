import type { ServerResponse } from 'node:http';
import type { LiveTopic } from '@scada/contracts';
import type { LiveMessage } from './messages.ts';

/** What one stream follows: its space, its topics, and its connections (null: all of the space). */
export type LiveFilter = { space: string; topics: ReadonlySet<LiveTopic>; connections: ReadonlySet<string> | null };

/** Why a stream ended, for the metrics and the log. */
export type EndReason = 'client' | 'slow' | 'session' | 'shutdown';

/**
 * One open stream. Until its opening (snapshot or replay) is written, the events the hub hands it wait
 * in `pending`; after, each goes straight to the socket. A write never waits: past `bufferBytes` of
 * unsent data the client is dropped, so a client that does not read holds up nobody else.
 */
export class LiveClient {
  readonly userId: string;
  readonly sid: string;
  readonly filter: LiveFilter;
  readonly #res: ServerResponse;
  readonly #bufferBytes: number;
  readonly #onEnd: (client: LiveClient, reason: EndReason) => void;
  #pending: LiveMessage[] | null = [];
  #after = 0;
  #ended = false;

  constructor(options: {
    userId: string;
    sid: string;
    filter: LiveFilter;
    res: ServerResponse;
    bufferBytes: number;
    onEnd: (client: LiveClient, reason: EndReason) => void;
  }) {
    this.userId = options.userId;
    this.sid = options.sid;
    this.filter = options.filter;
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
    if (this.#ended || !this.wants(message)) return 0;
    if (this.#pending) {
      this.#pending.push(message);
      return 0;
    }
    if (message.id <= this.#after) return 0;
    this.#after = message.id;
    return this.write(message.all()) ? message.frames().length : 0;
  }

  /** Writes the opening frames, then what arrived meanwhile; answers the number of events written. */
  open(frames: Buffer[], after: number): number {
    let sent = 0;
    for (const f of frames) if (this.write(f)) sent++;
    this.#after = after;
    const waiting = this.#pending ?? [];
    this.#pending = null;
    for (const message of waiting) sent += this.deliver(message);
    return sent;
  }

  /** Writes bytes, or drops the client when they would exceed its buffer; false once it is gone. */
  write(bytes: Buffer | string): boolean {
    if (this.#ended) return false;
    if (this.#res.writableLength + bytes.length > this.#bufferBytes) {
      this.#finish('slow');
      this.#res.destroy();
      return false;
    }
    this.#res.write(bytes);
    return true;
  }

  /**
   * Ends the stream with a last comment line (the reason, for whoever reads it). A stream still opening
   * is only marked: its route answers instead.
   */
  end(reason: EndReason, comment: string): void {
    if (this.#ended) return;
    if (!this.opened) return this.#finish(reason);
    this.write(`: ${comment}\n\n`);
    this.#finish(reason);
    this.#res.end();
  }

  /** Whether the opening has been written (until then nothing may be). */
  get opened(): boolean {
    return this.#pending === null && !this.#ended;
  }

  get ended(): boolean {
    return this.#ended;
  }

  #finish(reason: EndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = null;
    this.#onEnd(this, reason);
  }
}
