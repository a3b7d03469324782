import { carryDecoded, copyBytes, deadlines } from '@scada/contracts';
import type { Logger } from 'pino';
import {
  BusError,
  type Bus,
  type BusHeaders,
  type BusMessage,
  type BusReply,
  type BusService,
  type BusSubscription,
  type EndpointSpec,
  type RequestOptions,
  type ServiceSpec,
} from './bus.ts';
import { MemoryDurableEvents, type DurableEvents, type DurableEventsOptions } from './durable_events.ts';
import { eventIdHeader, eventSubjects, MemoryEventLog, type EventLog, type EventLogOptions } from './event_log.ts';
import { MemorySpaceVersions, type SpaceVersions } from './space_versions.ts';
import { noSiteStreams, type SiteStreams } from './site_streams.ts';
import { failureReply, MicroDescriptor, replyHeaders, tooLargeInPlaceOf } from './micro.ts';
import { isValidPattern, isValidSubject, subjectMatches } from './subject.ts';

type Delivery = { subject: string; data: Uint8Array; headers: BusHeaders; reply?: (m: BusMessage) => void };
type Sub = { pattern: string; queue?: string; deliver: (d: Delivery) => void; closed: boolean };
/** The listeners of one subject: every plain subscriber, and the members of each queue group. */
type Route = { plain: Sub[]; groups: Sub[][] };

/** Subjects whose routes are remembered at most; events with ids in their subjects must not grow it forever. */
const maxRoutes = 4096;

const encoder = new TextEncoder();

/**
 * The most time one turn's hand-out of deliveries runs (the receivers' own synchronous work counted):
 * what is left waits for the next turn, before anything sent since. A device's burst of thousands of
 * values published in one turn otherwise held the main thread for all of their receivers' work at once
 * (the live channel's writes, the history's queue), 20–60 ms on a busy machine after the 8 ms of reading.
 */
export const handOutMs = 6;

/**
 * Deliveries waiting past which publishers are asked to hold back (`ingestHold`), and down to which the
 * hold lasts: a few dozen turns' worth, so that a device faster than the receivers waits in its own
 * buffer, not in this queue.
 */
export const waitingHoldMarks = { from: 20_000, until: 2000 };

/**
 * The in-process bus: a real message bus for one process, with the semantics of NATS. Deliveries are
 * asynchronous, payloads are copied (once a message, shared by its receivers), a queue group hands each
 * message to one member at random, a request nobody listens to fails at once with `no_responders`, and a
 * slow one with `timeout`.
 */
