/**
 * The gateway's read cache: answers of cacheable reads (`cacheable` bindings: configuration of a space)
 * kept for at most `maxAgeMs`, and only while nothing in their space has changed.
 *
 * What it promises, and how:
 * - A cached answer is served only under the stamp its read was sent under (`SpaceVersions`): every
 *   service bumps the space's version before it answers a write, so once this gateway hears the bump
 *   no earlier answer is served.
 * - Read-your-writes here: a write answered through this gateway counts locally before its answer
 *   leaves (`written`), so a read after it never meets an answer fetched before it, even before the bump
 *   arrives.
 * - An answer is kept only when neither the stamp nor the local count moved while its read was on the
 *   way (a write may have landed between the service's read and the answer's arrival).
 * - No answer is older than `maxAgeMs` (counted from when its read was sent), whatever the bus does: the
 *   bound for a write whose bump was lost.
 * - A gateway that cannot hear versions (not following, bus disconnected) serves nothing from the cache.
 */
import { createHash } from 'node:crypto';
import type { SpaceStamp, SpaceVersions } from '@scada/platform';

export type ReadCacheSettings = {
  /** How long an answer may be served from the cache; 0 turns the cache off. */
  maxAgeMs: number;
  /** Characters of answers kept at most (an answer kept as bytes counts a character a byte); the oldest go first. */
  maxChars: number;
};

/**
 * How a cacheable read was answered: `hit` from the cache, `shared` by the fetch of an identical read
 * already on its way, `miss` by a fetch of its own (then kept), `off` by a fetch while versions cannot be
 * heard.
 */
export type ReadOutcome = 'hit' | 'shared' | 'miss' | 'off';

/**
 * An answer's body: the bytes of its JSON as the service sent them (what the gateway relays), or its text.
 * Either is answered to the client as it is.
 */
export type AnswerBody = string | Buffer;

/** A read's answer with its entity tag. */
export type CachedAnswer = { text: AnswerBody; etag: string; outcome: ReadOutcome };

type Entry = { text: AnswerBody; etag: string; stamp: SpaceStamp; local: number; sentAt: number; size: number };
type Ticket = { space: string; stamp: SpaceStamp; local: number; sentAt: number };
type InFlight = { stamp: SpaceStamp; local: number; sentAt: number; answer: Promise<{ text: AnswerBody; etag: string }> };
/** The answers of one space, least recently used first, and what they weigh. */
type Shelf = { entries: Map<string, Entry>; size: number };

/** An answer (with its key) larger than this share of the cache is not kept (it would push out the rest). */
const largestShare = 8;
/** No space holds more than this share of the cache: one tenant's reads cannot push out every other's. */
const spaceShare = 4;
/** What an entry weighs beside its text and key: the tag, the entry, the map's slot (in characters). */
const entryOverhead = 128;
/** Keys longer than this are not kept (a read's key is bounded by its schema; this bounds it again). */
const longestKey = 4096;

export class ReadCache {
  readonly #versions: SpaceVersions | null;
  readonly #settings: ReadCacheSettings;
  readonly #shelves = new Map<string, Shelf>();
  /** Writes answered through this gateway, per space. */
  readonly #local = new Map<string, number>();
  /** Fetches on their way, by space and key: a read under the same stamp waits for one instead of sending its own. */
  readonly #inFlight = new Map<string, InFlight>();
  #size = 0;
  #entries = 0;

  constructor(versions: SpaceVersions | null, settings: ReadCacheSettings) {
    this.#versions = settings.maxAgeMs > 0 ? versions : null;
    this.#settings = settings;
  }

  /** Starts hearing versions; until then (and whenever they cannot be heard) every read goes through. */
  async start(): Promise<void> {
    await this.#versions?.follow();
  }

