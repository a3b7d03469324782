/**
 * Versions of spaces on NATS: a JetStream key-value bucket with one key per space that ever changed. A
 * bump is an acknowledged put (the service answers its write after the server stored it); a follower
 * watches the bucket for updates and stamps each space it hears of. The bucket keeps one value per key
 * for a day: followers only need to hear changes, never read old ones.
 */
import { Buffer } from 'node:buffer';
import { setImmediate } from 'node:timers';
import { NoRespondersError, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { StorageType } from '@nats-io/jetstream';
import { KvWatchInclude, Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { atTurnWrite } from './nats_writes.ts';
import { prefixToken } from './subject.ts';
import { StampBook, type SpaceStamp, type SpaceVersions } from './space_versions.ts';

/** The bucket's name: `space_versions`, or `space_versions_<prefix>` for a bus under a subject prefix (`prefixToken`: one name per prefix). */
export function spaceVersionsBucket(prefix: string): string {
  return prefix ? `space_versions_${prefixToken(prefix)}` : 'space_versions';
}

/** How long a bump may take before the write is answered without it (the cache's age bound still holds). */
const bumpTimeoutMs = 1000;
/** How long a key is kept after its last change. */
const keyTtlMs = 24 * 3600 * 1000;
/** How long a follower waits before watching again after its watch ended. */
const rewatchMs = 1000;

/** The puts of one space: the one on its way, and the one that waits for it. */
type BumpLine = { running?: Promise<void>; queued?: Promise<void> };

/**
 * A request on the connection, answered on its bus's reply inbox (`NatsBus`'s `Replies`): a no-responders
 * reply fails it with the client's `NoRespondersError`, one past its time with `TimeoutError`.
 */
export type KvRequest = (subject: string, data: Uint8Array, timeoutMs: number) => Promise<Msg>;

const empty = new Uint8Array();
const ackDecoder = new TextDecoder();

/** A put the stream refused (its acknowledgement names an error): the write is answered without it. */
export class BumpRefusedError extends Error {
  override name = 'BumpRefusedError';
}

const ignore = () => {};

/** Keys are the space's UTF-8 bytes in base64url: any space, and only characters a key may hold. */
function keyOf(space: string): string {
  return Buffer.from(space, 'utf8').toString('base64url');
}

function spaceOfKey(key: string): string {
  return Buffer.from(key, 'base64url').toString('utf8');
}

export class NatsSpaceVersions implements SpaceVersions {
  readonly #nc: NatsConnection;
  readonly #request: KvRequest | undefined;
  readonly #bucketName: string;
  /** The subject a put of a key goes to, before the key: what the key-value client puts to for a bucket opened by name. */
  readonly #putPrefix: string;
  readonly #log: Logger | undefined;
  readonly #book = new StampBook();
  #bucket: Promise<KV> | undefined;
  #writer: Promise<KV> | undefined;
  #following: Promise<void> | undefined;
  #watching = false;
  #connected = true;
  #closed = false;
  #stop: (() => void) | undefined;
  #unfollowedSaid = false;
  /** Puts on their way and waiting, per space. */
  readonly #lines = new Map<string, BumpLine>();

  /**
   * `request`, when given, carries the puts (the bus's own request path: the key-value client's costs an
   * error object with a stack for every put that succeeds); the key-value client puts them otherwise.
   */
  constructor(nc: NatsConnection, options: { prefix: string; log?: Logger; request?: KvRequest }) {
    this.#nc = nc;
    this.#request = options.request;
    this.#bucketName = spaceVersionsBucket(options.prefix);
    this.#putPrefix = `$KV.${this.#bucketName}.`;
    this.#log = options.log;
  }

  /**
   * Bumps are grouped per space. With no put of the space on its way, the put is sent at the end of the
   * event loop's turn, just before the connection's write of the turn (`atTurnWrite`), after every write
   * that committed in the same turn asked for it: writes the store answered together share one put (and
   * the followers hear one update), which leaves with the turn's other messages (the writes' events).
   * While a put is on its way (sent before this write committed, so it cannot stand for it), this write
   * waits for the next put, sent once that one is done, together with every other write that arrives
   * meanwhile. Under a burst of writes to one space the bucket sees at most two puts at a time for it,
   * and each write waits for at most two.
   */
  bump(space: string): Promise<void> {
    let line = this.#lines.get(space);
    if (line === undefined) this.#lines.set(space, (line = {}));
    if (line.queued !== undefined) return line.queued;
    const current = line;
    if (current.running === undefined) {
      current.queued = new Promise<void>((resolve, reject) => {
        const send = () => {
          current.queued = undefined;
          // A put that fails before it is sent fails this bump too: the writes waiting on it are answered.
          try {
            this.#send(space, current).then(resolve, reject);
          } catch (error) {
            reject(error);
          }
        };
        if (!atTurnWrite(this.#nc, send)) setImmediate(send);
      });
      return current.queued;
    }
    current.queued = current.running.then(ignore, ignore).then(() => {
      current.queued = undefined;
      return this.#send(space, current);
    });
    return current.queued;
  }

  #send(space: string, line: BumpLine): Promise<void> {
    const put = this.#put(space).then(
      () => {
        this.#unfollowedSaid = false;
      },
      (err: unknown) => {
        if (!unfollowed(err)) throw err;
        // No stream takes the put: no gateway keeps a read cache (each that does makes the bucket), so
        // there is nothing to tell. Said once, not a warning with a stack per write.
        if (!this.#unfollowedSaid) this.#log?.info('no gateway follows space versions; writes are not recorded until one does');
        this.#unfollowedSaid = true;
      },
    );
    line.running = put;
    void put.then(ignore, ignore).then(() => {
      if (line.running !== put) return;
      line.running = undefined;
      if (line.queued === undefined) this.#lines.delete(space);
    });
    return put;
  }

  /**
   * One acknowledged put of the space's key, empty: JetStream answers a publication to the bucket's
   * subject of the key with its acknowledgement (the stream and sequence stored), or an error.
   */
  #put(space: string): Promise<unknown> {
    // An empty key names no subject the bucket's stream takes: its put would be lost as "nobody follows".
    if (space === '') return Promise.reject(new Error('a space version needs a space'));
    const request = this.#request;
    if (request === undefined) return this.#openToWrite().then((kv) => kv.put(keyOf(space), empty, { timeout: bumpTimeoutMs }));
    return request(this.#putPrefix + keyOf(space), empty, bumpTimeoutMs).then(checkAck);
  }

  follow(): Promise<void> {
    this.#following ??= this.#startFollowing();
    return this.#following;
  }

  stampOf(space: string): SpaceStamp | undefined {
    if (!this.#watching || !this.#connected || this.#closed) return undefined;
    return this.#book.stampOf(space);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#watching = false;
    this.#stop?.();
  }

  /**
   * The bucket to put to, without asking JetStream about it: a service may put to the bucket and nothing
   * more (deploy/nats), and a put before any gateway made the bucket fails like any other (the write stands).
   */
  #openToWrite(): Promise<KV> {
    this.#writer ??= new Kvm(this.#nc).open(this.#bucketName).catch((err: unknown) => {
      this.#writer = undefined;
      throw err;
    });
    return this.#writer;
  }

  /** Opens the bucket to follow it, creating it when it is missing (every gateway may; the first one wins). */
  #open(): Promise<KV> {
    this.#bucket ??= new Kvm(this.#nc)
      .create(this.#bucketName, { history: 1, ttl: keyTtlMs, storage: StorageType.File })
      .catch((err: unknown) => {
        this.#bucket = undefined;
        throw err;
      });
    return this.#bucket;
  }

  /**
   * Resolves once the first watch began, or failed (a server without JetStream, say): the caller works
   * without versions meanwhile (a gateway then answers every read from its service) and the watch is
   * tried again every second.
   */
  async #startFollowing(): Promise<void> {
    void this.#followConnection();
    try {
      await this.#watch();
    } catch (err) {
      this.#log?.warn({ err }, 'cannot follow space versions yet; reads go to their services until it can');
      void this.#rewatch();
    }
  }

  /** Watches for updates; when the watch ends while the process still follows, watches again. */
  async #watch(): Promise<void> {
    const kv = await this.#open();
    const updates = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
    if (this.#closed) {
      updates.stop();
      return;
    }
    this.#stop = () => updates.stop();
    // Changes before this watch began were not heard: no earlier stamp may stand.
    this.#book.forgetAll();
    this.#watching = true;
    void (async () => {
      try {
        for await (const entry of updates) this.#book.changed(spaceOfKey(entry.key));
      } catch (err) {
        this.#log?.warn({ err }, 'watching space versions failed');
      }
      this.#watching = false;
      this.#book.forgetAll();
      if (this.#closed) return;
      this.#log?.warn('watching space versions ended; watching again');
      await this.#rewatch();
    })();
  }

  async #rewatch(): Promise<void> {
    for (let attempt = 1; !this.#closed; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, rewatchMs).unref());
      if (this.#closed) return;
      try {
        this.#bucket = undefined;
        await this.#watch();
        if (attempt > 1) this.#log?.info({ attempts: attempt }, 'following space versions again');
        return;
      } catch (err) {
        // Once at warn, then quietly: a server without JetStream would otherwise write a line a second.
        if (attempt === 1) this.#log?.warn({ err }, 'watching space versions again failed; retrying every second');
        else this.#log?.debug({ err }, 'watching space versions again failed');
      }
    }
  }

  /** While disconnected nothing is heard; after it, what was missed is unknown: every stamp changes. */
  async #followConnection(): Promise<void> {
    for await (const s of this.#nc.status()) {
      if (this.#closed) return;
      if (s.type === 'disconnect' || s.type === 'close') {
        this.#connected = false;
        this.#book.forgetAll();
      } else if (s.type === 'reconnect') {
        this.#book.forgetAll();
        this.#connected = true;
      }
    }
  }
}

/** Throws unless a put's answer is JetStream's acknowledgement of it. */
function checkAck(msg: Msg): void {
  const ack = parseAck(msg.data);
  if (ack === null) throw new BumpRefusedError('the space version put was answered with no acknowledgement');
  if (ack.error !== undefined) throw new BumpRefusedError(`the space version put was refused: ${String(ack.error?.description)}`);
  if (typeof ack.stream !== 'string' || ack.stream === '') throw new BumpRefusedError('the space version put was answered with no stream');
}

function parseAck(data: Uint8Array): { stream?: unknown; error?: { description?: unknown } } | null {
  try {
    const ack: unknown = JSON.parse(ackDecoder.decode(data));
    return typeof ack === 'object' && ack !== null ? ack : null;
  } catch {
    return null;
  }
}

/** A put no stream answered: the bucket was never made (JetStream reports no responders this way). */
function unfollowed(err: unknown): boolean {
  const name = (err as Error | null)?.name;
  return err instanceof NoRespondersError || name === 'JetStreamNotEnabled' || name === 'NoRespondersError';
}
