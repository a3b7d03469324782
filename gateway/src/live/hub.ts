/**
 * The live hub of one gateway replica: while a stream is open it follows the bus's event log, turns each
 * event into SSE frames once and hands them to the open streams of its space; it ends a stream when its
 * session may no longer see it (`access.ts`: logout, revocation, expiry, a disabled or deleted user, a role
 * or space taken away, an address the IP filter denies), writes a comment line to every stream each
 * heartbeat, and ends them all with a last `event: end` when the gateway stops.
 */
import { authEvents } from '@scada/contracts';
import { subscribeEvent, type Bus, type BusSubscription, type EventLog, type LoggedEvent } from '@scada/platform';
import type { Logger } from 'pino';
import type { AuthView } from '../auth/auth_view.ts';
import { StreamAccess } from './access.ts';
import { LiveClient, type EndReason } from './client.ts';
import type { LiveMetrics } from './metrics.ts';
import { liveMessage } from './messages.ts';

/** The live channel's settings. */
export type LiveSettings = {
  /** Unsent bytes a client may have before it is dropped. */
  clientBufferBytes: number;
  /** Open streams one user may have on this replica. */
  streamsPerUser: number;
  /** The longest a stream stays silent: a comment line is written at this interval. */
  heartbeatMs: number;
  /** How long the event log holds events, so a reconnect within it resumes without a gap. */
  retentionMs: number;
  /** How often every stream's session and user are checked again, whatever events said (a lost one). */
  accessCheckMs: number;
};

/** The defaults the contract names. */
export const defaultLiveSettings: LiveSettings = {
  clientBufferBytes: 1024 * 1024,
  streamsPerUser: 10,
  heartbeatMs: 15_000,
  retentionMs: 120_000,
  accessCheckMs: 10_000,
};

const heartbeat = Buffer.from(':\n\n');

export class LiveHub {
  readonly settings: LiveSettings;
  readonly #deps: { bus: Bus; auth: AuthView; log: Logger; metrics: LiveMetrics; busTimeoutMs: number };
  readonly #bySpace = new Map<string, Set<LiveClient>>();
  readonly #perUser = new Map<string, number>();
  readonly #subscriptions: BusSubscription[] = [];
  readonly #access: StreamAccess;
  #log: EventLog | null = null;
  #opening: Promise<EventLog> | null = null;
  #stopListening: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  /** Closes the log once no stream has been open for the retention time. */
  #idle: NodeJS.Timeout | null = null;
  /** Streams being opened that hold the log (`holdLog`). */
  #holds = 0;
  /** The log could be opened once: the live route serves. */
  #ready = false;
  /** A stream was open on this replica since it started. */
  #served = false;
  #stopped = false;

  constructor(deps: { bus: Bus; auth: AuthView; log: Logger; metrics: LiveMetrics; busTimeoutMs: number }, settings: LiveSettings) {
    this.#deps = deps;
    this.settings = settings;
    this.#access = new StreamAccess(deps, settings.accessCheckMs, () => this.#clients());
  }

  /** The event log while the hub follows it; null while no stream needs it, and before it could be opened. */
  get log(): EventLog | null {
    return this.#log;
  }

