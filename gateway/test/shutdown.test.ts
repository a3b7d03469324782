import { once } from 'node:events';
import { connect } from 'node:net';
import { Type } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '@scada/contracts';
import { implement, serve } from '@scada/platform';
import { pino } from 'pino';
import t from 'tap';
import { busTargets } from '@scada/testkit/buses';
import { startGateway } from '../src/server.ts';

const slow = defineOperation({
  operationId: 'slowShutdown',
  service: 'config',
  summary: 'slow',
  tags: ['Test'],
  request: requestSchema({}),
  response: Type.Object({ done: Type.Boolean() }),
  http: { method: 'GET', path: '/test/slow', status: 200, access: 'public', spaceScoped: false },
});

for (const target of busTargets()) {
  t.test(`on the ${target.name} bus, a shutdown finishes the request in flight and then refuses new ones`, async (t) => {
    const bus = await target.make();
    const log = pino({ level: 'silent' });
    const service = await serve(
      bus,
      { name: 'config', version: '0.0.0', instance: 'x' },
      [
        implement(slow, async () => {
          await new Promise((r) => setTimeout(r, 600));
          return { done: true };
        }),
      ],
      log,
    );
    await bus.flush();
    const config = {
      httpPort: 1,
      httpsPort: 0,
      trustedProxies: [],
      loginRateLimitPerMinute: 60,
      loginInFlightPerAddress: 8,
      bodyLimitBytes: 1 << 20,
      maxSclBytes: 1 << 25,
    };
    const gateway = await startGateway({
      bus,
      log,
      config,
      dataDir: '/nonexistent',
      busTimeoutMs: 3000,
      shutdownGraceMs: 5000,
      host: '127.0.0.1',
      ephemeralPorts: true,
      operations: [slow],
    });
    const url = `http://127.0.0.1:${gateway.httpPort}`;

    const inFlight = fetch(`${url}/test/slow`);
    await new Promise((r) => setTimeout(r, 150));
    // The order a SIGTERM follows: the gateway's listeners, then the service's subscription, then the bus.
    const stopping = (async () => {
      await gateway.stop();
      await service.stop();
      await bus.close();
    })();
    const res = await inFlight;
    t.equal(res.status, 200);
    t.same(await res.json(), { done: true });
    await stopping;
    await t.rejects(fetch(`${url}/healthz`), 'no new connection is taken');
  });
}

t.test('a connection accepted just before a shutdown, whose request is still on its way, is answered', async (t) => {
  const target = busTargets()[0]!;
  const bus = await target.make();
  t.teardown(() => bus.close());
  const log = pino({ level: 'silent' });
  const config = {
    httpPort: 1,
    httpsPort: 0,
    trustedProxies: [],
    loginRateLimitPerMinute: 60,
    loginInFlightPerAddress: 8,
    bodyLimitBytes: 1 << 20,
    maxSclBytes: 1 << 25,
  };
  const gateway = await startGateway({
    bus,
    log,
    config,
    dataDir: '/nonexistent',
    busTimeoutMs: 3000,
    shutdownGraceMs: 5000,
    host: '127.0.0.1',
    ephemeralPorts: true,
    operations: [],
  });
  const socket = connect(gateway.httpPort!, '127.0.0.1');
  await once(socket, 'connect');
  const stopping = gateway.stop();
  // The request leaves a moment after the connection was accepted and the shutdown began.
  await new Promise((r) => setTimeout(r, 50));
  socket.write('GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n');
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (answer += d));
  await Promise.race([once(socket, 'close'), once(socket, 'end')]);
  t.match(answer, /^HTTP\/1\.1 \d{3} /, 'an HTTP answer, not a reset');
  await stopping;
});