  /**
   * The answer of a cacheable read of `space` named by `key` (the operation and its validated message,
   * so that spellings of one request share an entry): from the cache when an entry is still good, else
   * from `fetch`, kept when nothing changed meanwhile.
   */
  async read(space: string | null, key: string, fetch: () => Promise<AnswerBody>): Promise<CachedAnswer> {
    const ticket = space === null || key.length > longestKey ? undefined : this.#ticket(space);
    if (ticket === undefined) {
      const text = await fetch();
      return { text, etag: etagOf(text), outcome: 'off' };
    }
    const shelf = this.#shelves.get(ticket.space);
    const entry = shelf?.entries.get(key);
    if (shelf !== undefined && entry !== undefined) {
      this.#drop(ticket.space, shelf, key, entry);
      if (entry.stamp === ticket.stamp && entry.local === ticket.local && ticket.sentAt - entry.sentAt < this.#settings.maxAgeMs) {
        // Put back as the most recently used.
        this.#place(ticket.space, key, entry);
        return { text: entry.text, etag: entry.etag, outcome: 'hit' };
      }
    }
    // After a change every poller misses at once: one fetch answers all of them. Sharing is as safe as
    // the cache: the fetch was sent under the same stamp and local count as this read, within the age bound.
    const id = `${ticket.space}\n${key}`;
    const flying = this.#inFlight.get(id);
    if (
      flying !== undefined &&
      flying.stamp === ticket.stamp &&
      flying.local === ticket.local &&
      ticket.sentAt - flying.sentAt < this.#settings.maxAgeMs
    ) {
      return { ...(await flying.answer), outcome: 'shared' };
    }
    const answer = fetch().then((text) => ({ text, etag: etagOf(text) }));
    const own: InFlight = { stamp: ticket.stamp, local: ticket.local, sentAt: ticket.sentAt, answer };
    this.#inFlight.set(id, own);
    try {
      const { text, etag } = await answer;
      this.#keep(key, ticket, text, etag);
      return { text, etag, outcome: 'miss' };
    } finally {
      if (this.#inFlight.get(id) === own) this.#inFlight.delete(id);
    }
  }

  /** A write in `space` was answered (or failed) through this gateway: nothing read before it is served. */
  written(space: string): void {
    this.#local.set(space, (this.#local.get(space) ?? 0) + 1);
  }

  /** Answers kept now, and what they weigh in characters (texts, keys and overhead). */
  get size(): { entries: number; chars: number } {
    return { entries: this.#entries, chars: this.#size };
  }

  #ticket(space: string): Ticket | undefined {
    const stamp = this.#versions?.stampOf(space);
    if (stamp === undefined) return undefined;
    return { space, stamp, local: this.#local.get(space) ?? 0, sentAt: performance.now() };
  }

  #keep(key: string, ticket: Ticket, text: AnswerBody, etag: string): void {
    const now = this.#ticket(ticket.space);
    if (now === undefined || now.stamp !== ticket.stamp || now.local !== ticket.local) return;
    const size = text.length + key.length + entryOverhead;
    if (size > this.#settings.maxChars / largestShare) return;
    const shelf = this.#shelves.get(ticket.space);
    const old = shelf?.entries.get(key);
    if (shelf !== undefined && old !== undefined) this.#drop(ticket.space, shelf, key, old);
    this.#place(ticket.space, key, { text, etag, stamp: ticket.stamp, local: ticket.local, sentAt: ticket.sentAt, size });
    this.#trim(ticket.space);
  }

  #place(space: string, key: string, entry: Entry): void {
    let shelf = this.#shelves.get(space);
    if (shelf === undefined) this.#shelves.set(space, (shelf = { entries: new Map(), size: 0 }));
    shelf.entries.set(key, entry);
    shelf.size += entry.size;
    this.#size += entry.size;
    this.#entries++;
  }

  #drop(space: string, shelf: Shelf, key: string, entry: Entry): void {
    shelf.entries.delete(key);
    shelf.size -= entry.size;
    this.#size -= entry.size;
    this.#entries--;
    if (shelf.entries.size === 0) this.#shelves.delete(space);
  }

  /** Least recently used first: the space's own past its share, then the largest space's past the whole. */
  #trim(space: string): void {
    const own = this.#shelves.get(space);
    while (own !== undefined && own.size > this.#settings.maxChars / spaceShare) this.#dropOldest(space, own);
    while (this.#size > this.#settings.maxChars) {
      let largest: [string, Shelf] | undefined;
      for (const pair of this.#shelves) if (largest === undefined || pair[1].size > largest[1].size) largest = pair;
      if (largest === undefined) return;
      this.#dropOldest(largest[0], largest[1]);
    }
  }

  #dropOldest(space: string, shelf: Shelf): void {
    const oldest = shelf.entries.entries().next();
    if (oldest.done) return;
    this.#drop(space, shelf, oldest.value[0], oldest.value[1]);
  }
}

/** A strong entity tag of an answer's body (the same for its text and for the UTF-8 bytes of it). */
export function etagOf(text: AnswerBody): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}

/**
 * Whether a request's `If-None-Match` names the tag (RFC 9110 13.1.2: `*`, or any tag in the list, compared
 * weakly). Evaluated as the origin: a request's `Cache-Control: no-cache` (which fetch adds to every
 * conditional request) asks caches to revalidate, which is what this answer is.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === bare;
  });
}
