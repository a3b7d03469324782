/**
 * The durable event consumer's contract, on the in-process bus and, when NATS_URL is set, NATS
 * (JetStream): every event of its subjects reaches the handler, in batches; a batch the handler fails is
 * delivered again; events of other subjects are not delivered; a consumer stopped and started again
 * under the same name on NATS gets what was published meanwhile.
 */
import { pino } from 'pino';
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

    if (target.name === 'memory')
      t.test(
        'in the process, a handler that has fallen behind holds at most maxQueued events: the oldest waiting go, said at warn',
        async (t) => {
          const seen: string[] = [];
          const warnings: { msg: string; dropped: number }[] = [];
          const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
          let storeAway = true;
          const consumer = await bus.consumeEvents({
            name: 'bounded',
            subjects: ['events.protocol.>'],
            holdMs: 60_000,
            retryMs: 20,
            maxBatch: 2,
            maxQueued: 5,
            log,
            handle: async (batch) => {
              if (storeAway) throw new Error('the store is away');
              seen.push(...batch.map(body));
            },
          });
          t.teardown(() => consumer.stop());
          for (let i = 1; i <= 9; i++) bus.publish('events.protocol.report', text(`v${i}`));
          await bus.flush();
          await waitFor(() => warnings.some((w) => /events dropped/.test(w.msg)), 10_000);
          storeAway = false;
          await waitFor(() => seen.includes('v9'), 10_000);
          // Five wait at most, besides a batch (two) in the handler's hands when the queue filled.
          const distinct = [...new Set(seen)];
          t.ok(distinct.length <= 7, `at most maxQueued and a batch delivered (${distinct.join(' ')})`);
          t.same(distinct.slice(-5), ['v5', 'v6', 'v7', 'v8', 'v9'], 'the newest kept, in order');
          t.ok((warnings.find((w) => /events dropped/.test(w.msg))?.dropped ?? 0) >= 1, 'the drop is said with how many');
        },
      );

    if (target.name === 'memory')
      t.test(
        'in the process, a consumer far behind asks publishers to hold back until it catches up; a failing one does not',
        async (t) => {
          let release: () => void = () => {};
          let gate = new Promise<void>((resolve) => (release = resolve));
          let failing = false;
          // The in-process bus hands a message over on a later turn of the event loop.
          const delivered = () => new Promise((resolve) => setTimeout(resolve, 20));
          const seen: string[] = [];
          t.equal(bus.ingestHold(), undefined, 'nothing held back with no consumer behind');
          const consumer = await bus.consumeEvents({
            name: 'holding',
            subjects: ['events.protocol.>'],
            holdMs: 60_000,
            retryMs: 20,
            maxBatch: 2,
            gatherMs: 1,
            // holds back from 5 queued (a quarter), until 2 (a tenth)
            maxQueued: 20,
            handle: async (batch) => {
              await gate;
              if (failing) throw new Error('the store is away');
              seen.push(...batch.map(body));
            },
          });
          t.teardown(() => consumer.stop());
          for (let i = 1; i <= 4; i++) bus.publish('events.protocol.report', text(`v${i}`));
          await delivered();
          t.equal(bus.ingestHold(), undefined, 'four queued: not yet');
          bus.publish('events.protocol.report', text('v5'));
          bus.publish('events.protocol.report', text('v6'));
          await delivered();
          const hold = bus.ingestHold();
          t.ok(hold instanceof Promise, 'a quarter of maxQueued waiting: publishers are asked to hold back');
          let caughtUp = false;
          void hold?.then(() => (caughtUp = true));
          release();
          await hold;
          t.ok(caughtUp, 'the hold ends once the consumer has caught up');
          await waitFor(() => seen.length >= 6, 10_000);
          t.equal(bus.ingestHold(), undefined, 'and nothing is held back after it');

          // A consumer whose handler fails holds nothing back: it drops its oldest past maxQueued instead.
          failing = true;
          gate = new Promise<void>((resolve) => (release = resolve));
          bus.publish('events.protocol.report', text('w1'));
          await delivered();
          release();
          await new Promise((r) => setTimeout(r, 50));
          for (let i = 2; i <= 12; i++) bus.publish('events.protocol.report', text(`w${i}`));
          await delivered();
          t.equal(bus.ingestHold(), undefined, 'a failing handler asks nobody to hold back');
          failing = false;
          await waitFor(() => seen.includes('w12'), 10_000);
        },
      );
  });
}
