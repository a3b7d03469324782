/**
 * A durable consumer of the process that has fallen far behind (the history on the embedded platform) holds
 * the devices back instead of dropping what they report: the session stops reading its device's socket
 * while the consumer has a quarter of its bound waiting, so the device keeps its buffered block's entries,
 * and once the consumer catches up every entry arrives, none dropped. On NATS the event stream holds what
 * a consumer has not taken yet, and nothing is held back.
 */
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import type { DurableEvent } from '@scada/platform';
import { FIXTURE_SCL, fixtureCounter, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';

const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults: { bufferEntries: 20_000 } });
t.teardown(() => sim.stop());
const p = await startTestPlatform();
t.teardown(() => p.stop());
const D = 'SIMLD0';
const counter = fixtureCounter(sim);

t.test(`a consumer far behind holds the device back; nothing is dropped (${p.mode})`, async (t) => {
  const bus = p.proc.bus;
  if (bus.kind === 'nats') {
    t.equal(bus.ingestHold(), undefined, 'on NATS nothing is held back: the event stream holds what was not taken');
    return;
  }
  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
  await c.connect();
  const enabled = await c.api('POST', '/reports', {
    rcb: `${D}/LLN0$BR$brcb`,
    triggers: ['dchg'],
    optionalFields: ['sequence-number', 'entry-id'],
  });
  t.equal(enabled.status, 204, 'the buffered block is enabled');

  // Every counter value the session published, and every one a slow consumer of the process recorded.
  const published = new Set<number>();
  const recorded = new Set<number>();
  const first = counter.last + 1;
  const counted = (data: Uint8Array, into: Set<number>) => {
    const body = JSON.parse(new TextDecoder().decode(data)) as { connectionId: string; values: { value: unknown }[] };
    if (body.connectionId !== c.id) return;
    for (const v of body.values) {
      const n = (v.value as { mag?: { f?: number } } | number | null) ?? null;
      const value = typeof n === 'number' ? n : n?.mag?.f;
      if (typeof value === 'number' && value >= first) into.add(value);
    }
  };
  const sub = bus.subscribe('events.protocol.report', (m) => counted(m.data, published));
  t.teardown(() => sub.unsubscribe());
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const dropped: unknown[] = [];
  const consumer = await bus.consumeEvents({
    name: 'slow-recorder',
    subjects: ['events.protocol.report'],
    holdMs: 60_000,
    maxBatch: 100,
    // Holds the devices back from 1,000 waiting; drops past 4,000. A session reads at most 64 KiB of its
    // socket in a turn of the event loop, some 1,300 of these reports: the most that arrive after a hold began.
    maxQueued: 4000,
    log: {
      warn: (o: unknown) => void dropped.push(o),
      info: () => undefined,
      debug: () => undefined,
    } as never,
    handle: async (batch: DurableEvent[]) => {
      await gate;
      for (const e of batch) counted(e.data, recorded);
    },
  });
  t.teardown(() => consumer.stop());

  const values = 8000;
  for (let i = 0; i < values; i++) counter.next();
  const last = counter.last;
  // Watched every turn of the event loop: the hold lasts at most a second before the session reads a turn more.
  const watching = Date.now();
  while (bus.ingestHold() === undefined && Date.now() - watching < 10_000) await new Promise((resolve) => setImmediate(resolve));
  t.ok(bus.ingestHold() !== undefined, 'the consumer fell behind and holds the device back');
  // Half of the longest hold: without it, the session would read every report meanwhile, and the
  // consumer, still stopped, would drop past its bound.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.ok(published.size < values / 2, `while it is behind, the session reads no more reports (${published.size} of ${values})`);
  release();
  await until('every value reached the slow consumer', async () => recorded.size >= values, 30_000).catch(() => undefined);
  t.equal(recorded.size, values, `the slow consumer got every value, none dropped (${JSON.stringify(dropped)})`);
  t.equal(published.size, values, 'every value was published');
  t.ok(recorded.has(first) && recorded.has(last), 'from the first to the last');
  t.same(dropped, [], 'nothing was said dropped');
  t.equal(bus.ingestHold(), undefined, 'once it caught up, nothing is held back');
});