  /** True once the event log could be opened: the live route serves, opening the log again when a stream needs it. */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * Follows the auth events and starts the heartbeat and the access checks, then opens the event log once,
   * which makes the stream hold events for the retention time. A log that cannot be opened (JetStream not
   * answering yet) is tried again in the background: until then the live route answers 503, and the rest of
   * the gateway serves as usual. With no stream open, the log is closed again at once.
   */
  async start(): Promise<void> {
    const { bus, log } = this.#deps;
    this.#subscriptions.push(
      subscribeEvent(bus, authEvents.sessionRevoked, (e) => (e.sid === undefined ? undefined : this.#endSession(e.sid)), log),
      subscribeEvent(bus, authEvents.user, (e) => void this.#access.recheck((c) => c.userId === e.id), log),
      subscribeEvent(bus, authEvents.space, (e) => void this.#access.recheck((c) => c.filter.space === e.id), log),
    );
    this.#timer = setInterval(() => this.#beat(), this.settings.heartbeatMs);
    this.#timer.unref();
    this.#access.start();
    await this.#firstOpen();
  }

  async #firstOpen(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#follow();
      this.#ready = true;
      this.#settle();
    } catch (err) {
      this.#deps.log.warn({ err }, 'the event log could not be opened; the live channel tries again in 2 s');
      this.#retry = setTimeout(() => void this.#firstOpen(), 2000);
      this.#retry.unref();
    }
  }

  /**
   * Follows the event log, opening it when it is closed. Every event costs a follower its delivery and
   * its place in the held window, so a gateway follows the log only while a stream is open (and for the
   * retention time after the last one ended); a stream that opens reads what it needs from the log,
   * which on NATS holds the events whoever follows it.
   */
  #follow(): Promise<EventLog> {
    if (this.#log) return Promise.resolve(this.#log);
    this.#opening ??= this.#deps.bus
      .openEventLog({ maxAgeMs: this.settings.retentionMs })
      .then(async (log) => {
        if (this.#stopped) {
          await log.close();
          throw new Error('the live hub stopped');
        }
        this.#log = log;
        this.#stopListening = log.listen((event) => this.#dispatch(event));
        return log;
      })
      .finally(() => {
        this.#opening = null;
      });
    return this.#opening;
  }

  /**
   * The event log for a stream about to open, opened when the hub does not follow it now; null while it
   * cannot be opened (the route answers 503). It stays open until `release` is called: call it once the
   * stream is registered (`add`), or given up.
   */
  async holdLog(): Promise<{ log: EventLog; release: () => void } | null> {
    if (!this.#ready || this.#stopped) return null;
    this.#holds++;
    this.#cancelIdle();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.#settle();
    };
    try {
      return { log: await this.#follow(), release };
    } catch (err) {
      release();
      this.#deps.log.warn({ err }, 'the event log could not be opened for a live stream; the live channel tries again in 2 s');
      // Not ready until the log opens again: HEAD answers as a GET would, 503, meanwhile.
      if (this.#ready && !this.#stopped) {
        this.#ready = false;
        this.#retry = setTimeout(() => void this.#firstOpen(), 2000);
        this.#retry.unref();
      }
      return null;
    }
  }

  /**
   * With no stream open and none opening, the log is closed: at once when no stream was ever open on
   * this replica (nobody can resume from it), else after the retention time, so a client that
   * reconnects within it resumes on any bus (the in-process log holds only what it heard while open).
   */
  #settle(): void {
    if (this.#bySpace.size > 0 || this.#holds > 0 || !this.#log || this.#idle || this.#stopped) return;
    const close = () => {
      this.#idle = null;
      if (this.#bySpace.size > 0 || this.#holds > 0 || this.#stopped) return;
      const log = this.#log;
      this.#log = null;
      this.#stopListening?.();
      this.#stopListening = null;
      void log?.close().catch((err: unknown) => this.#deps.log.warn({ err }, 'closing the event log failed'));
    };
    if (!this.#served) return close();
    this.#idle = setTimeout(close, this.settings.retentionMs);
    this.#idle.unref();
  }

  #cancelIdle(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
  }

  #dispatch(event: LoggedEvent): void {
    // With no stream open on this replica nobody gets it: not decoded (its body checked against its schema)
    // for nothing, as every change of the configuration was. A stream that opens later reads what it
    // missed from the log itself.
    if (this.#bySpace.size === 0) return;
    const message = liveMessage(event);
    if (!message) return;
    let sent = 0;
    for (const client of this.#bySpace.get(message.space) ?? []) {
      try {
        sent += client.deliver(message);
      } catch (err) {
        // One client's failure is its own: it is dropped, and the others still get the event.
        this.#deps.log.warn({ err }, 'a live stream failed; dropping it');
        client.fail();
      }
    }
    if (sent) this.#deps.metrics.sent(sent);
  }

  /** Ends every stream with a last event, so clients reconnect through another replica at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#retry) clearTimeout(this.#retry);
    this.#cancelIdle();
    this.#access.stop();
    for (const client of this.#clients()) client.end('shutdown');
    this.#stopListening?.();
    await Promise.all(this.#subscriptions.splice(0).map((s) => s.unsubscribe()));
    await this.#opening?.catch(() => undefined);
    await this.#log?.close();
    this.#log = null;
  }

  /** Open streams of a user on this replica. */
  streamsOf(userId: string): number {
    return this.#perUser.get(userId) ?? 0;
  }

  /** Registers a new stream; it collects events from now on, to be written once it opens. */
  add(options: Omit<ConstructorParameters<typeof LiveClient>[0], 'bufferBytes' | 'onEnd'>): LiveClient {
    const client = new LiveClient({
      ...options,
      bufferBytes: this.settings.clientBufferBytes,
      onEnd: (c, reason) => this.#remove(c, reason),
    });
    let set = this.#bySpace.get(client.filter.space);
    if (!set) this.#bySpace.set(client.filter.space, (set = new Set()));
    set.add(client);
    this.#served = true;
    this.#cancelIdle();
    this.#perUser.set(client.userId, this.streamsOf(client.userId) + 1);
    this.#deps.metrics.opened();
    // A stream that comes while the hub stops (its stop waits on the bus) would be left open by it, and
    // would hold the gateway's shutdown for the grace time: it ends at once.
    if (this.#stopped) client.end('shutdown');
    return client;
  }

  /** Counts events written outside the hub's own fan-out (openings). */
  sent(count: number): void {
    if (count) this.#deps.metrics.sent(count);
  }

  #remove(client: LiveClient, reason: EndReason): void {
    const set = this.#bySpace.get(client.filter.space);
    if (!set?.delete(client)) return;
    if (set.size === 0) this.#bySpace.delete(client.filter.space);
    const left = this.streamsOf(client.userId) - 1;
    if (left > 0) this.#perUser.set(client.userId, left);
    else this.#perUser.delete(client.userId);
    this.#deps.metrics.closed(reason);
    this.#settle();
  }

  *#clients(): Iterable<LiveClient> {
    for (const set of [...this.#bySpace.values()]) yield* [...set];
  }

  #endSession(sid: string): void {
    for (const client of this.#clients()) if (client.sid === sid) client.end('session_ended');
  }

  /** The heartbeat: a comment line to every live stream. */
  #beat(): void {
    for (const client of this.#clients()) if (client.opened) client.write(heartbeat);
  }
}
