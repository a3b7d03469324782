/**
 * The bus contract, part one: messaging. Every test runs against each bus `busTargets()` gives (the
 * in-process bus, and NATS when NATS_URL is set) and expects the same behaviour from both. Services
 * (queue groups, errors, `$SRV`, stop) are in `bus_service_contract.test.ts`.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import type { Bus, BusMessage } from '../src/bus/bus.ts';
import { gate, read, sleep, text, timed, waitFor } from './bus_helpers.ts';

const echo = async (m: BusMessage) => ({ data: m.data });

for (const target of busTargets()) {
  t.test(`the ${target.name} bus`, async (t) => {
    const bus = await target.makeRaw({ defaultTimeoutMs: 2000 });
    t.teardown(() => bus.close());

    t.test('a request is answered by the service that serves its subject', async (t) => {
      const p = uniqueToken();
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [{ name: 'echo', subject: `${p}.echo`, handler: echo }]);
      t.teardown(() => svc.stop());
      const reply = await bus.request(`${p}.echo`, text('hello'));
      t.equal(read(reply), 'hello');
      t.equal(reply.subject, `${p}.echo`, 'the reply is named by the request subject');
      t.same(reply.headers, {}, 'a plain reply has no headers');
      t.ok(bus.isConnected());
    });

    t.test('headers travel with the request and with the reply, names exactly as written', async (t) => {
      const p = uniqueToken();
      let seen: Record<string, string> = {};
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'h',
          subject: `${p}.h`,
          handler: async (m) => {
            seen = m.headers;
            return { data: text('ok'), headers: { 'X-Answer': '42', 'retry-after': '5' } };
          },
        },
      ]);
      t.teardown(() => svc.stop());
      const reply = await bus.request(`${p}.h`, text(''), { headers: { 'X-Request-Id': 'r-1', space: 'plant-a' } });
      t.same(seen, { 'X-Request-Id': 'r-1', space: 'plant-a' });
      t.same(reply.headers, { 'X-Answer': '42', 'retry-after': '5' });
    });

    t.test('a request nobody answers in time fails with timeout', async (t) => {
      const p = uniqueToken();
      const hold = gate();
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        { name: 'slow', subject: `${p}.slow`, handler: async () => (await hold.promise, { data: text('late') }) },
      ]);
      t.teardown(async () => {
        hold.open();
        await svc.stop();
      });
      const { ms, result } = await timed(bus.request(`${p}.slow`, text(''), { timeoutMs: 200 }));
      t.match(result, { status: 'rejected', reason: { name: 'BusError', code: 'timeout' } });
      t.ok(ms >= 180 && ms < 1500, `took ${Math.round(ms)} ms for a 200 ms timeout`);
    });

    t.test('requests given the same time each expire at their own deadline, whatever was answered around them', async (t) => {
      const p = uniqueToken();
      const hold = gate();
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'mixed',
          subject: `${p}.mixed`,
          handler: async (m) => (read(m) === 'slow' && (await hold.promise), { data: m.data }),
        },
      ]);
      t.teardown(async () => {
        hold.open();
        await svc.stop();
      });
      const timeoutMs = 300;
      const first = timed(bus.request(`${p}.mixed`, text('slow'), { timeoutMs }));
      t.equal(read(await bus.request(`${p}.mixed`, text('fast'), { timeoutMs })), 'fast', 'answered while a request waits');
      await sleep(timeoutMs / 2);
      const second = timed(bus.request(`${p}.mixed`, text('slow'), { timeoutMs }));
      t.equal(read(await bus.request(`${p}.mixed`, text('fast'), { timeoutMs })), 'fast');
      for (const { ms, result } of [await first, await second]) {
        t.match(result, { status: 'rejected', reason: { name: 'BusError', code: 'timeout' } });
        // Never before its own deadline (less the 20 ms a timer may round by): the second request's time
        // starts when it is sent, not when the first one's ends or started.
        t.ok(ms >= timeoutMs - 20, `expired after ${Math.round(ms)} ms of a ${timeoutMs} ms timeout`);
      }
      t.equal(read(await bus.request(`${p}.mixed`, text('fast'), { timeoutMs })), 'fast', 'a request after they expired is answered');
      const third = await timed(bus.request(`${p}.mixed`, text('slow'), { timeoutMs }));
      t.match(third.result, { status: 'rejected', reason: { code: 'timeout' } }, 'and one after them still expires');
    });

    t.test('a request nobody serves fails at once with no_responders', async (t) => {
      const { ms, result } = await timed(bus.request(`${uniqueToken()}.nobody`, text(''), { timeoutMs: 2000 }));
      t.match(result, { status: 'rejected', reason: { name: 'BusError', code: 'no_responders' } });
      t.ok(ms < 500, `took ${Math.round(ms)} ms, well under the 2000 ms timeout`);
    });

    t.test('a publication reaches every matching subscriber and one member of each queue group', async (t) => {
      const p = uniqueToken();
      const got = { star: [] as BusMessage[], tail: [] as BusMessage[], exact: [] as BusMessage[], w1: 0, w2: 0 };
      const subs = [
        bus.subscribe(`${p}.a.*`, (m) => void got.star.push(m)),
        bus.subscribe(`${p}.>`, async (m) => {
          await sleep(1);
          got.tail.push(m);
        }),
        bus.subscribe(`${p}.a`, (m) => void got.exact.push(m)),
        bus.subscribe(`${p}.>`, () => void got.w1++, { queue: 'workers' }),
        bus.subscribe(`${p}.>`, () => void got.w2++, { queue: 'workers' }),
      ];
      t.teardown(() => Promise.all(subs.map((s) => s.unsubscribe())));
      await bus.flush();
      bus.publish(`${p}.a.b`, text('one'), { 'X-Seq': '1' });
      bus.publish(`${p}.c.d.e`, text('two'));
      await waitFor(() => got.tail.length === 2 && got.w1 + got.w2 === 2 && got.star.length === 1);
      await sleep(50);
      t.same(
        got.star.map((m) => [m.subject, read(m), m.headers]),
        [[`${p}.a.b`, 'one', { 'X-Seq': '1' }]],
        '* matches one token',
      );
      t.same(got.tail.map((m) => m.subject).sort(), [`${p}.a.b`, `${p}.c.d.e`], '> matches the rest');
      t.equal(got.exact.length, 0, 'a literal subject matches only itself');
      t.equal(got.w1 + got.w2, 2, 'each message reached one member of the queue group');
    });

    t.test('what one turn sends, publications and requests, arrives each once and in the order sent', async (t) => {
      const p = uniqueToken();
      const got: string[] = [];
      const sub = bus.subscribe(`${p}.seq`, (m) => void got.push(read(m)));
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [{ name: 'echo', subject: `${p}.echo`, handler: echo }]);
      t.teardown(async () => {
        await sub.unsubscribe();
        await svc.stop();
      });
      await bus.flush();
      const sent = Array.from({ length: 200 }, (_, i) => String(i));
      for (const n of sent) bus.publish(`${p}.seq`, text(n));
      const replies = await Promise.all(sent.slice(0, 50).map((n) => bus.request(`${p}.echo`, text(n))));
      t.same(replies.map(read), sent.slice(0, 50), 'each request got its own answer');
      await waitFor(() => got.length >= sent.length);
      await sleep(50);
      t.same(got, sent, 'every publication arrived once, in order');
    });

    t.test('a subscriber that throws does not stop the others, nor its own next deliveries', async (t) => {
      const p = uniqueToken();
      let calls = 0;
      let others = 0;
      const subs = [
        bus.subscribe(`${p}.x`, async () => {
          calls++;
          throw new Error('subscriber failed');
        }),
        bus.subscribe(`${p}.x`, () => {
          others++;
          throw new Error('and so did this one');
        }),
      ];
      t.teardown(() => Promise.all(subs.map((s) => s.unsubscribe())));
      await bus.flush();
      bus.publish(`${p}.x`, text('1'));
      bus.publish(`${p}.x`, text('2'));
      await waitFor(() => calls === 2 && others === 2);
      t.pass('both subscribers got both messages');
    });

    t.test('after unsubscribe() a subscriber gets nothing more', async (t) => {
      const p = uniqueToken();
      let count = 0;
      const sub = bus.subscribe(`${p}.u`, () => void count++);
      await bus.flush();
      bus.publish(`${p}.u`, text(''));
      await waitFor(() => count === 1);
      await sub.unsubscribe();
      bus.publish(`${p}.u`, text(''));
      await bus.flush();
      await sleep(50);
      t.equal(count, 1);
    });

    t.test('a subscriber or service that joins after a subject has had traffic gets its next messages', async (t) => {
      const p = uniqueToken();
      let first = 0;
      let second = 0;
      const a = bus.subscribe(`${p}.j`, () => void first++);
      t.teardown(() => a.unsubscribe());
      await bus.flush();
      bus.publish(`${p}.j`, text(''));
      await waitFor(() => first === 1);
      const b = bus.subscribe(`${p}.j`, () => void second++);
      t.teardown(() => b.unsubscribe());
      await bus.flush();
      bus.publish(`${p}.j`, text(''));
      await waitFor(() => first === 2 && second === 1);
      t.pass('both heard the second message');

      t.match(await timed(bus.request(`${p}.late`, text(''))), { result: { status: 'rejected', reason: { code: 'no_responders' } } });
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [{ name: 'late', subject: `${p}.late`, handler: echo }]);
      t.teardown(() => svc.stop());
      t.equal(read(await bus.request(`${p}.late`, text('now'))), 'now', 'a service started after a refused request answers the next one');
    });

    t.test('a request routed to a service before its stop() is served before stop() resolves, none after', async (t) => {
      const p = uniqueToken();
      let stopped = false;
      let ranAfterStop = false;
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'e',
          subject: `${p}.e`,
          handler: async (m) => {
            if (stopped) ranAfterStop = true;
            return { data: m.data };
          },
        },
      ]);
      await bus.flush();
      const pending = bus.request(`${p}.e`, text('x')).then(read);
      await svc.stop();
      stopped = true;
      t.equal(await pending, 'x', 'the request sent before the stop is answered');
      t.notOk(ranAfterStop, 'no handler ran after stop() resolved');
    });

    t.test('a message not yet handled when its subscriber unsubscribes is not handled after', async (t) => {
      const p = uniqueToken();
      let unsubscribed = false;
      let handledAfter = 0;
      const sub = bus.subscribe(`${p}.u`, () => {
        if (unsubscribed) handledAfter++;
      });
      const later = gate();
      const after = bus.subscribe(`${p}.v`, () => later.open());
      t.teardown(() => after.unsubscribe());
      await bus.flush();
      bus.publish(`${p}.u`, text(''));
      await sub.unsubscribe();
      unsubscribed = true;
      // A message sent after it on the same connection reaches its own subscriber after it would have.
      bus.publish(`${p}.v`, text(''));
      await later.promise;
      t.equal(handledAfter, 0, 'nothing handled after unsubscribe() resolved');
    });

    t.test('a payload over maxPayload fails with payload_too_large', async (t) => {
      t.ok(bus.maxPayload >= 1024, `maxPayload is ${bus.maxPayload}`);
      const big = new Uint8Array(bus.maxPayload + 1);
      await t.rejects(bus.request(`${uniqueToken()}.big`, big), { name: 'BusError', code: 'payload_too_large' });
      t.throws(() => bus.publish(`${uniqueToken()}.big`, big), { name: 'BusError', code: 'payload_too_large' });
    });

    t.test('an invalid subject fails with invalid_subject', async (t) => {
      for (const subject of ['', 'a b', 'a..b', 'a.*', 'a.>']) {
        await t.rejects(bus.request(subject, text('')), { code: 'invalid_subject' }, `request to "${subject}"`);
        t.throws(() => bus.publish(subject, text('')), { code: 'invalid_subject' }, `publish to "${subject}"`);
      }
      for (const pattern of ['', 'a b', 'a..b', 'a.>.b']) {
        t.throws(() => bus.subscribe(pattern, () => {}), { code: 'invalid_subject' }, `subscribe to "${pattern}"`);
      }
    });
  });

  t.test(`the ${target.name} bus logs a subscriber's failure`, async (t) => {
    const lines: { msg?: string; subject?: string; err?: { message?: string } }[] = [];
    const logged = gate();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        const line = JSON.parse(String(chunk)) as (typeof lines)[number];
        lines.push(line);
        if (line.msg === 'event handler failed') logged.open();
        done();
      },
    });
    const bus = await target.makeRaw({ defaultTimeoutMs: 2000, log: pino({ level: 'info' }, sink) });
    t.teardown(() => bus.close());
    const p = uniqueToken();
    bus.subscribe(`${p}.boom`, () => {
      throw new Error('the handler broke');
    });
    await bus.flush();
    bus.publish(`${p}.boom`, text(''));
    await logged.promise;
    t.match(
      lines.find((l) => l.msg === 'event handler failed'),
      { subject: `${p}.boom`, err: { message: 'the handler broke' } },
      'logged with its subject and error',
    );
  });

  t.test(`the ${target.name} bus, closed`, async (t) => {
    t.test('close() answers the requests in flight before it closes', async (t) => {
      const bus: Bus = await target.makeRaw({ defaultTimeoutMs: 2000 });
      const p = uniqueToken();
      const entered = gate();
      const hold = gate();
      await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'slow',
          subject: `${p}.slow`,
          handler: async () => {
            entered.open();
            await hold.promise;
            return { data: text('done') };
          },
        },
      ]);
      const pending = bus.request(`${p}.slow`, text(''));
      await entered.promise;
      const closing = bus.close();
      await sleep(20);
      hold.open();
      t.equal(read(await pending), 'done');
      await closing;
      t.notOk(bus.isConnected());
    });

    const oneProcess = target.name === 'memory' ? 'the in-process bus has no other connection to hear it on' : false;
    t.test('what is published just before close() reaches the subscribers of another connection', { skip: oneProcess }, async (t) => {
      const listener = await target.makeRaw();
      t.teardown(() => listener.close());
      const p = uniqueToken();
      const got: string[] = [];
      const sub = listener.subscribe(`${p}.last`, (m) => void got.push(read(m)));
      t.teardown(() => sub.unsubscribe());
      await listener.flush();
      const bus = await target.makeRaw();
      bus.publish(`${p}.last`, text('one'));
      bus.publish(`${p}.last`, text('two'));
      await bus.close();
      await waitFor(() => got.length >= 2);
      t.same(got, ['one', 'two']);
    });

    t.test('after close() a request fails with closed', async (t) => {
      const bus = await target.makeRaw();
      await bus.close();
      t.notOk(bus.isConnected());
      await t.rejects(bus.request(`${uniqueToken()}.x`, text('')), { name: 'BusError', code: 'closed' });
      t.throws(() => bus.publish(`${uniqueToken()}.x`, text('')), { code: 'closed' });
      t.throws(() => bus.subscribe(`${uniqueToken()}.x`, () => {}), { code: 'closed' });
      await t.rejects(bus.addService({ name: uniqueToken(), version: '1.0.0' }, []), { code: 'closed' });
      await t.rejects(bus.flush(), { code: 'closed' });
      await bus.close();
      t.pass('a second close() is harmless');
    });
  });
}
