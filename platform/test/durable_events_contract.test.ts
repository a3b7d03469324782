/**
 * The durable event consumer's contract, on the in-process bus and, when NATS_URL is set, NATS
 * (JetStream): every event of its subjects reaches the handler, in batches; a batch the handler fails is
 * delivered again; events of other subjects are not delivered; a consumer stopped and started again
 * under the same name on NATS gets what was published meanwhile.
 */
import t from 'tap';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import type { Bus } from '../src/bus/bus.ts';
import type { DurableEvent } from '../src/bus/durable_events.ts';
import { PrefixedBus } from '../src/bus/prefixed_bus.ts';
import { dropEventStream } from '@scada/testkit/event_streams';
import { text, waitFor } from './bus_helpers.ts';

const decoder = new TextDecoder();
const body = (e: DurableEvent) => decoder.decode(e.data);

for (const target of busTargets()) {
  t.test(`durable events on the ${target.name} bus`, async (t) => {
    const raw = await target.makeRaw({ defaultTimeoutMs: 2000 });
    const prefix = uniqueToken('durable');
    const bus: Bus = new PrefixedBus(raw, prefix);
    t.teardown(async () => {
      if (target.name === 'nats') await dropEventStream(prefix);
      await raw.close();
    });

    t.test('every event of its subjects, a failed batch again, nothing else', async (t) => {
      const seen: string[] = [];
      let failures = 1;
      const consumer = await bus.consumeEvents({
        name: 'contract',
        subjects: ['events.protocol.>'],
        holdMs: 60_000,
        retryMs: 50,
        handle: async (batch) => {
          if (failures > 0) {
            failures--;
            throw new Error('the store is away');
          }
          for (const e of batch) seen.push(`${e.subject} ${body(e)}`);
        },
      });
      t.teardown(() => consumer.stop());
      for (let i = 1; i <= 5; i++) bus.publish('events.protocol.report', text(String(i)));
      bus.publish('events.config.project.created', text('other'));
      await waitFor(() => new Set(seen).size >= 5, 10_000);
      t.same(
        [...new Set(seen)].sort(),
        [1, 2, 3, 4, 5].map((i) => `events.protocol.report ${i}`),
        'every event of its subjects, the ones of the failed batch too',
      );
      t.notOk(
        seen.some((s) => s.includes('other')),
        'no event of another subject',
      );
    });

    if (target.name === 'nats')
      t.test('a consumer away gets, under its name, what was published meanwhile', async (t) => {
        const seen: string[] = [];
        const open = () =>
          bus.consumeEvents({
            name: 'away',
            subjects: ['events.protocol.>'],
            holdMs: 60_000,
            handle: async (batch) => void seen.push(...batch.map(body)),
          });
        const first = await open();
        bus.publish('events.protocol.report', text('before'));
        await waitFor(() => seen.includes('before'), 10_000);
        await first.stop();
        bus.publish('events.protocol.report', text('while away'));
        await bus.flush();
        const second = await open();
        t.teardown(() => second.stop());
        await waitFor(() => seen.includes('while away'), 10_000);
        // A consumer made anew starts from the oldest event the stream holds (the first test's too).
        t.same(
          seen.filter((s) => !/^\d$/.test(s)),
          ['before', 'while away'],
          'each once, in order',
        );
      });
  });
}
