/**
 * The bus contract, part two: services. Every test runs against each bus `busTargets()` gives and
 * expects the same behaviour from both: queue groups shared by replicas, service errors as
 * `Nats-Service-Error*` headers, discovery through `$SRV`, and a `stop()` that finishes what it started.
 */
import t from 'tap';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { serviceErrorCodeHeader, serviceErrorHeader, type BusMessage } from '../src/bus/bus.ts';
import { gate, json, read, sleep, text } from './bus_helpers.ts';

const echo = async (m: BusMessage) => ({ data: m.data });

type Endpoint = { name: string; subject: string; queue_group: string; num_requests?: number; num_errors?: number; last_error?: string };
type Doc = { type: string; name: string; id: string; version: string; endpoints: Endpoint[] };

for (const target of busTargets()) {
  t.test(`services on the ${target.name} bus`, async (t) => {
    const bus = await target.makeRaw({ defaultTimeoutMs: 2000 });
    t.teardown(() => bus.close());

    t.test('two replicas of one service share its requests through the queue group', async (t) => {
      const p = uniqueToken();
      const served = [0, 0];
      const replicas = await Promise.all(
        [0, 1].map((i) =>
          bus.addService({ name: p, version: '1.0.0' }, [
            { name: 'work', subject: `${p}.work`, handler: async (m) => (served[i]!++, { data: m.data }) },
          ]),
        ),
      );
      t.teardown(() => Promise.all(replicas.map((r) => r.stop())));
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(Array.from({ length: 20 }, (_, i) => bus.request(`${p}.work`, text(String(i)))));
      }
      t.equal(served[0]! + served[1]!, 200, 'every request served once');
      t.ok(served[0]! > 20 && served[1]! > 20, `both replicas got a share: ${served.join(' / ')}`);
    });

    t.test('a service error reply carries Nats-Service-Error and Nats-Service-Error-Code', async (t) => {
      const p = uniqueToken();
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'refuse',
          subject: `${p}.refuse`,
          handler: async () => ({
            data: text('{"code":"conflict"}'),
            headers: { 'content-type': 'application/problem+json' },
            error: { code: 409, description: 'The item has children' },
          }),
        },
      ]);
      t.teardown(() => svc.stop());
      const reply = await bus.request(`${p}.refuse`, text(''));
      t.same(reply.headers, {
        'content-type': 'application/problem+json',
        [serviceErrorHeader]: 'The item has children',
        [serviceErrorCodeHeader]: '409',
      });
      t.equal(read(reply), '{"code":"conflict"}', 'the body travels with the error');
    });

    t.test('a handler that throws gives a 500 service error and the service keeps serving', async (t) => {
      const p = uniqueToken();
      let calls = 0;
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'flaky',
          subject: `${p}.flaky`,
          handler: async (m) => {
            if (calls++ === 0) throw new Error('relation "boards"\ndoes not exist');
            return { data: m.data };
          },
        },
      ]);
      t.teardown(() => svc.stop());
      const failed = await bus.request(`${p}.flaky`, text('1'));
      t.equal(failed.headers[serviceErrorCodeHeader], '500');
      t.equal(failed.headers[serviceErrorHeader], 'relation "boards" does not exist', 'one line, as a header must be');
      t.equal(failed.data.byteLength, 0);
      t.equal(read(await bus.request(`${p}.flaky`, text('2'))), '2');
    });

    t.test('$SRV.PING and $SRV.INFO list the service and its endpoints; $SRV.STATS counts requests', async (t) => {
      const p = uniqueToken();
      const svc = await bus.addService({ name: p, version: '1.2.3', description: 'test service' }, [
        { name: 'echo', subject: `${p}.echo`, handler: echo, metadata: { operationId: 'echo' } },
        { name: 'fail', subject: `${p}.fail.*`, handler: async () => ({ data: text(''), error: { code: 422, description: 'no' } }) },
      ]);
      t.teardown(() => svc.stop());
      // No flush: addService resolves once the registration has reached the server.
      const ping = json<Doc>(await bus.request(`$SRV.PING.${p}`, text('')));
      t.match(ping, { type: 'io.nats.micro.v1.ping_response', name: p, id: svc.id, version: '1.2.3' });
      const info = json<Doc>(await bus.request(`$SRV.INFO.${p}.${svc.id}`, text('')));
      t.same(Object.keys(info).sort(), ['description', 'endpoints', 'id', 'metadata', 'name', 'type', 'version']);
      t.match(info, { type: 'io.nats.micro.v1.info_response', name: p, id: svc.id, version: '1.2.3', description: 'test service' });
      t.same(info.endpoints, [
        { name: 'echo', subject: `${p}.echo`, queue_group: 'q', metadata: { operationId: 'echo' } },
        { name: 'fail', subject: `${p}.fail.*`, queue_group: 'q', metadata: {} },
      ]);

      for (let i = 0; i < 3; i++) await bus.request(`${p}.echo`, text(''));
      await bus.request(`${p}.fail.x`, text(''));
      const stats = json<Doc>(await bus.request(`$SRV.STATS.${p}`, text('')));
      t.match(stats, { type: 'io.nats.micro.v1.stats_response', name: p, id: svc.id, started: String });
      const [e, f] = stats.endpoints;
      t.match(e, { name: 'echo', num_requests: 3, num_errors: 0 });
      t.notOk('last_error' in e!, 'no last_error before the first error');
      t.match(f, { name: 'fail', num_requests: 1, num_errors: 1, last_error: 'no' });
    });

    t.test('stop() lets the request in flight complete, then no new request is served', async (t) => {
      const p = uniqueToken();
      const entered = gate();
      const hold = gate();
      const svc = await bus.addService({ name: p, version: '1.0.0' }, [
        {
          name: 'slow',
          subject: `${p}.slow`,
          handler: async () => {
            entered.open();
            await hold.promise;
            return { data: text('finished') };
          },
        },
      ]);
      const pending = bus.request(`${p}.slow`, text(''));
      await entered.promise;
      let stopped = false;
      const stopping = svc.stop().then(() => (stopped = true));
      await sleep(50);
      t.notOk(stopped, 'stop() waits for the handler in flight');
      hold.open();
      t.equal(read(await pending), 'finished');
      await stopping;
      await t.rejects(bus.request(`${p}.slow`, text(''), { timeoutMs: 1000 }), { code: 'no_responders' });
      await t.rejects(bus.request(`$SRV.PING.${p}`, text(''), { timeoutMs: 1000 }), { code: 'no_responders' }, 'nor discovery');
    });

    t.test('a service with an invalid name or endpoint is refused', async (t) => {
      const ok = { name: 'e', subject: `${uniqueToken()}.e`, handler: echo };
      await t.rejects(bus.addService({ name: 'has.dot', version: '1.0.0' }, [ok]));
      await t.rejects(bus.addService({ name: uniqueToken(), version: 'latest' }, [ok]));
      await t.rejects(bus.addService({ name: uniqueToken(), version: '1.0.0' }, [{ ...ok, name: 'a.b' }]));
      await t.rejects(bus.addService({ name: uniqueToken(), version: '1.0.0' }, [{ ...ok, subject: 'a b' }]));
    });
  });
}
