/**
 * A durable consumer of the event log: a part that must see every event of some subjects (the history
 * service records every reported value) follows them under a name of its own, and the log hands each
 * event on until the part says it is done with it. On NATS it is a durable JetStream consumer of the
 * event stream (`nats_durable_events.ts`): an event is acknowledged once the batch holding it was
 * handled, so one handled by a replica that died is delivered again, to whichever replica asks next, and
 * replicas of one part share the load. On the in-process bus it is a queue in the process
 * (`MemoryDurableEvents` below), handled in order, a failed batch tried again; a batch is handed over
 * once it is full or its oldest event has waited `gatherMs`.
 *
 * Either way an event may be delivered more than once (a replica that died after handling a batch, before
 * its acknowledgement arrived): handlers are idempotent.
 */
import type { Logger } from 'pino';

/** One event as a durable consumer receives it; `subject` as the publisher named it (without a bus prefix). */
export type DurableEvent = { subject: string; data: Uint8Array };

/** What a durable consumer follows, and who handles it. */
export type DurableEventsOptions = {
  /** The consumer's name, one subject token: replicas of one part share it. */
  name: string;
  /** The event subjects it follows (under `events.>`, wildcards allowed). */
  subjects: string[];
  /** The subject prefix the log lives under; a `PrefixedBus` passes its own. */
  prefix?: string;
  /** How long the log holds events at least: a consumer away for longer misses the older ones. */
  holdMs: number;
  /** The most events handed over at once. */
  maxBatch?: number;
  /** How long a failed batch waits before it is delivered again. */
  retryMs?: number;
  /**
   * In-process only: how long events may gather before a batch that is not full is handed over (50 ms
   * unless told): a busy consumer handles fewer, larger batches (a batch of history rows costs its
   * transaction and statements whatever its size), a quiet one an event within that moment. On NATS each
   * pull waits for its batch to fill in the same way.
   */
  gatherMs?: number;
  /**
   * In-process only: the most events waiting in memory (100,000 unless told). Past it the oldest waiting
   * event is dropped for each new one, as the NATS event stream drops its oldest past its limits, and a
   * warn line says how many were dropped (at most one line a second). On NATS the stream holds them.
   */
  maxQueued?: number;
  /** Handles a batch; resolving acknowledges every event of it, throwing has them delivered again. */
  handle(batch: DurableEvent[]): Promise<void>;
  log?: Logger;
};

/** A running durable consumer. */
export interface DurableEvents {
  /** Stops taking events; resolves once the batch in hand is handled (or given back). */
  stop(): Promise<void>;
}

/**
 * Holding back what feeds an in-process consumer (`Bus.ingestHold`): while a consumer whose handler
 * succeeds has a quarter of its `maxQueued` waiting, publishers that can wait (a device session, which
 * stops reading its socket, so the device keeps its reports in TCP's window and its own buffer) are asked
 * to, until it is down to a tenth. A consumer whose handler fails (its store away) holds nothing back: it
 * drops its oldest as before, and live values keep flowing.
 */
export function holdMarks(maxQueued: number): { from: number; until: number } {
  return { from: Math.max(1, Math.floor(maxQueued / 4)), until: Math.floor(maxQueued / 10) };
}

/** The most events an in-process durable consumer keeps waiting, unless its options say otherwise. */
export const defaultMaxQueued = 100_000;

/** How long an in-process durable consumer lets events gather into a batch, unless its options say otherwise. */
export const defaultGatherMs = 50;

/**
 * Events waiting in order, first out first: a taken or dropped event moves a start index on instead of
 * the array's other entries, so that a consumer whose queue is full (past `maxQueued`, each new event
 * dropping the oldest) costs a new event the same few operations as an empty queue does, not a move of
 * the 100,000 entries behind it.
 */
class Waiting {
  #events: DurableEvent[] = [];
  #head = 0;

  get length(): number {
    return this.#events.length - this.#head;
  }

  push(event: DurableEvent): void {
    this.#events.push(event);
  }

