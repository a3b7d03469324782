import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';

t.test('the whole platform in one process', async (t) => {
  const platform = await startTestPlatform({}, { tls: true });
  t.teardown(() => platform.stop());
  t.comment(`running on the ${platform.mode}`);

  t.test('/healthz answers 200 on HTTP and on HTTPS', async (t) => {
    const res = await fetch(`${platform.url}/healthz`);
    t.equal(res.status, 200);
    t.same(await res.json(), { status: 'ok' });
    t.ok(platform.tlsUrl, 'a TLS listener runs with a generated certificate');
    const { request } = await import('node:https');
    const status = await new Promise<number>((resolve, reject) => {
      request(`${platform.tlsUrl}/healthz`, { rejectUnauthorized: false }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    t.equal(status, 200);
  });

  t.test('a probe is answered with what every answer carries: request id, headers, access line, metrics', async (t) => {
    const res = await fetch(`${platform.url}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('x-request-id'), 'probe-1');
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.equal(res.headers.get('cache-control'), 'no-store');
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.ok(
      platform.logs.some((l) => l.reqId === 'probe-1' && l.msg === 'request answered' && l.status === 200 && l.path === '/healthz'),
      'its access line',
    );
    const { request } = await import('node:https');
    const hsts = await new Promise<string | undefined>((resolve, reject) => {
      request(`${platform.tlsUrl}/healthz`, { rejectUnauthorized: false }, (r) => {
        r.resume();
        resolve(r.headers['strict-transport-security']);
      })
        .on('error', reject)
        .end();
    });
    t.equal(hsts, 'max-age=31536000', 'over HTTPS, HSTS');
    const head = await fetch(`${platform.url}/healthz`, { method: 'HEAD' });
    t.equal(head.status, 200, 'HEAD is answered too');
    const queried = await fetch(`${platform.url}/healthz?verbose=1`);
    t.same([queried.status, await queried.json()], [200, { status: 'ok' }], 'so is a probe with a query');
    t.equal((await fetch(`${platform.url}/healthz?x=%00`)).status, 400, 'a query holding U+0000 is refused as on every route');
    t.equal((await fetch(`${platform.url}/healthz`, { method: 'POST' })).status, 405, 'another method is not taken');
    const metrics = await (await fetch(`${platform.url}/metrics`)).text();
    t.match(metrics, /http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/, 'counted under its route');
    t.match(
      metrics,
      /^nodejs_eventloop_lag_p99_seconds \d/m,
      "the event loop's delay (perf_hooks.monitorEventLoopDelay), p99 since the last scrape",
    );
    t.match(metrics, /^event_loop_delay_seconds_bucket\{le="0\.05"\} \d+$/m, 'and as a histogram counted since the start');
  });

  t.test('/readyz answers 200 and lists the live replica of every service', async (t) => {
    const res = await fetch(`${platform.url}/readyz`);
    t.equal(res.status, 200);
    const body = (await res.json()) as { status: string; services: Record<string, { instance: string; store: string }[]> };
    t.equal(body.status, 'ready');
    for (const name of ['auth', 'config', 'protocol']) {
      t.equal(body.services[name]?.length, 1, `${name}: one replica`);
      t.match(body.services[name]?.[0], { instance: String, version: String, store: 'ok' });
    }
  });

  t.test('the echo route goes through the bus and back with the request id', async (t) => {
    const res = await fetch(`${platform.url}/api/echo?text=hello`, { headers: { 'x-request-id': 'trace-echo-1' } });
    t.equal(res.status, 200);
    const body = (await res.json()) as Record<string, unknown>;
    t.match(body, { text: 'hello', requestId: 'trace-echo-1', service: 'config' });
  });

  t.test('the request id appears in the log lines of the gateway and of the service', async (t) => {
    await fetch(`${platform.url}/api/echo?text=x`, { headers: { 'x-request-id': 'trace-logs-2' } });
    await new Promise((r) => setTimeout(r, 50));
    const lines = platform.logs.filter((l) => l.reqId === 'trace-logs-2');
    t.ok(
      lines.some((l) => l.msg === 'request answered'),
      'the gateway logged it',
    );
    t.ok(
      lines.some((l) => l.msg === 'request served' && l.service === 'config'),
      'the config service logged it',
    );
  });

  t.test('/metrics counts requests per route template and status', async (t) => {
    await fetch(`${platform.url}/api/echo?text=m`);
    const res = await fetch(`${platform.url}/metrics`);
    t.equal(res.status, 200);
    const text = await res.text();
    t.match(text, /http_requests_total\{[^}]*route="\/api\/echo"[^}]*status="200"[^}]*\} \d+/);
    t.match(text, /http_request_duration_seconds_bucket/);
    t.match(text, /bus_request_duration_seconds_bucket/);
    t.match(text, /service_live_replicas\{service="protocol"\} 1/, 'a gauge of live replicas per service');
  });

  t.test('/openapi.json and /docs need no login', async (t) => {
    const doc = await fetch(`${platform.url}/openapi.json`);
    t.equal(doc.status, 200);
    const json = (await doc.json()) as { openapi: string; info: { version: string } };
    t.equal(json.openapi, '3.1.0');
    t.equal(json.info.version, '20260422-7');
    const docs = await fetch(`${platform.url}/docs`);
    t.equal(docs.status, 200);
    t.match(docs.headers.get('content-type') ?? '', /text\/html/);
  });

  t.test('a stopped service leaves the gateway ready, listed with no replica, its routes 503; it returns on its own', async (t) => {
    const config = platform.proc.services.find((s) => s.name === 'config')!;
    await config.stop();
    const down = await waitForReplicas(platform.url, 'config', 0);
    t.equal(down.status, 200, 'the gateway stays ready');
    t.same(((await down.json()) as { services: Record<string, unknown[]> }).services.config, [], 'config is listed with no replica');
    t.match(await (await fetch(`${platform.url}/metrics`)).text(), /service_live_replicas\{service="config"\} 0/);
    const echo = await fetch(`${platform.url}/api/echo`);
    t.equal(echo.status, 503, 'its routes answer 503 meanwhile');
    t.ok(Number(echo.headers.get('retry-after')) > 0, 'with Retry-After');
    const { EnvReader, startService } = await import('@scada/platform');
    const { configService } = await import('@scada/config');
    const again = await startService(configService, {
      bus: platform.proc.bus,
      store: platform.proc.store!,
      log: platform.proc.log,
      config: configService.readConfig(new EnvReader({})),
    });
    platform.proc.services.push(again);
    const up = await waitForReplicas(platform.url, 'config', 1);
    t.equal(up.status, 200);
    t.equal((await fetch(`${platform.url}/api/echo`)).status, 200, 'served again');
  });
});

/** Polls `/readyz` until a service lists that many replicas (at most the presence window and a little). */
async function waitForReplicas(url: string, service: string, count: number): Promise<Response> {
  for (const end = Date.now() + 10_000; ; ) {
    const res = await fetch(`${url}/readyz`);
    const body = (await res.clone().json()) as { services?: Record<string, unknown[]> };
    if (body.services?.[service]?.length === count || Date.now() > end) return res;
    await new Promise((r) => setTimeout(r, 50));
  }
}
