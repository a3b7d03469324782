/**
 * The NATS bus against servers of its own (started here on loopback, on free ports): a first connect that
 * waits for the server, reconnects, and a server's own max_payload. Skipped when `nats-server` is not on
 * the PATH. The in-process bus is held to the same payload rules.
 */
import t from 'tap';
import { uniqueToken } from '@scada/testkit/buses';
import { serviceErrorCodeHeader, serviceErrorHeader, type Bus } from '../src/bus/bus.ts';
import { MemoryBus } from '../src/bus/memory_bus.ts';
import { NatsBus } from '../src/bus/nats_bus.ts';
import { read, sleep, text, timed, waitFor } from './bus_helpers.ts';
import { freePort, hasServer, startServer, stopServer, within } from './nats_servers.ts';

t.test('a NATS bus', { skip: hasServer ? false : 'nats-server is not on the PATH' }, async (t) => {
  t.test('started before its server connects once the server appears, and rides out a restart', async (t) => {
    const port = await freePort();
    let connected = false;
    const connecting = NatsBus.connect({ servers: `nats://127.0.0.1:${port}`, name: 'test', defaultTimeoutMs: 2000 });
    void connecting.then(
      () => (connected = true),
      () => {},
    );
    await sleep(700);
    t.notOk(connected, 'still waiting while no server listens');
    const first = await startServer(port);
    t.teardown(first.dispose);
    const bus = await within(10_000, connecting);
    t.teardown(() => within(5000, bus.close()));
    t.ok(bus.isConnected());
    const p = uniqueToken();
    const svc = await bus.addService({ name: p, version: '1.0.0' }, [
      { name: 'echo', subject: `${p}.echo`, handler: async (m) => ({ data: m.data }) },
    ]);
    t.equal(read(await bus.request(`${p}.echo`, text('before'))), 'before');

    await stopServer(first.server);
    await waitFor(() => !bus.isConnected(), 5000);
    const { ms, result } = await timed(bus.request(`${p}.echo`, text('during')));
    t.match(result, { status: 'rejected', reason: { code: 'disconnected' } }, 'a request while disconnected fails');
    t.ok(ms < 200, `at once (${Math.round(ms)} ms), not after the timeout`);

    const second = await startServer(port);
    t.teardown(second.dispose);
    await waitFor(() => bus.isConnected(), 10_000);
    t.equal(read(await bus.request(`${p}.echo`, text('after'))), 'after', 'the service answers again after the reconnect');

    await stopServer(second.server);
    await waitFor(() => !bus.isConnected(), 5000);
    const stopping = await timed(within(5000, svc.stop()));
    t.equal(stopping.result.status, 'fulfilled', `stop() while disconnected returns (${Math.round(stopping.ms)} ms)`);
    const closing = await timed(within(5000, bus.close()));
    t.equal(closing.result.status, 'fulfilled', `close() while disconnected returns (${Math.round(closing.ms)} ms)`);
  });

  t.test('a request whose reply will not come fails with closed when the bus closes, not at its deadline', async (t) => {
    const port = await freePort();
    const server = await startServer(port);
    t.teardown(server.dispose);
    const bus = await within(10_000, NatsBus.connect({ servers: `nats://127.0.0.1:${port}`, name: 'test', defaultTimeoutMs: 2000 }));
    const p = uniqueToken();
    // Someone hears the request (so the server reports no "no responders") and never answers it.
    let heard = false;
    bus.subscribe(`${p}.silent`, () => void (heard = true));
    await bus.flush();
    // Far longer than the test runs: the answer it gets is the close's, not the timer's.
    const pending = bus.request(`${p}.silent`, text(''), { timeoutMs: 600_000 });
    await waitFor(() => heard);
    await within(5000, bus.close());
    await t.rejects(pending, { name: 'BusError', code: 'closed' });
  });

  t.test('takes its maxPayload from the server, and holds requests and replies to it', async (t) => {
    const port = await freePort();
    const server = await startServer(port, 'max_payload: 4096');
    t.teardown(server.dispose);
    const bus = await within(10_000, NatsBus.connect({ servers: `nats://127.0.0.1:${port}`, name: 'test', defaultTimeoutMs: 2000 }));
    t.teardown(() => within(5000, bus.close()));
    t.equal(bus.maxPayload, 4096);
    const seen = await underOverAndBigReply(bus);
    t.equal(seen.under, 4000, 'a request under the limit goes through');
    t.match(seen.over, { code: 'payload_too_large' });
    t.same(seen.bigReply, tooLarge);
  });
});

t.test('the memory bus holds requests and replies to its maxPayload alike', async (t) => {
  const bus = new MemoryBus({ maxPayload: 4096, defaultTimeoutMs: 2000 });
  t.teardown(() => bus.close());
  const seen = await underOverAndBigReply(bus);
  t.equal(seen.under, 4000, 'a request under the limit goes through');
  t.match(seen.over, { code: 'payload_too_large' });
  t.same(seen.bigReply, tooLarge);
});

/** The headers of a reply over a 4096-byte limit: a 413 service error that keeps the reply's own, but not its compression (the problem body is plain). */
const tooLarge = { 'X-Kept': 'yes', [serviceErrorHeader]: 'payload_too_large', [serviceErrorCodeHeader]: '413' };

/** Against a 4096-byte limit: a request under it, one over it, and a reply over it. */
async function underOverAndBigReply(bus: Bus): Promise<{ under: number; over: unknown; bigReply: Record<string, string> }> {
  const p = uniqueToken();
  await bus.addService({ name: p, version: '1.0.0' }, [
    {
      name: 'big',
      subject: `${p}.big`,
      handler: async () => ({ data: new Uint8Array(5000), headers: { 'X-Kept': 'yes', 'x-content-encoding': 'gzip' } }),
    },
    { name: 'echo', subject: `${p}.echo`, handler: async (m) => ({ data: m.data }) },
  ]);
  const under = (await bus.request(`${p}.echo`, new Uint8Array(4000))).data.byteLength;
  const over = await bus.request(`${p}.echo`, new Uint8Array(4097)).catch((err: unknown) => err);
  const bigReply = (await bus.request(`${p}.big`, text(''))).headers;
  return { under, over, bigReply };
}