  /** Takes up to `max` of the oldest. */
  take(max: number): DurableEvent[] {
    const end = Math.min(this.#events.length, this.#head + max);
    const taken = this.#events.slice(this.#head, end);
    this.#head = end;
    this.#compact();
    return taken;
  }

  /** Drops the oldest. */
  dropOldest(): void {
    if (this.length === 0) return;
    this.#events[this.#head++] = undefined as unknown as DurableEvent;
    this.#compact();
  }

  /** Puts events back in front of the others (a batch to be tried again). */
  unshift(events: readonly DurableEvent[]): void {
    this.#events = [...events, ...this.#events.slice(this.#head)];
    this.#head = 0;
  }

  #compact(): void {
    if (this.#head === this.#events.length) {
      this.#events = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** The in-process durable consumer: the bus's events of the subjects, queued and handled in order. */
export class MemoryDurableEvents implements DurableEvents {
  readonly #options: DurableEventsOptions;
  /** Events not yet handed to the handler, oldest first. */
  readonly #waiting = new Waiting();
  readonly #unsubscribe: () => Promise<void>;
  readonly #maxQueued: number;
  /** Events handed to the handler and not yet done with (they count against `maxQueued` too). */
  #inHand = 0;
  #dropped = 0;
  #dropNoticeAt = 0;
  #pumping: Promise<void> | null = null;
  #stopped = false;
  #wake: (() => void) | null = null;
  /** When the oldest event not in the handler's hands began to wait. */
  #waitingSince = 0;
  /** Ends the gathering of a batch (the queue holds a whole batch, or the consumer stops). */
  #gathered: (() => void) | null = null;
  /** Where holding back begins and ends (`holdMarks`). */
  readonly #marks: { from: number; until: number };
  /** While publishers are asked to hold back: resolves once the queue is down to `#marks.until`. */
  #hold: { promise: Promise<void>; release: () => void } | undefined;
  /** The last batch handled failed: nothing is held back until one succeeds. */
  #failing = false;

  constructor(options: DurableEventsOptions, subscribe: (push: (event: DurableEvent) => void) => () => Promise<void>) {
    this.#options = options;
    this.#maxQueued = Math.max(options.maxQueued ?? defaultMaxQueued, (options.maxBatch ?? 500) + 1);
    this.#marks = holdMarks(this.#maxQueued);
    this.#unsubscribe = subscribe((event) => {
      if (this.#stopped) return;
      const queued = this.#waiting.length + this.#inHand;
      if (queued >= this.#maxQueued) this.#dropOldestWaiting();
      else if (queued >= this.#marks.from && this.#hold === undefined && !this.#failing) this.#startHold(queued);
      if (this.#waiting.length === 0) this.#waitingSince = performance.now();
      this.#waiting.push(event);
      if (this.#waiting.length >= (options.maxBatch ?? 500)) this.#gathered?.();
      this.#pumping ??= this.#pump().finally(() => {
        this.#pumping = null;
      });
    });
  }

  async #pump(): Promise<void> {
    const max = this.#options.maxBatch ?? 500;
    while (this.#waiting.length > 0) {
      await this.#gather(max);
      const batch = this.#waiting.take(max);
      this.#inHand = batch.length;
      try {
        await this.#options.handle(batch);
        this.#inHand = 0;
        this.#failing = false;
        if (this.#hold !== undefined && this.#waiting.length <= this.#marks.until) this.#endHold();
      } catch (err) {
        this.#inHand = 0;
        this.#waiting.unshift(batch);
        this.#failing = true;
        this.#endHold();
        this.#options.log?.warn({ err, events: batch.length }, 'handling events failed: they are tried again');
        if (this.#stopped || !(await this.#pause())) return;
      }
    }
  }

  /** Waits `retryMs` after a failed batch, or until the consumer stops; false when it stopped. */
  async #pause(): Promise<boolean> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.#options.retryMs ?? 1000);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = null;
    return !this.#stopped;
  }

  /** Waits until the queue holds a whole batch, its oldest event has waited `gatherMs`, or the consumer stops. */
  async #gather(max: number): Promise<void> {
    const leftMs = this.#waitingSince + (this.#options.gatherMs ?? defaultGatherMs) - performance.now();
    if (this.#waiting.length >= max || this.#stopped || leftMs <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#gathered?.(), leftMs);
      this.#gathered = () => {
        clearTimeout(timer);
        this.#gathered = null;
        resolve();
      };
    });
  }

  /**
   * While publishers are asked to hold back (see {@link holdMarks}): a promise that resolves once they may
   * go on; undefined when nothing is held back.
   */
  holding(): Promise<void> | undefined {
    return this.#hold?.promise;
  }

  #startHold(queued: number): void {
    let release = () => {};
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.#hold = { promise, release };
    this.#options.log?.info(
      { consumer: this.#options.name, queued, until: this.#marks.until },
      'a durable consumer has fallen behind: devices are read more slowly until it catches up',
    );
  }

  #endHold(): void {
    const hold = this.#hold;
    if (hold === undefined) return;
    this.#hold = undefined;
    hold.release();
  }

  /** Drops the oldest event not in the handler's hands, and says so at most once a second. */
  #dropOldestWaiting(): void {
    if (this.#waiting.length === 0) return;
    this.#waiting.dropOldest();
    this.#dropped++;
    const now = Date.now();
    if (now - this.#dropNoticeAt >= 1000) {
      this.#dropNoticeAt = now;
      this.#options.log?.warn(
        { consumer: this.#options.name, dropped: this.#dropped, maxQueued: this.#maxQueued },
        'events dropped: the in-process queue of a durable consumer is full (its handler has fallen behind or fails)',
      );
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#endHold();
    await this.#unsubscribe();
    this.#wake?.();
    this.#gathered?.();
    // What is queued is handled before the process lets go of its store.
    await this.#pumping;
  }
}
