import { deadlines } from '@scada/contracts';
import { readFileSync } from 'node:fs';
import {
  createInbox,
  credsAuthenticator,
  ClosedConnectionError,
  DrainingConnectionError,
  InvalidSubjectError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import {
  BusError,
  type Bus,
  type BusHeaders,
  type BusMessage,
  type BusService,
  type BusSubscription,
  type EndpointSpec,
  type EventHandler,
  type RequestOptions,
  type ServiceSpec,
} from './bus.ts';
import type { EventLog, EventLogOptions } from './event_log.ts';
import { openNatsEventLog } from './nats_event_log.ts';
import { openNatsDurableEvents } from './nats_durable_events.ts';
import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import { NatsSpaceVersions } from './nats_space_versions.ts';
import type { SpaceVersions } from './space_versions.ts';
import { natsSiteStreams, type SiteStreams } from './site_streams.ts';
import { addNatsService, isPayloadError, toBusMessage, toNatsHeaders } from './nats_service.ts';
import { isValidPattern, isValidSubject } from './subject.ts';
import { writeOncePerTurn } from './nats_writes.ts';
import type { NatsAuth } from '../config.ts';

/** How to reach NATS. `servers` may list several URLs, comma-separated. */
export type NatsBusOptions = {
  servers: string;
  /** The connection's name, as the server's monitoring shows it. */
  name: string;
  defaultTimeoutMs?: number;
  log?: Logger;
  /** Credentials and TLS; none for a server that asks for neither. */
  auth?: NatsAuth;
  /** Where replies to this connection's requests go (`busInboxPrefix` of its role); NATS's `_INBOX` when absent. */
  inboxPrefix?: string;
};

/** The client's options for the credentials and TLS of a connection. */
function connectAuth(auth: NatsAuth): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Read again on every connect, so a rotated credentials file (a remounted Secret) is used at the next one.
  if (auth.credsFile) out.authenticator = credsAuthenticator(() => readFileSync(auth.credsFile as string));
  if (auth.user !== undefined) Object.assign(out, { user: auth.user, pass: auth.password });
  if (auth.token !== undefined) out.token = auth.token;
  if (auth.tls) out.tls = { caFile: auth.tls.caFile, certFile: auth.tls.certFile, keyFile: auth.tls.keyFile };
  return out;
}

/** What a server announces when it does not say: the NATS default. */
const defaultMaxPayload = 1024 * 1024;

