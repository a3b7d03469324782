import type { BusMessage } from '../src/bus/bus.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of a string. */
export function text(s: string): Uint8Array {
  return encoder.encode(s);
}

/** A message's data as a string. */
export function read(m: BusMessage): string {
  return decoder.decode(m.data);
}

/** A message's data parsed as JSON. */
export function json<T = Record<string, unknown>>(m: BusMessage): T {
  return JSON.parse(read(m)) as T;
}

/** A promise with its resolver, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `done()` holds; rejects after `timeoutMs` so a test never hangs. */
export async function waitFor(done: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** The milliseconds a promise takes to settle, and its outcome. */
export async function timed<T>(p: Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = performance.now();
  const [result] = await Promise.allSettled([p]);
  return { ms: performance.now() - started, result: result! };
}
