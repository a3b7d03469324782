import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { histogramOf } from '@scada/testkit/metrics';

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
  t.match(text, /^# TYPE event_loop_delay_seconds histogram$/m, "the event loop's delay as a histogram too");

  // The histogram counts since the start: a block of the event loop between two scrapes shows in their
  // difference, in a bucket past 100 ms; the buckets are cumulative and end at the count.
  const histogram = (text: string) => {
    const h = histogramOf(text, 'event_loop_delay_seconds');
    if (!h) throw new Error('no event_loop_delay_seconds histogram');
    return { le: h.buckets, count: h.count };
  };
  const before = histogram(await (await fetch(`${base}/metrics`)).text());
  await new Promise((r) => setTimeout(r, 50));
  const end = Date.now() + 150;
  while (Date.now() < end) {
    // held
  }
  await new Promise((r) => setTimeout(r, 50));
  const after = histogram(await (await fetch(`${base}/metrics`)).text());
  const bounds = [...after.le.keys()];
  t.equal(bounds.at(-1), '+Inf');
  t.ok(bounds.includes('0.05'), 'a bucket at the goal of 50 ms');
  t.ok(
    bounds.every((b, i) => i === 0 || after.le.get(b)! >= after.le.get(bounds[i - 1]!)!),
    'cumulative',
  );
  t.equal(after.le.get('+Inf'), after.count, 'ending at the count');
  t.ok(after.count > before.count, 'counting on');
  const past100 = (h: typeof before) => h.count - h.le.get('0.1')!;
  t.ok(past100(after) > past100(before), 'the 150 ms block is counted past 100 ms');
  t.equal(p.proc.gateway, null, 'no gateway in a services-only process');
  await p.stop();
  await t.rejects(fetch(`${base}/healthz`), 'the listener closes with the process');
});