export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  readonly maxPayload: number;
  private subs: Sub[] = [];
  /** Who hears each subject, worked out once per subject and forgotten whenever a subscription comes or goes. */
  private readonly routes = new Map<string, Route>();
  private readonly services = new Set<BusService>();
  private closed = false;
  private readonly eventLogs = new Map<string, MemoryEventLog>();
  private readonly versions = new Map<string, SpaceVersions>();
  /** The durable consumers of this bus, which may ask publishers to hold back (`ingestHold`). */
  private readonly consumers = new Set<MemoryDurableEvents>();
  private readonly defaultTimeoutMs: number;
  private readonly waiters = new Waiters();
  private readonly log: Logger | undefined;

  constructor(options: { maxPayload?: number; defaultTimeoutMs?: number; log?: Logger } = {}) {
    this.maxPayload = options.maxPayload ?? 1024 * 1024;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? deadlines.standardMs;
    this.log = options.log;
  }

  isConnected(): boolean {
    return !this.closed;
  }

  async flush(): Promise<void> {
    if (this.closed) throw new BusError('closed', 'bus is closed');
  }

  publish(subject: string, data: Uint8Array, headers: BusHeaders = {}): void {
    this.check(subject, data);
    this.route({ subject, data, headers });
  }

  request(subject: string, data: Uint8Array, options: RequestOptions = {}): Promise<BusMessage> {
    try {
      this.check(subject, data);
    } catch (err) {
      return Promise.reject(err);
    }
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    return new Promise<BusMessage>((resolve, reject) => {
      const waiter = this.waiters.add(timeoutMs, () =>
        reject(new BusError('timeout', `request to ${subject} timed out after ${timeoutMs} ms`)),
      );
      const delivered = this.route({
        subject,
        data,
        headers: options.headers ?? {},
        reply: (m) => {
          if (waiter.settled) return;
          this.waiters.settle(waiter);
          resolve(m);
        },
      });
      if (!delivered) {
        this.waiters.settle(waiter);
        reject(new BusError('no_responders', `no responders for ${subject}`));
      }
    });
  }

  subscribe(subject: string, handler: (m: BusMessage) => void | Promise<void>, options: { queue?: string } = {}): BusSubscription {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    if (!isValidPattern(subject)) throw new BusError('invalid_subject', `invalid subject "${subject}"`);
    const sub: Sub = {
      pattern: subject,
      queue: options.queue,
      closed: false,
      deliver: (d) => {
        // A message sent before an unsubscribe that is still waiting for its turn is dropped, as the NATS
        // client drops what it holds for a subscription it ended: no handler runs after `unsubscribe()`.
        if (sub.closed) return;
        // A handler's failure is its own: logged, as the NATS bus logs it, never lost without a trace. Its
        // synchronous part runs here, inside the hand-out, so that the hand-out's time counts it.
        const failed = (error: unknown) => this.log?.error({ err: error, subject: d.subject }, 'event handler failed');
        try {
          const done = handler({ subject: d.subject, data: d.data, headers: d.headers });
          if (done !== undefined) done.catch(failed);
        } catch (error) {
          failed(error);
        }
      },
    };
    this.subs.push(sub);
    this.routes.clear();
    return { unsubscribe: async () => this.remove(sub) };
  }

  async addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService> {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    const micro = new MicroDescriptor(spec, endpoints);
    const inFlight = new Set<Promise<void>>();
    const own: Sub[] = [];
    endpoints.forEach((endpoint, index) => {
      const sub: Sub = {
        pattern: endpoint.subject,
        queue: spec.queue ?? 'q',
        closed: false,
        deliver: (d) => {
          const started = process.hrtime.bigint();
          const work = this.serveOne(endpoint, d).then((error) => {
            micro.record(index, Number(process.hrtime.bigint() - started), error);
          });
          inFlight.add(work);
          void work.finally(() => inFlight.delete(work));
        },
      };
      own.push(sub);
    });
    for (const { subject, verb } of micro.discoverySubjects()) {
      own.push({
        pattern: subject,
        closed: false,
        deliver: (d) => {
          const doc = verb === 'PING' ? micro.ping() : verb === 'INFO' ? micro.info() : micro.stats();
          d.reply?.({ subject: d.subject, data: encoder.encode(JSON.stringify(doc)), headers: {} });
        },
      });
    }
    this.subs.push(...own);
    this.routes.clear();
    const service: BusService = {
      id: micro.id,
      stop: async () => {
        for (const sub of own) this.remove(sub);
        this.services.delete(service);
        // Requests already routed here but still waiting for their turn are served before the stop ends,
        // as a drained NATS subscription serves what it received: the hand-out gets to them first.
        const mine = new Set(own);
        do await new Promise((resolve) => setImmediate(resolve));
        while (this.waiting.some((w) => w !== undefined && mine.has(w[0])));
        await Promise.allSettled([...inFlight]);
      },
    };
    this.services.add(service);
    return service;
  }

  async openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog> {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    const lead = options.prefix ? `${options.prefix}.` : '';
    return MemoryEventLog.open(this.eventLogs, lead, options, (push) => {
      const sub = this.subscribe(`${lead}${eventSubjects}`, (m) => push(m.subject.slice(lead.length), m.data, m.headers[eventIdHeader]));
      return () => sub.unsubscribe();
    });
  }

  async consumeEvents(options: DurableEventsOptions): Promise<DurableEvents> {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    const lead = options.prefix ? `${options.prefix}.` : '';
    const consumer = new MemoryDurableEvents(options, (push) => {
      const subs = options.subjects.map((s) =>
        this.subscribe(`${lead}${s}`, (m) => push({ subject: m.subject.slice(lead.length), data: m.data })),
      );
      return async () => {
        this.consumers.delete(consumer);
        await Promise.all(subs.map((sub) => sub.unsubscribe()));
      };
    });
    this.consumers.add(consumer);
    return consumer;
  }

  ingestHold(): Promise<void> | undefined {
    if (this.waitingHold !== undefined) return this.waitingHold.promise;
    if (this.waiting.length - this.waitingHead >= waitingHoldMarks.from) {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      this.waitingHold = { promise, release };
      return promise;
    }
    for (const consumer of this.consumers) {
      const hold = consumer.holding();
      if (hold !== undefined) return hold;
    }
    return undefined;
  }

  siteStreams(): SiteStreams {
    return noSiteStreams;
  }

  spaceVersions(prefix = ''): SpaceVersions {
    let versions = this.versions.get(prefix);
    if (!versions) this.versions.set(prefix, (versions = new MemorySpaceVersions(() => !this.closed)));
    return versions;
  }

  /** Stops the services (their requests in flight still get answered), then refuses everything. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.services].map((s) => s.stop()));
    this.closed = true;
    for (const sub of this.subs) sub.closed = true;
    this.subs = [];
    this.routes.clear();
    this.waitingHold?.release();
    this.waitingHold = undefined;
  }

  private async serveOne(endpoint: EndpointSpec, d: Delivery): Promise<string | undefined> {
    let reply: BusReply;
    try {
      reply = await endpoint.handler({ subject: d.subject, data: d.data, headers: d.headers });
    } catch (err) {
      reply = failureReply(err);
    }
    if (reply.data.byteLength > this.maxPayload) {
      // NATS would refuse to send it; the requester then times out. Say so instead, as a service error.
      reply = tooLargeInPlaceOf(reply);
    }
    d.reply?.({ subject: d.subject, data: new Uint8Array(reply.data), headers: replyHeaders(reply) });
    return reply.error?.description;
  }

  private check(subject: string, data: Uint8Array): void {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    if (!isValidSubject(subject)) throw new BusError('invalid_subject', `invalid subject "${subject}"`);
    if (data.byteLength > this.maxPayload) {
      throw new BusError('payload_too_large', `payload of ${data.byteLength} bytes exceeds ${this.maxPayload}`);
    }
  }

  /** Delivers to every plain subscriber and one member of each queue group; false when nobody got it. */
  private route(d: Delivery): boolean {
    const { plain, groups } = this.routeOf(d.subject);
    if (plain.length === 0 && groups.length === 0) return false;
    // One copy a message, taken when it is sent (the sender may reuse its buffer, as with NATS), and
    // shared by its receivers, which read it and never write into it: a value event heard by the history,
    // the live channel and the alarms costs one copy, not one each.
    // Small ones share blocks (`copyBytes`): at thousands of events a second, few buffers for the collector.
    const copy: Delivery = { ...d, data: copyBytes(d.data), headers: { ...d.headers } };
    // An event's body its publisher already read and checked serves its receivers too (`decodeEvent`).
    carryDecoded(d.data, copy.data);
    for (const sub of plain) this.later(sub, copy);
    for (const members of groups) this.later(members[Math.floor(Math.random() * members.length)]!, copy);
    return true;
  }

  /**
   * Deliveries waiting for a turn, in the order they were sent, from `waitingHead` on (those before it
   * were handed out and let go). A hand-out that stops early moves the head, not the rest of the queue;
   * the array is cut now and then, not on every turn.
   */
  private waiting: ([Sub, Delivery] | undefined)[] = [];
  private waitingHead = 0;
  /** Whether a hand-out is scheduled. */
  private handing = false;
  /** While publishers are asked to hold back because too many deliveries wait ({@link waitingHoldMarks}). */
  private waitingHold: { promise: Promise<void>; release: () => void } | undefined;

  /**
   * Delivers after the current turn, as a message from the network would arrive: the deliveries sent in
   * one turn wait in one queue, handed out by one `setImmediate` (not one each), in the order they were
   * sent; those sent while it hands them out wait for the next turn. A hand-out runs for {@link handOutMs}
   * at most (one delivery at least); the rest goes first the turn after.
   */
  private later(sub: Sub, d: Delivery): void {
    this.waiting.push([sub, d]);
    if (!this.handing) {
      this.handing = true;
      setImmediate(this.handOut);
    }
  }

  private readonly handOut = (): void => {
    this.handing = false;
    const queue = this.waiting;
    const first = this.waitingHead;
    // Those sent while this hand-out runs wait for the next one.
    const end = queue.length;
    const ends = performance.now() + handOutMs;
    let i = first;
    for (; i < end; i++) {
      if (i > first && performance.now() >= ends) break;
      const [sub, d] = queue[i]!;
      queue[i] = undefined;
      try {
        sub.deliver(d);
      } catch (err) {
        // a receiver that throws does not keep the others of the turn from theirs; the error still
        // surfaces, as it did when each delivery had a turn of its own
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    this.waitingHead = i;
    if (i === queue.length) {
      this.waiting = [];
      this.waitingHead = 0;
    } else if (i > 1024 && i * 2 > queue.length) {
      this.waiting = queue.slice(i);
      this.waitingHead = 0;
    }
    const left = this.waiting.length - this.waitingHead;
    if (left > 0 && !this.handing) {
      this.handing = true;
      setImmediate(this.handOut);
    }
    if (this.waitingHold !== undefined && left <= waitingHoldMarks.until) {
      const hold = this.waitingHold;
      this.waitingHold = undefined;
      hold.release();
    }
  };

  private routeOf(subject: string): Route {
    let route = this.routes.get(subject);
    if (route) return route;
    const plain: Sub[] = [];
    const groups = new Map<string, Sub[]>();
    for (const sub of this.subs) {
      if (sub.closed || !subjectMatches(sub.pattern, subject)) continue;
      if (sub.queue) {
        const members = groups.get(sub.queue) ?? [];
        members.push(sub);
        groups.set(sub.queue, members);
      } else plain.push(sub);
    }
    route = { plain, groups: [...groups.values()] };
    if (this.routes.size >= maxRoutes) this.routes.clear();
    this.routes.set(subject, route);
    return route;
  }

  private remove(sub: Sub): void {
    sub.closed = true;
    this.subs = this.subs.filter((s) => s !== sub);
    this.routes.clear();
  }
}

/** A request waiting for its reply: `expire` is called once its time is up, unless it was settled first. */
type Waiter = { lane: Lane; deadline: number; settled: boolean; expire: () => void };
/** The requests given one same time, oldest first (so in the order of their deadlines), under one timer. */
type Lane = { timeoutMs: number; waiters: Waiter[]; head: number; timer: ReturnType<typeof setTimeout> | undefined };

/**
 * The timeouts of the requests in flight. A timer per request (set, then cleared by the reply) cost Deno
 * several times what it costs Node, in the timer itself and in what its garbage collection then had to
 * scan (bench/README.md, "Deno beside Node"); here the requests given the same time wait in one queue in
 * the order of their deadlines, under one timer set for the oldest, so a request costs an array entry
 * and its reply a flag. A request expires at its deadline as it did under its own timer; the timer is
 * cleared once nothing waits, so no idle process is kept alive by it.
 */
class Waiters {
  readonly #lanes = new Map<number, Lane>();

  add(timeoutMs: number, expire: () => void): Waiter {
    let lane = this.#lanes.get(timeoutMs);
    if (!lane) {
      lane = { timeoutMs, waiters: [], head: 0, timer: undefined };
      this.#lanes.set(timeoutMs, lane);
    }
    const waiter: Waiter = { lane, deadline: performance.now() + timeoutMs, settled: false, expire };
    lane.waiters.push(waiter);
    if (lane.timer === undefined) this.#arm(lane, timeoutMs);
    return waiter;
  }

  /** The request was answered (or failed otherwise): it no longer expires. */
  settle(waiter: Waiter): void {
    waiter.settled = true;
    this.#trim(waiter.lane);
  }

  #arm(lane: Lane, ms: number): void {
    lane.timer = setTimeout(() => this.#expire(lane), Math.max(0, Math.ceil(ms)));
  }

  #expire(lane: Lane): void {
    lane.timer = undefined;
    const now = performance.now();
    while (lane.head < lane.waiters.length) {
      const waiter = lane.waiters[lane.head] as Waiter;
      if (!waiter.settled && waiter.deadline > now) break;
      lane.head++;
      if (waiter.settled) continue;
      waiter.settled = true;
      waiter.expire();
    }
    this.#trim(lane);
    const next = lane.waiters[lane.head];
    if (next && lane.timer === undefined) this.#arm(lane, next.deadline - now);
  }

  /** Drops the answered requests at the front; a lane nobody waits in goes, with its timer. */
  #trim(lane: Lane): void {
    while (lane.head < lane.waiters.length && (lane.waiters[lane.head] as Waiter).settled) lane.head++;
    if (lane.head === lane.waiters.length) {
      clearTimeout(lane.timer);
      lane.timer = undefined;
      lane.waiters = [];
      lane.head = 0;
      if (this.#lanes.get(lane.timeoutMs) === lane) this.#lanes.delete(lane.timeoutMs);
    } else if (lane.head >= 1024 && lane.head * 2 >= lane.waiters.length) {
      lane.waiters = lane.waiters.slice(lane.head);
      lane.head = 0;
    }
  }
}
