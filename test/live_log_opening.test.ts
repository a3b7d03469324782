/**
 * The live channel while a gateway opens its event log for a stream: a gateway follows the log only while a
 * stream is open, so the first stream after a quiet spell waits for the log to open (on NATS, JetStream's
 * replay of the held window). A client that leaves meanwhile gets no stream, and a log that cannot be
 * opened makes GET and HEAD answer 503 alike. Each case runs a second gateway on a bus whose log opening
 * the test holds back or fails, beside the test platform's own.
 */
import http from 'node:http';
import t, { type Test } from 'tap';
import type { Bus } from '@scada/platform';
import { secondGateway, startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { openSse } from '@scada/testkit/sse';

const p = await startTestPlatform({ LIVE_HEARTBEAT_MS: '200', LIVE_STREAMS_PER_USER: '1' });
t.teardown(() => p.stop());
const viewer = await signIn(p, { role: 'viewer' });

/** A gateway beside the platform's on `p`'s bus, whose log openings after the first (at its start) go through `later`. */
async function gatewayOpening(t: Test, later: (open: () => Promise<unknown>) => Promise<unknown>): Promise<string> {
  let opens = 0;
  const bus = new Proxy(p.proc.bus, {
    get(target, prop) {
      if (prop === 'openEventLog') {
        return (options: Parameters<Bus['openEventLog']>[0]) =>
          opens++ === 0 ? target.openEventLog(options) : later(() => target.openEventLog(options));
      }
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Bus;
  const gateway = await secondGateway(p, bus);
  t.teardown(() => gateway.stop());
  return gateway.url;
}

const openStreams = async (url: string) =>
  Number(/^live_streams_open (\S+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 'NaN');

t.test('a client that leaves while the log opens is given no stream and holds no place', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const waiting = new Promise<void>((r) => (reached = r));
  const url = await gatewayOpening(t, async (open) => {
    reached();
    await gate;
    return open();
  });
  const req = http.get(`${url}/api/live`, { headers: { accept: 'text/event-stream', ...viewer.headers } });
  req.on('error', () => {});
  await waiting; // the route waits for the log
  const closed = new Promise((r) => req.on('close', r));
  req.destroy(); // and the client gives up
  await closed;
  // The server hears of the closed socket within a turn or two of the loopback; a moment more for it.
  await new Promise((r) => setTimeout(r, 300));
  release();
  // Then the route goes on: the streams gauge settles at what the route did with the left client.
  let open = await openStreams(url);
  for (let i = 0; i < 20 && open !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    open = await openStreams(url);
  }
  t.equal(open, 0, 'no stream is open for the client that left');
  const s = await openSse(`${url}/api/live`, viewer.headers);
  t.teardown(() => s.close());
  t.equal(s.res.status, 200, 'the user opens a stream (one a user here): the one who left holds no place');
});

t.test('a log that cannot be opened: GET and HEAD both answer 503', async (t) => {
  const url = await gatewayOpening(t, async () => {
    throw new Error('JetStream is not answering');
  });
  const get = await fetch(`${url}/api/live`, { headers: viewer.headers });
  await get.body?.cancel();
  t.equal(get.status, 503, 'GET: the log cannot be opened');
  t.ok(get.headers.get('retry-after'), 'with Retry-After');
  const head = await fetch(`${url}/api/live`, { method: 'HEAD', headers: viewer.headers });
  t.equal(head.status, 503, 'HEAD answers what a GET would');
});