/**
 * The bus over NATS. Reconnects forever, and waits for a server that is not up yet, so a service started
 * before NATS works once NATS appears. While disconnected, requests fail at once with `disconnected`
 * rather than wait for a timeout; publications are buffered by the client until it reconnects.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly nc: NatsConnection;
  private readonly defaultTimeoutMs: number;
  private readonly log: Logger | undefined;
  private readonly services = new Set<BusService>();
  private readonly deliveries = new Set<Promise<void>>();
  private readonly onLost = new Set<() => void>();
  private readonly versions = new Map<string, NatsSpaceVersions>();
  private readonly replies: Replies;
  private connected = true;
  private lastMaxPayload: number;
  private closing: Promise<void> | undefined;

  /** Connects, retrying until a server answers. */
  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const servers = options.servers
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    options.log?.info({ servers }, 'connecting to NATS');
    const nc = await connect({
      servers,
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
      // The client otherwise builds two errors with stack traces for every request, in case it times out
      // (a tenth of the gateway's CPU on an echo); our failures are named by type (`toBusError`), not traced.
      noAsyncTraces: true,
      ...connectAuth(options.auth ?? {}),
      ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
    });
    writeOncePerTurn(nc);
    options.log?.info({ server: nc.getServer() }, 'connected to NATS');
    return new NatsBus(nc, options);
  }

  private constructor(nc: NatsConnection, options: NatsBusOptions) {
    this.nc = nc;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? deadlines.standardMs;
    this.log = options.log;
    this.lastMaxPayload = nc.info?.max_payload ?? defaultMaxPayload;
    this.replies = new Replies(nc, options.inboxPrefix);
    void this.watch();
  }

  /** The server's max_payload; the last one known while disconnected. */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? this.lastMaxPayload;
  }

  isConnected(): boolean {
    return this.connected && !this.nc.isClosed() && !this.nc.isDraining();
  }

  async flush(): Promise<void> {
    if (this.nc.isClosed()) throw new BusError('closed', 'bus is closed');
    try {
      await this.nc.flush();
    } catch (err) {
      throw this.toBusError(err, 'flush');
    }
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions = {}): Promise<BusMessage> {
    this.check(subject, data);
    if (!this.connected) throw new BusError('disconnected', `bus is disconnected; request to ${subject} not sent`);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    try {
      const msg = await this.replies.request(subject, data, toNatsHeaders(options.headers), Math.max(1, timeoutMs));
      // The reply arrives on an inbox subject nobody needs; name it by the request, as the memory bus does.
      return toBusMessage(msg, subject);
    } catch (err) {
      throw this.toBusError(err, `request to ${subject}`, timeoutMs);
    }
  }

  publish(subject: string, data: Uint8Array, headers: BusHeaders = {}): void {
    this.check(subject, data);
    try {
      this.nc.publish(subject, data, { headers: toNatsHeaders(headers) });
    } catch (err) {
      throw this.toBusError(err, `publish to ${subject}`);
    }
  }

  subscribe(subject: string, handler: EventHandler, options: { queue?: string } = {}): BusSubscription {
    if (this.nc.isClosed() || this.nc.isDraining()) throw new BusError('closed', 'bus is closed');
    if (!isValidPattern(subject)) throw new BusError('invalid_subject', `invalid subject "${subject}"`);
    const own = new Set<Promise<void>>();
    const sub = this.nc.subscribe(subject, {
      queue: options.queue,
      callback: (err, msg) => {
        if (err) {
          this.log?.warn({ err, subject }, 'subscription failed');
          return;
        }
        // A handler's failure is its own: logged, never thrown into the client's read loop.
        const work = Promise.resolve()
          .then(() => handler(toBusMessage(msg)))
          .catch((error: unknown) => this.log?.error({ err: error, subject: msg.subject }, 'event handler failed'));
        for (const set of [own, this.deliveries]) {
          set.add(work);
          void work.finally(() => set.delete(work));
        }
      },
    });
    return {
      unsubscribe: async () => {
        if (!sub.isClosed() && !this.nc.isClosed()) await sub.drain().catch(() => {});
        await Promise.allSettled([...own]);
      },
    };
  }

  async addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService> {
    if (this.nc.isClosed() || this.nc.isDraining()) throw new BusError('closed', 'bus is closed');
    const registered = await addNatsService(this.nc, spec, endpoints, this.log);
    const service: BusService = {
      id: registered.id,
      stop: async () => {
        this.services.delete(service);
        await registered.stop();
      },
    };
    this.services.add(service);
    return service;
  }

  openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog> {
    return openNatsEventLog(this.nc, { ...options, prefix: options.prefix ?? '', log: this.log });
  }

  /** Never: the event stream holds what a durable consumer has not taken yet (within its limits). */
  ingestHold(): undefined {
    return undefined;
  }

  consumeEvents(options: DurableEventsOptions): Promise<DurableEvents> {
    return openNatsDurableEvents(this.nc, { ...options, log: options.log ?? this.log });
  }

  siteStreams(prefix = ''): SiteStreams {
    return natsSiteStreams(this.nc, prefix);
  }

  spaceVersions(prefix = ''): SpaceVersions {
    let versions = this.versions.get(prefix);
    if (!versions)
      this.versions.set(prefix, (versions = new NatsSpaceVersions(this.nc, { prefix, log: this.log, request: this.#kvRequest })));
    return versions;
  }

  /** A put of the space versions, on the connection's reply inbox; the connection's state checked as a request's. */
  readonly #kvRequest = (subject: string, data: Uint8Array, timeoutMs: number): Promise<Msg> => {
    if (this.nc.isClosed() || this.nc.isDraining()) return Promise.reject(new ClosedConnectionError());
    return this.replies.request(subject, data, undefined, timeoutMs);
  };

  /** Stops the services (their requests in flight still get answered), drains and closes the connection. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    await Promise.allSettled([...this.services].map((s) => s.stop()));
    await Promise.allSettled([...this.versions.values()].map((v) => v.close()));
    if (!this.nc.isClosed() && !this.nc.isDraining()) {
      // A drain needs the server to answer; while disconnected it cannot finish, so it gives way to close().
      await Promise.race([this.nc.drain(), this.lost()]).catch((err: unknown) =>
        this.log?.warn({ err }, 'draining the NATS connection failed'),
      );
    }
    if (!this.nc.isClosed()) await this.nc.close();
    await Promise.allSettled([...this.deliveries]);
  }

  /** Resolves once the connection is lost (at once when it is). */
  private lost(): Promise<void> {
    if (!this.connected) return Promise.resolve();
    return new Promise((resolve) => this.onLost.add(resolve));
  }

  /** Follows the connection's status, so `isConnected()` tells the truth between reconnects. */
  private async watch(): Promise<void> {
    void this.nc.closed().then((err) => {
      this.setLost();
      this.replies.close();
      if (err) this.log?.error({ err }, 'NATS connection closed on error');
    });
    for await (const s of this.nc.status()) {
      switch (s.type) {
        case 'disconnect':
          this.setLost();
          this.log?.warn({ server: s.server }, 'disconnected from NATS; reconnecting');
          break;
        case 'reconnect':
          this.connected = true;
          this.lastMaxPayload = this.nc.info?.max_payload ?? this.lastMaxPayload;
          this.log?.info({ server: s.server }, 'reconnected to NATS');
          break;
        case 'error':
          this.log?.error({ err: s.error }, 'NATS server error');
          if (s.error instanceof PermissionViolationError) this.replies.refused(s.error);
          break;
        case 'close':
          this.setLost();
          break;
      }
    }
  }

  private setLost(): void {
    this.connected = false;
    for (const resolve of this.onLost) resolve();
    this.onLost.clear();
  }

  private check(subject: string, data: Uint8Array): void {
    if (this.nc.isClosed() || this.nc.isDraining()) throw new BusError('closed', 'bus is closed');
    if (!isValidSubject(subject)) throw new BusError('invalid_subject', `invalid subject "${subject}"`);
    if (data.byteLength > this.maxPayload) {
      throw new BusError('payload_too_large', `payload of ${data.byteLength} bytes exceeds ${this.maxPayload}`);
    }
  }

  /** Names a client failure with the bus's codes; the client's own error stays as the cause. */
  private toBusError(err: unknown, what: string, timeoutMs?: number): BusError {
    const chain = causes(err);
    const is = (type: new (...args: never[]) => Error) => chain.some((e) => e instanceof type);
    if (is(NoRespondersError) || chain.some((e) => e instanceof RequestError && e.isNoResponders())) {
      return new BusError('no_responders', `${what}: no responders`, { cause: err });
    }
    if (is(TimeoutError)) return new BusError('timeout', `${what} timed out after ${timeoutMs} ms`, { cause: err });
    if (is(InvalidSubjectError)) return new BusError('invalid_subject', `${what}: invalid subject`, { cause: err });
    if (chain.some(isPayloadError))
      return new BusError('payload_too_large', `${what}: message exceeds ${this.maxPayload} bytes`, { cause: err });
    if (is(ClosedConnectionError) || is(DrainingConnectionError) || this.nc.isClosed()) {
      return new BusError('closed', `${what}: bus is closed`, { cause: err });
    }
    return new BusError('disconnected', `${what} failed: ${(err as Error).message}`, { cause: err });
  }
}

/** An error and its causes, outermost first. */
function causes(err: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = err; e instanceof Error && chain.length < 8; e = e.cause) chain.push(e);
  return chain;
}

/** A request waiting for its reply. */
type Waiting = {
  subject: string;
  resolve: (msg: Msg) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
};

/**
 * The requests of one connection, answered on one inbox subscription (`<inbox prefix>.<unique>.*`, one
 * reply subject a request), as the NATS client's own request multiplexing does, without what that costs
 * each request: the client races a timer promise against the reply's and then rejects the settled one
 * with a fresh "cancelled" error (an `Error` with a stack for every request that succeeds), and builds a
 * random token, two promises and three closures. Here a request is one map entry, one promise and one
 * timer. A reply with the no-responders status (503, empty) fails the request as the client's would; a
 * request past its time fails with the client's `TimeoutError`, one refused by the server's permissions
 * with its `PermissionViolationError`, and every waiting one with `ClosedConnectionError` when the
 * connection closes.
 */
class Replies {
  readonly #nc: NatsConnection;
  readonly #prefix: string | undefined;
  readonly #waiting = new Map<string, Waiting>();
  #subscription: Subscription | undefined;
  #base = '';
  #next = 0;

  constructor(nc: NatsConnection, prefix: string | undefined) {
    this.#nc = nc;
    this.#prefix = prefix;
  }

  request(subject: string, data: Uint8Array, headers: ReturnType<typeof toNatsHeaders>, timeoutMs: number): Promise<Msg> {
    if (this.#subscription === undefined || this.#subscription.isClosed()) this.#subscribe();
    const token = (this.#next++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const waiting: Waiting = { subject, resolve, reject, timer: setTimeout(this.#expire, timeoutMs, token) };
      this.#waiting.set(token, waiting);
      try {
        this.#nc.publish(subject, data, { reply: this.#base + token, headers });
      } catch (err) {
        this.#settle(token);
        reject(err as Error);
      }
    });
  }

  /** A permission the server refused: the request it concerns fails (every one, for the inbox itself). */
  refused(err: PermissionViolationError): void {
    if (err.operation === 'subscription' && err.subject === `${this.#base}*`) {
      this.#subscription = undefined;
      for (const token of [...this.#waiting.keys()]) this.#settle(token)?.reject(err);
      return;
    }
    if (err.operation !== 'publish') return;
    for (const [token, waiting] of this.#waiting) if (waiting.subject === err.subject) return void this.#settle(token)?.reject(err);
  }

  /** The connection closed: nothing waiting will be answered. */
  close(): void {
    for (const token of [...this.#waiting.keys()]) this.#settle(token)?.reject(new ClosedConnectionError());
  }

  #subscribe(): void {
    this.#base = `${createInbox(this.#prefix)}.`;
    this.#subscription = this.#nc.subscribe(`${this.#base}*`, { callback: this.#receive });
  }

  readonly #receive = (err: Error | null, msg: Msg): void => {
    if (err) {
      // The subscription failed (refused by permissions, say): every waiting request with it; the next
      // request subscribes again.
      this.#subscription = undefined;
      for (const token of [...this.#waiting.keys()]) this.#settle(token)?.reject(err);
      return;
    }
    const waiting = this.#settle(msg.subject.slice(this.#base.length));
    if (!waiting) return;
    if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(new NoRespondersError(waiting.subject));
    else waiting.resolve(msg);
  };

  readonly #expire = (token: string): void => {
    this.#settle(token)?.reject(new TimeoutError());
  };

  #settle(token: string): Waiting | undefined {
    const waiting = this.#waiting.get(token);
    if (waiting === undefined) return undefined;
    this.#waiting.delete(token);
    clearTimeout(waiting.timer);
    return waiting;
  }
}
