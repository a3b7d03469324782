import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import t, { type Test } from 'tap';
import { createMetrics, type GatewayMetrics } from '../src/metrics.ts';

/** An error shaped like the ones http-errors makes. */
function httpError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status, expose: status < 500 });
}

/** Answers errors the way a problem middleware does: status and a small body. */
const handleErrors: Koa.Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const e = err as { status?: number; message: string };
    ctx.status = e.status ?? 500;
    ctx.body = { detail: e.message };
  }
};

function routes(): Router {
  const router = new Router();
  router.get('/items/:id', (ctx) => {
    if (ctx.params.id === 'missing') throw httpError(404, 'no such item');
    ctx.body = { id: ctx.params.id };
  });
  router.post('/items', (ctx) => {
    ctx.status = 201;
    ctx.body = {};
  });
  router.get('/boom', () => {
    throw new Error('internal');
  });
  return router;
}

/** A gateway-like app; `metricsOutside` puts the metrics middleware outside the error handler. */
async function start(t: Test, metrics: GatewayMetrics, metricsOutside: boolean): Promise<string> {
  const app = new Koa();
  app.silent = true;
  const order = metricsOutside ? [metrics.middleware, handleErrors] : [handleErrors, metrics.middleware];
  for (const middleware of order) app.use(middleware);
  app.use(routes().routes());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The value of one sample of the exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

async function get(url: string, init?: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

for (const metricsOutside of [false, true]) {
  const where = metricsOutside ? 'outside' : 'inside';

  t.test(`with the metrics ${where} the error handler, requests are counted by route template and final status`, async (t) => {
    const metrics = createMetrics();
    const base = await start(t, metrics, metricsOutside);

    t.equal(await get(`${base}/items/a`), 200);
    t.equal(await get(`${base}/items/b`), 200);
    t.equal(await get(`${base}/items/missing`), 404);
    t.equal(await get(`${base}/items`, { method: 'POST' }), 201);
    t.equal(await get(`${base}/boom`), 500);
    const text = await metrics.render();

    t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/items/:id', status: '200' }), 2);
    t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/items/:id', status: '404' }), 1);
    t.equal(sample(text, 'http_requests_total', { method: 'POST', route: '/items', status: '201' }), 1);
    t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/boom', status: '500' }), 1);
    t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/items/:id', status: '200' }), 2);
    t.notMatch(text, /route="\/items\/a"/, 'no raw URL becomes a label');
  });
}

t.test('a request no route matched is labelled unmatched, not by its URL', async (t) => {
  const metrics = createMetrics();
  const base = await start(t, metrics, false);

  t.equal(await get(`${base}/nowhere/12345`), 404);
  const text = await metrics.render();

  t.equal(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  t.notMatch(text, /nowhere/);
});

t.test('bus round trips are timed by subject and outcome', async (t) => {
  const metrics = createMetrics();

  metrics.observeBus('config.v1.echo', 'ok', 0.004);
  metrics.observeBus('config.v1.echo', 'ok', 0.02);
  metrics.observeBus('protocol.v1.ping', 'no_responders', 0.001);
  const text = await metrics.render();

  t.equal(sample(text, 'bus_request_duration_seconds_count', { subject: 'config.v1.echo', outcome: 'ok' }), 2);
  t.equal(sample(text, 'bus_request_duration_seconds_bucket', { subject: 'config.v1.echo', outcome: 'ok', le: '0.005' }), 1);
  t.equal(sample(text, 'bus_request_duration_seconds_count', { subject: 'protocol.v1.ping', outcome: 'no_responders' }), 1);
});

t.test('each gateway has its own registry with the process metrics', async (t) => {
  const first = createMetrics();
  const second = createMetrics();

  first.observeBus('auth.v1.ping', 'timeout', 1);
  const [a, b] = [await first.render(), await second.render()];

  t.equal(sample(a, 'bus_request_duration_seconds_count', { subject: 'auth.v1.ping', outcome: 'timeout' }), 1);
  t.equal(sample(b, 'bus_request_duration_seconds_count', { subject: 'auth.v1.ping', outcome: 'timeout' }), undefined);
  t.match(b, /^process_cpu_user_seconds_total /m);
  t.match(first.contentType, /^text\/plain/);
});

t.test('past a thousand label sets, new ones are counted together as other', async (t) => {
  const metrics = createMetrics();
  for (let i = 0; i < 1100; i++) {
    const ctx = { method: 'GET', status: 200, routerPath: `/r${i}` } as unknown as Koa.Context;
    await metrics.middleware(ctx, async () => {});
  }
  const text = await metrics.render();
  t.equal(sample(text, 'http_requests_total', { route: '/r0' }), 1);
  t.equal(sample(text, 'http_requests_total', { route: '/r999' }), 1);
  t.equal(sample(text, 'http_requests_total', { route: '/r1000' }), undefined);
  t.equal(sample(text, 'http_requests_total', { method: 'other', route: 'other', status: 'other' }), 100);
  t.equal(sample(text, 'http_request_duration_seconds_count', { route: 'other' }), 100);
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { route: 'other', le: '+Inf' }), 100);
  t.equal(text.split('\n').filter((l) => l.startsWith('http_requests_total{')).length, 1001);
});
