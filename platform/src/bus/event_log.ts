/**
 * The event log: every `events.>` message the bus carried in the last while, numbered. Numbers mean the
 * same to every process on the bus, so a consumer that hands them out (the gateway's live channel, as SSE
 * ids) can be asked to continue from one of them anywhere. On NATS the log is a JetStream stream and the
 * numbers are its sequence numbers (`nats_event_log.ts`); on the in-process bus it is one shared
 * in-memory log per bus (`MemoryEventLog` below). Each process keeps the held window in memory
 * (`EventTail`), so replaying it costs no round trip.
 */
import { allEvents } from '@scada/contracts';

/** One event as the log holds it. `subject` is as the publisher named it (without a bus prefix). */
export type LoggedEvent = { id: number; subject: string; data: Uint8Array; at: number };

/** How long events are held: at least `maxAgeMs`. */
export type EventLogOptions = { maxAgeMs: number };

/** A process's view of the event log. */
export interface EventLog {
  /** The id of the newest event this process has seen; 0 before any. */
  last(): number;
  /**
   * Every held event after `id`, oldest first; null when some of them are no longer held, or when `id`
   * names an event the log never had (a log that was reset). An id a little ahead of this process (an
   * event another process saw first) waits for it, briefly.
   */
  after(id: number): Promise<LoggedEvent[] | null>;
  /** Calls `listener` with every new event, in id order; answers the function that stops it. */
  listen(listener: (event: LoggedEvent) => void): () => void;
  /** Stops following the log. */
  close(): Promise<void>;
}

/** The subject pattern the log holds: every event of the registry. */
export const eventSubjects = allEvents;

/**
 * The header that names an event which may be published more than once (another replica taking over the
 * work publishes it again): the log keeps one event of an id within `duplicateWindowMs`. On NATS it is
 * JetStream's own (`Nats-Msg-Id`, whose duplicate window is 2 minutes by default).
 */
export const eventIdHeader = 'Nats-Msg-Id';

/** How long the in-process log remembers an event id: JetStream's default duplicate window. */
export const duplicateWindowMs = 120_000;

/** Bytes of held events are copied into blocks of this size (an event larger than one gets a block of its own). */
const blockBytes = 256 * 1024;

/** Parallel arrays grow by push; their dropped heads are cut off now and then, not shifted one by one. */
const compactAfter = 1024;

/**
 * The held window in memory, in id order, trimmed by age. Ids are contiguous from `completeFrom`: a
 * request for events after an older id cannot be answered from here.
 *
 * The window holds minutes of events (hundreds of thousands at a device's thousands of values a second),
 * so it holds them as few objects as it can: each event's bytes are copied into a shared block of
 * `blockBytes`, and its id, subject, time and place in its block are entries of arrays, not an object of
 * its own with a buffer of its own. The garbage collector then moves and marks a handful of blocks and
 * arrays instead of several objects an event (an object, a view, its buffer and the buffer's memory
 * outside the heap), which at 5,000 events a second made most of the main thread's collection work.
 * Listeners get each event as it was pushed; `after` makes the events it answers from the arrays.
 */
export class EventTail {
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  readonly #listeners = new Set<(event: LoggedEvent) => void>();
  #ids: number[] = [];
  #subjects: string[] = [];
  #ats: number[] = [];
  #blocks: Uint8Array[] = [];
  #starts: number[] = [];
  #ends: number[] = [];
  #head = 0;
  #block: Uint8Array = new Uint8Array(0);
  #blockUsed = 0;
  #completeFrom = 1;
  #last = 0;
  #caughtUp = new Set<() => void>();

