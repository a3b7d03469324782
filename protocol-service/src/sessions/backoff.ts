/**
 * Capped exponential backoff with jitter: attempt n waits between half and all of min(cap, base · 2^n), so
 * that many connections losing one device, or one network, do not all knock again at the same moment.
 */

/** The cap by default: however long a device was away, the next attempt is at most this far off. */
export const DEFAULT_BACKOFF_CAP_MS = 5_000;

export function backoffMs(attempt: number, options: { baseMs?: number; capMs?: number; random?: () => number } = {}): number {
  const base = options.baseMs ?? 500;
  const cap = options.capMs ?? DEFAULT_BACKOFF_CAP_MS;
  const ceiling = Math.min(cap, base * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling * (0.5 + 0.5 * (options.random ?? Math.random)()));
}
