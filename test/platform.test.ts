import t from 'tap';
import { startTestPlatform } from './support/platform.ts';

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

  t.test('/readyz answers 200 when the bus, the store and every service answer', async (t) => {
    const res = await fetch(`${platform.url}/readyz`);
    t.equal(res.status, 200);
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
    t.ok(lines.some((l) => l.msg === 'request answered'), 'the gateway logged it');
    t.ok(lines.some((l) => l.msg === 'request served' && l.service === 'config'), 'the config service logged it');
  });

  t.test('/metrics counts requests per route template and status', async (t) => {
    await fetch(`${platform.url}/api/echo?text=m`);
    const res = await fetch(`${platform.url}/metrics`);
    t.equal(res.status, 200);
    const text = await res.text();
    t.match(text, /http_requests_total\{[^}]*route="\/api\/echo"[^}]*status="200"[^}]*\} \d+/);
    t.match(text, /http_request_duration_seconds_bucket/);
    t.match(text, /bus_request_duration_seconds_bucket/);
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

  t.test('/readyz answers 503 naming a stopped service, and 200 again when it returns', async (t) => {
    const config = platform.proc.services.find((s) => s.name === 'config')!;
    await config.stop();
    const down = await fetch(`${platform.url}/readyz`);
    t.equal(down.status, 503);
    t.ok(Number(down.headers.get('retry-after')) > 0);
    t.match(((await down.json()) as { detail: string }).detail, /config/);
    const echo = await fetch(`${platform.url}/api/echo`);
    t.equal(echo.status, 503, 'its routes answer 503 meanwhile');
    const { startService } = await import('@scada/platform');
    const { configService } = await import('@scada/config');
    const again = await startService(configService, { bus: platform.proc.bus, store: platform.proc.store!, log: platform.proc.log, config: {} });
    platform.proc.services.push(again);
    const up = await fetch(`${platform.url}/readyz`);
    t.equal(up.status, 200);
  });
});
