import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { MemoryBus, NatsBus, PrefixedBus, type Bus } from '@scada/platform';
import type { Logger } from 'pino';
import { harnessNatsOptions } from './nats_auth.ts';

/** How a test bus is made. */
export type BusOptions = { defaultTimeoutMs?: number; log?: Logger };

/** A bus a test can run against. */
export type BusTarget = {
  name: 'memory' | 'nats';
  /** A bus of its own: on NATS its subjects live under a fresh prefix, so test files never meet. */
  make(options?: BusOptions): Promise<Bus>;
  /** The bare bus, subjects as given: for tests of the bus itself, which pick unique subjects. */
  makeRaw(options?: BusOptions): Promise<Bus>;
};

/**
 * The buses tests run against: always the in-process bus, and NATS when `NATS_URL` is set (the CI sets
 * it to a local server). Every NATS bus is a connection of its own; the caller closes it.
 */
export function busTargets(): BusTarget[] {
  const memory: BusTarget = {
    name: 'memory',
    make: async (options) => new MemoryBus(options),
    makeRaw: async (options) => new MemoryBus(options),
  };
  const url = process.env.NATS_URL;
  if (!url) return [memory];
  const nats: BusTarget = {
    name: 'nats',
    make: async (options) => new PrefixedBus(await connectNats(url, options), uniqueToken('test')),
    makeRaw: (options) => connectNats(url, options),
  };
  return [memory, nats];
}

/** A subject token (and service name) no other test run uses: `<label>` and 12 random hex digits. */
export function uniqueToken(label = 't'): string {
  return `${label}${randomBytes(6).toString('hex')}`;
}

async function connectNats(url: string, options: BusOptions = {}): Promise<Bus> {
  // NatsBus waits for a server forever, as a service should; a test should fail fast instead.
  await probe(url, 2000);
  const harness = harnessNatsOptions(url);
  const auth = harness.user ? { user: harness.user, password: harness.pass } : {};
  return NatsBus.connect({ servers: url, name: 'scada-test', defaultTimeoutMs: options.defaultTimeoutMs, log: options.log, auth });
}

/** Resolves when something accepts TCP connections at the first server of the URL. */
function probe(url: string, timeoutMs: number): Promise<void> {
  const first = url.split(',')[0]!.trim();
  const { hostname, port } = new URL(first.includes('://') ? first : `nats://${first}`);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port || 4222), timeout: timeoutMs });
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`NATS_URL is ${url}, but ${why}`));
    };
    socket.once('connect', () => {
      socket.end();
      resolve();
    });
    socket.once('timeout', () => fail(`no answer within ${timeoutMs} ms`));
    socket.once('error', (err) => fail(err.message));
  });
}
