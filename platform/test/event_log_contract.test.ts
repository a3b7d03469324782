/**
 * The event log contract: every test runs against the in-process bus and, when NATS_URL is set, NATS
 * (JetStream), and expects the same behaviour: ids shared by every view on the bus, replay after an id
 * while the event is held, null once it is not (or for an id never handed out), listeners in id order.
 */
import t from 'tap';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import type { Bus } from '../src/bus/bus.ts';
import { eventIdHeader, type LoggedEvent } from '../src/bus/event_log.ts';
import { PrefixedBus } from '../src/bus/prefixed_bus.ts';
import { Type } from '@sinclair/typebox';
import { defineEvent } from '@scada/contracts';
import { publishEvent } from '../src/rpc.ts';
import { dropEventStream } from '@scada/testkit/event_streams';
import { sleep, text, waitFor } from './bus_helpers.ts';

const decoder = new TextDecoder();
const body = (e: LoggedEvent) => decoder.decode(e.data);

for (const target of busTargets()) {
  t.test(`the event log on the ${target.name} bus`, async (t) => {
    const raw = await target.makeRaw({ defaultTimeoutMs: 2000 });
    const prefix = uniqueToken('log');
    const bus: Bus = new PrefixedBus(raw, prefix);
    t.teardown(async () => {
      if (target.name === 'nats') await dropEventStream(prefix);
      await raw.close();
    });

    t.test('two views on one bus number the same events alike, in order; other subjects are not logged', async (t) => {
      const a = await bus.openEventLog({ maxAgeMs: 60_000 });
      const b = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(async () => (await a.close(), await b.close()));
      const seenA: LoggedEvent[] = [];
      const seenB: LoggedEvent[] = [];
      a.listen((e) => seenA.push(e));
      b.listen((e) => seenB.push(e));
      bus.publish('events.config.project.created', text('one'));
      bus.publish('config.v1.echo', text('not an event'));
      bus.publish('events.protocol.report', text('two'));
      await waitFor(() => seenA.length >= 2 && seenB.length >= 2, 5000);
      t.same(seenA.map(body), ['one', 'two']);
      t.same(
        seenA.map((e) => e.subject),
        ['events.config.project.created', 'events.protocol.report'],
        'subjects as published, without the prefix',
      );
      t.same(
        seenB.map((e) => e.id),
        seenA.map((e) => e.id),
        'the same ids on both views',
      );
      t.equal(seenA[1]!.id, seenA[0]!.id + 1, 'consecutive');
      t.equal(a.last(), seenA[1]!.id);
    });

    t.test('after an id: every held event after it; after the newest: none', async (t) => {
      const log = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => log.close());
      const start = log.last();
      for (const n of [1, 2, 3]) bus.publish('events.test.n', text(String(n)));
      await waitFor(() => log.last() >= start + 3, 5000);
      t.same((await log.after(start))!.map(body), ['1', '2', '3']);
      t.same((await log.after(start + 2))!.map(body), ['3']);
      t.same(await log.after(log.last()), []);
    });

    t.test('events of every size, small and large in turn, are answered byte for byte after an id', async (t) => {
      const log = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => log.close());
      const start = log.last();
      // Around the sizes the log keeps together and apart (its blocks are 256 KiB): small ones between large
      // ones, and one larger than a block.
      const sizes = [10, 70_000, 20, 300_000, 30, 65_536, 65_537, 200_000, 40, 1];
      const bodies = sizes.map((n, i) => String.fromCharCode(97 + i).repeat(n));
      for (const b of bodies) bus.publish('events.test.sizes', text(b));
      await waitFor(() => log.last() >= start + sizes.length, 5000);
      const answered = (await log.after(start))!.map(body);
      t.same(
        answered.map((b) => b.length),
        sizes,
        'each size as published',
      );
      t.ok(
        answered.every((b, i) => b === bodies[i]),
        'each body as published',
      );
    });

    t.test('a view opened later holds the events published before it, with their ids', async (t) => {
      const first = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => first.close());
      const start = first.last();
      bus.publish('events.test.early', text('early'));
      await waitFor(() => first.last() > start, 5000);
      const later = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => later.close());
      t.same(
        (await later.after(start))!.map((e) => [e.id, body(e)]),
        [[start + 1, 'early']],
      );
    });

    t.test('an event published again under its event id is logged once; without one, or under another, each time', async (t) => {
      const log = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => log.close());
      const start = log.last();
      const id = uniqueToken('entry');
      const entry = defineEvent({
        name: 'test.entry',
        publisher: 'protocol',
        schema: Type.Object({ n: Type.Integer(), at: Type.String() }),
        example: { n: 0, at: '2026-04-22T09:30:00.000Z' },
        summary: 'An entry of a test.',
      });
      publishEvent(bus, entry, { n: 1 }, { requestId: 'first-holder', eventId: id });
      publishEvent(bus, entry, { n: 1 }, { requestId: 'next-holder', eventId: id });
      publishEvent(bus, entry, { n: 2 }, { requestId: 'next-holder', eventId: uniqueToken('entry') });
      publishEvent(bus, entry, { n: 3 }, { requestId: 'next-holder' });
      publishEvent(bus, entry, { n: 3 }, { requestId: 'next-holder' });
      await waitFor(() => log.last() >= start + 4, 5000);
      await sleep(200);
      t.same(
        (await log.after(start))!.map((e) => (JSON.parse(body(e)) as { n: number }).n),
        [1, 2, 3, 3],
      );
    });

    t.test('an id never handed out, and an id no longer held, answer null', async (t) => {
      // A log of its own, so that no longer-lived view holds the events for it.
      const ownPrefix = uniqueToken('short');
      const own = new PrefixedBus(raw, ownPrefix);
      const log = await own.openEventLog({ maxAgeMs: 300 });
      t.teardown(async () => {
        await log.close();
        if (target.name === 'nats') await dropEventStream(ownPrefix);
      });
      t.equal(await log.after(log.last() + 1000), null, 'ahead of the log');
      const start = log.last();
      own.publish('events.test.old', text('old'));
      await waitFor(() => log.last() > start, 5000);
      await sleep(600);
      own.publish('events.test.new', text('new'));
      await waitFor(() => log.last() > start + 1, 5000);
      t.equal(await log.after(start), null, 'the old event is gone, so no replay without a gap');
      t.same((await log.after(start + 1))!.map(body), ['new'], 'what is still held replays');
    });

    t.test('a log closed by its last view and opened again hands out no id twice and replays no gap', async (t) => {
      // A log of its own, so that no other view keeps it open.
      const ownPrefix = uniqueToken('reopen');
      const own = new PrefixedBus(raw, ownPrefix);
      t.teardown(async () => {
        if (target.name === 'nats') await dropEventStream(ownPrefix);
      });
      const first = await own.openEventLog({ maxAgeMs: 60_000 });
      own.publish('events.test.before', text('before'));
      await waitFor(() => first.last() > 0, 5000);
      const seen = first.last();
      await first.close();
      // Published while no view follows the log: a bus that holds events apart from its followers
      // (JetStream) replays it, the in-process bus never heard it and answers null; neither skips it.
      own.publish('events.test.closed', text('while closed'));
      await sleep(200);
      const again = await own.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => again.close());
      const start = again.last();
      t.ok(start >= seen, 'the reopened log starts at or after what was handed out before');
      own.publish('events.test.after', text('after'));
      await waitFor(() => again.last() > start, 5000);
      const after = await again.after(seen);
      if (after === null) t.pass('no replay across what the log did not hear');
      else t.same(after.map(body), ['while closed', 'after'], 'the replay holds the event published while closed');
      const newest = (await again.after(start))!;
      t.same(newest.map(body), ['after'], 'the new event replays after the reopened start');
      t.ok(newest[0]!.id > seen, 'with an id after every id handed out before');
    });

    t.test('an event published again under its event id after the log was closed and opened again is logged once', async (t) => {
      // The duplicate window is the stream's, not its followers': a gateway closes its log while no live
      // stream is open, and work taken over elsewhere publishes its events again under their ids.
      const ownPrefix = uniqueToken('redo');
      const own = new PrefixedBus(raw, ownPrefix);
      t.teardown(async () => {
        if (target.name === 'nats') await dropEventStream(ownPrefix);
      });
      const first = await own.openEventLog({ maxAgeMs: 60_000 });
      own.publish('events.test.x', text('first'), { [eventIdHeader]: 'same-id' });
      await waitFor(() => first.last() > 0, 5000);
      await first.close();
      const again = await own.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => again.close());
      const start = again.last();
      const heard: string[] = [];
      again.listen((e) => heard.push(body(e)));
      own.publish('events.test.x', text('republished'), { [eventIdHeader]: 'same-id' });
      own.publish('events.test.x', text('after'));
      await waitFor(() => heard.includes('after'), 5000);
      t.same(heard, ['after'], 'the listener hears the new event alone');
      t.same((await again.after(start))!.map(body), ['after'], 'and the log holds it alone');
    });

    t.test('a listener stopped hears nothing more', async (t) => {
      const log = await bus.openEventLog({ maxAgeMs: 60_000 });
      t.teardown(() => log.close());
      const seen: LoggedEvent[] = [];
      const stop = log.listen((e) => seen.push(e));
      bus.publish('events.test.a', text('a'));
      await waitFor(() => seen.length === 1, 5000);
      stop();
      const at = log.last();
      bus.publish('events.test.b', text('b'));
      await waitFor(() => log.last() > at, 5000);
      t.equal(seen.length, 1);
    });
  });
}