  constructor(maxAgeMs: number, now: () => number = Date.now) {
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  /** The newest id seen. */
  last(): number {
    return this.#last;
  }

  /** Starts the window at `id` (the oldest the log still holds), before any event arrived. */
  startAt(id: number): void {
    this.#completeFrom = id;
    this.#last = Math.max(this.#last, id - 1);
  }

  /** Adds the next event and tells the listeners. */
  push(event: LoggedEvent): void {
    if (event.id <= this.#last) return;
    if (event.id > this.#last + 1 && this.#last >= this.#completeFrom - 1) {
      // A gap (the log moved on while this process was away): nothing before it can be replayed.
      this.#clear();
      this.#completeFrom = event.id;
    }
    this.#hold(event);
    this.#last = event.id;
    this.#trim();
    for (const listener of this.#listeners) listener(event);
    for (const resolve of this.#caughtUp) resolve();
  }

  /** Events after `id` from memory; null when the window no longer reaches back to it. */
  after(id: number): LoggedEvent[] | null {
    this.#trim();
    if (id + 1 < this.#completeFrom) return null;
    const out: LoggedEvent[] = [];
    for (let i = this.#head; i < this.#ids.length; i++) {
      if (this.#ids[i]! <= id) continue;
      out.push({
        id: this.#ids[i]!,
        subject: this.#subjects[i]!,
        data: this.#blocks[i]!.subarray(this.#starts[i]!, this.#ends[i]!),
        at: this.#ats[i]!,
      });
    }
    return out;
  }

  /** Resolves when `id` has been seen, or after `ms`; answers whether it was. */
  async reach(id: number, ms: number): Promise<boolean> {
    const end = this.#now() + ms;
    while (this.#last < id) {
      const left = end - this.#now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#caughtUp.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.#caughtUp.add(done);
      });
    }
    return true;
  }

  listen(listener: (event: LoggedEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Keeps an event: its bytes copied into the current block (a new one when they do not fit), the rest into the arrays. */
  #hold(event: LoggedEvent): void {
    const size = event.data.byteLength;
    let block = this.#block;
    let start = 0;
    if (size > blockBytes / 4) {
      // A large event gets a buffer of its own; the current block stays open for the small ones after it
      // (else each large event would leave the rest of a block empty).
      block = new Uint8Array(size);
    } else {
      if (this.#blockUsed + size > this.#block.length) {
        this.#block = block = new Uint8Array(blockBytes);
        this.#blockUsed = 0;
      }
      start = this.#blockUsed;
      this.#blockUsed += size;
    }
    block.set(event.data, start);
    this.#ids.push(event.id);
    this.#subjects.push(event.subject);
    this.#ats.push(event.at);
    this.#blocks.push(block);
    this.#starts.push(start);
    this.#ends.push(start + size);
  }

  #clear(): void {
    this.#ids = [];
    this.#subjects = [];
    this.#ats = [];
    this.#blocks = [];
    this.#starts = [];
    this.#ends = [];
    this.#head = 0;
  }

  #trim(): void {
    const oldest = this.#now() - this.#maxAgeMs;
    while (this.#head < this.#ids.length && this.#ats[this.#head]! < oldest) {
      this.#completeFrom = this.#ids[this.#head]! + 1;
      this.#head++;
    }
    // Compact now and then rather than shift on every event; a block goes once no held event is in it.
    if (this.#head > compactAfter && this.#head * 2 > this.#ids.length) {
      const from = this.#head;
      this.#ids = this.#ids.slice(from);
      this.#subjects = this.#subjects.slice(from);
      this.#ats = this.#ats.slice(from);
      this.#blocks = this.#blocks.slice(from);
      this.#starts = this.#starts.slice(from);
      this.#ends = this.#ends.slice(from);
      this.#head = 0;
    }
  }
}

/** Follows the bus's events: `push` gets each with its event id, if it has one; answers how to stop. */
type Subscribe = (push: (subject: string, data: Uint8Array, eventId?: string) => void) => () => Promise<void>;

/**
 * Event ids seen within the duplicate window, as JetStream keeps them for a stream: a repeated id is
 * dropped. The window outlives a log that is closed and opened again (`kept`), as a stream's does whoever
 * follows it.
 *
 * The ids are held in generations of a twelfth of the window each, and a generation goes whole once its
 * newest id is older than the window: an id is remembered for the window and at most a generation more.
 * One set of the whole window (600,000 ids at a device's 5,000 values a second) held the main thread for
 * tens of milliseconds each time it grew its table or cut its order arrays; a generation's set is a
 * twelfth of that, and dropping one costs nothing but the garbage collector's sweep.
 */
export class SeenIds {
  readonly #windowMs: number;
  readonly #generationMs: number;
  readonly #now: () => number;
  /** Oldest first: when each began, and its ids. */
  #generations: { from: number; ids: Set<string> }[] = [];

  constructor(now: () => number = Date.now, windowMs = duplicateWindowMs) {
    this.#now = now;
    this.#windowMs = windowMs;
    this.#generationMs = windowMs / 12;
  }

  /** Whether an event of this id was logged within the duplicate window (remembering it if not). */
  repeated(eventId: string): boolean {
    const now = this.#now();
    const generations = this.#generations;
    while (generations.length > 0 && now - generations[0]!.from - this.#generationMs >= this.#windowMs) generations.shift();
    for (let i = generations.length - 1; i >= 0; i--) if (generations[i]!.ids.has(eventId)) return true;
    let newest = generations[generations.length - 1];
    if (newest === undefined || now - newest.from >= this.#generationMs) {
      newest = { from: now, ids: new Set() };
      generations.push(newest);
    }
    newest.ids.add(eventId);
    return false;
  }
}

/**
 * Per bus (its map of logs), what each log that was closed leaves for its next opening: the next id (ids
 * are never handed out twice) and the event ids of its duplicate window.
 */
const kept = new WeakMap<Map<string, MemoryEventLog>, Map<string, { next: number; seen: SeenIds }>>();

/**
 * The in-process bus's event log: one sequence per bus (and subject prefix), shared by every view
 * opened on it, so two gateways in one process hand out the same ids for the same events. It holds what
 * was published while it ran; a fresh process starts a fresh log (as a restarted in-process bus does).
 */
export class MemoryEventLog {
  readonly tail: EventTail;
  #views = 0;
  readonly #stop: () => Promise<void>;
  readonly #seen: SeenIds;

  /** The next id to hand out. */
  #next: number;

  private constructor(maxAgeMs: number, subscribe: Subscribe, next: number, seen: SeenIds) {
    this.tail = new EventTail(maxAgeMs);
    this.#seen = seen;
    // A log opened again goes on from the ids handed out before; what was published meanwhile was not heard,
    // so no id before this one can be replayed (a resume from one gets a snapshot).
    this.#next = next;
    this.tail.startAt(next);
    this.#stop = subscribe((subject, data, eventId) => {
      if (eventId !== undefined && this.#seen.repeated(eventId)) return;
      this.tail.push({ id: this.#next++, subject, data, at: Date.now() });
    });
  }

  /** The shared log of a bus, created on first use; each call opens a view that must be closed. */
  static open(owners: Map<string, MemoryEventLog>, key: string, options: EventLogOptions, subscribe: Subscribe): EventLog {
    let log = owners.get(key);
    if (!log) {
      const before = kept.get(owners)?.get(key);
      log = new MemoryEventLog(options.maxAgeMs, subscribe, before?.next ?? 1, before?.seen ?? new SeenIds());
      owners.set(key, log);
    }
    log.#views++;
    const shared = log;
    const stops = new Set<() => void>();
    let closed = false;
    return {
      last: () => shared.tail.last(),
      after: async (id) => {
        if (id > shared.tail.last()) return null; // one sequence per process: an id ahead was never handed out here
        return shared.tail.after(id);
      },
      listen: (listener) => {
        const stop = shared.tail.listen(listener);
        stops.add(stop);
        return () => {
          stops.delete(stop);
          stop();
        };
      },
      close: async () => {
        if (closed) return;
        closed = true;
        for (const stop of stops) stop();
        if (--shared.#views === 0) {
          owners.delete(key);
          let left = kept.get(owners);
          if (!left) kept.set(owners, (left = new Map()));
          // One id is left out: a resume from the last one handed out must not read the events of the
          // reopened log as if nothing had been missed in between.
          left.set(key, { next: shared.#next + 1, seen: shared.#seen });
          await shared.#stop();
        }
      },
    };
  }
}
