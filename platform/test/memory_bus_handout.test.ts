/**
 * The in-process bus hands out a turn's deliveries for a bounded time, the rest the turn after, in order;
 * past a bound of deliveries waiting it asks publishers to hold back until the queue is short again.
 */
import t from 'tap';
import { MemoryBus, waitingHoldMarks } from '../src/bus/memory_bus.ts';

const busy = (ms: number) => {
  const stop = performance.now() + ms;
  while (performance.now() < stop);
};

t.test('a burst published in one turn is handed out over several turns, in order, timers running between', async (t) => {
  const bus = new MemoryBus();
  t.teardown(() => bus.close());
  const seen: number[] = [];
  await bus.subscribe('events.test.burst', (m) => {
    busy(1);
    seen.push(m.data[0]! * 256 + m.data[1]!);
  });
  for (let i = 0; i < 300; i++) bus.publish('events.test.burst', Uint8Array.of(i >> 8, i & 255));
  const handledWhenTimerRan = await new Promise<number>((resolve) => setTimeout(() => resolve(seen.length), 0));
  while (seen.length < 300) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(handledWhenTimerRan < 300, `a timer ran while the burst was handed out (after ${handledWhenTimerRan})`);
  t.same(
    seen,
    Array.from({ length: 300 }, (_, i) => i),
    'every delivery, in the order published',
  );
  bus.publish('events.test.burst', Uint8Array.of(1, 44));
  while (seen.length < 301) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(seen.at(-1), 300, 'a later publish comes after the whole burst');
});

t.test('past a bound of deliveries waiting, publishers are asked to hold back until the queue is short', async (t) => {
  const bus = new MemoryBus();
  t.teardown(() => bus.close());
  let heard = 0;
  await bus.subscribe('events.test.flood', () => void heard++);
  t.equal(bus.ingestHold(), undefined, 'nothing waits: no hold');
  const data = Uint8Array.of(1);
  for (let i = 0; i < waitingHoldMarks.from; i++) bus.publish('events.test.flood', data);
  const hold = bus.ingestHold();
  t.ok(hold instanceof Promise, 'a hold while the queue is past its bound');
  t.equal(bus.ingestHold(), hold, 'one hold for every publisher that asks');
  await hold;
  t.ok(waitingHoldMarks.from - heard <= waitingHoldMarks.until, 'it ends once the queue is down to its low mark');
  while (heard < waitingHoldMarks.from) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(heard, waitingHoldMarks.from, 'nothing was dropped');
  t.equal(bus.ingestHold(), undefined);
});
