import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';

t.test('a process with HEALTH_PORT answers /healthz, /readyz and /metrics on its own listener, and only those', async (t) => {
  const p = await startTestPlatform({ SERVICES: 'auth,config,protocol', HEALTH_PORT: '1' });
  const base = `http://127.0.0.1:${p.proc.health!.port}`;
  t.equal((await fetch(`${base}/healthz`)).status, 200);
  const ready = await fetch(`${base}/readyz`);
  t.equal(ready.status, 200);
  const body = (await ready.json()) as { status: string; services: Record<string, { store: string }[]> };
  t.equal(body.status, 'ready');
  t.same(Object.keys(body.services), ['auth', 'config', 'protocol', 'history'], 'every service is listed');
  t.equal((await fetch(`${base}/api/echo`)).status, 404, 'no API on the probe port');
  const metrics = await fetch(`${base}/metrics`);
  t.equal(metrics.status, 200, 'the process metrics are served');
  t.match(metrics.headers.get('content-type'), /^text\/plain/);
  const text = await metrics.text();
  t.match(text, /^nodejs_eventloop_lag_p99_seconds \d/m, "the event loop's delay, p99");
  t.match(text, /^process_resident_memory_bytes \d/m, 'resident memory');
  t.equal(p.proc.gateway, null, 'no gateway in a services-only process');
  await p.stop();
  await t.rejects(fetch(`${base}/healthz`), 'the listener closes with the process');
});
