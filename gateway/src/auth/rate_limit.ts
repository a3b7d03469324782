import { LRUCache } from 'lru-cache';

/**
 * A token bucket per client address: `perMinute` requests a minute, in bursts of up to `perMinute`.
 * Kept in memory per gateway replica (documented: with N replicas behind a balancer an address gets up
 * to N times the limit). Bounded: the least recently seen addresses are dropped past `maxAddresses`.
 */
export class RateLimiter {
  readonly #perMinute: number;
  readonly #buckets: LRUCache<string, { tokens: number; at: number }>;

  constructor(perMinute: number, maxAddresses = 100_000) {
    this.#perMinute = perMinute;
    this.#buckets = new LRUCache({ max: maxAddresses });
  }

  /** Takes one request for the address: 0 when allowed, else the seconds to wait. */
  take(address: string, now = Date.now()): number {
    const rate = this.#perMinute / 60_000;
    let bucket = this.#buckets.get(address);
    if (!bucket) this.#buckets.set(address, (bucket = { tokens: this.#perMinute, at: now }));
    bucket.tokens = Math.min(this.#perMinute, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000));
  }
}

/** Requests each client address has unanswered at once, up to a bound (per gateway replica). */
export class InFlight {
  readonly #max: number;
  readonly #count = new Map<string, number>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Counts one more request of the address: false (and nothing counted) when it has its bound already. */
  enter(address: string): boolean {
    const now = this.#count.get(address) ?? 0;
    if (now >= this.#max) return false;
    this.#count.set(address, now + 1);
    return true;
  }

  /** Counts one request of the address answered. */
  leave(address: string): void {
    const now = (this.#count.get(address) ?? 1) - 1;
    if (now <= 0) this.#count.delete(address);
    else this.#count.set(address, now);
  }
}

/**
 * Addresses told to come back later (503 `overloaded` with `Retry-After`), each until its time is up. A
 * gateway answers such an address itself meanwhile, so a client that ignores `Retry-After` costs the edge
 * and nothing behind it. Per gateway replica; bounded like the rate limiter.
 */
export class Cooldown {
  readonly #maxAddresses: number;
  readonly #until = new Map<string, number>();

  constructor(maxAddresses = 100_000) {
    this.#maxAddresses = maxAddresses;
  }

  /** Milliseconds the address must still wait, or 0 when it may be served. */
  remainingMs(address: string, now = Date.now()): number {
    const until = this.#until.get(address);
    if (until === undefined) return 0;
    if (now >= until) {
      this.#until.delete(address);
      return 0;
    }
    return until - now;
  }

  /** Holds the address back for `seconds` from now (a longer hold already running stays). */
  hold(address: string, seconds: number, now = Date.now()): void {
    const until = now + Math.max(0, seconds) * 1000;
    if ((this.#until.get(address) ?? 0) >= until) return;
    this.#until.delete(address);
    this.#until.set(address, until);
    if (this.#until.size > this.#maxAddresses) this.#until.delete(this.#until.keys().next().value as string);
  }
}
