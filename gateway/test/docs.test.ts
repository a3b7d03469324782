import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import t, { type Test } from 'tap';
import { docsRoutes } from '../src/routes/docs.ts';

/** Serves the docs routes on a loopback port; counts how often the document is built. */
async function start(t: Test): Promise<{ base: string; builds: () => number }> {
  let built = 0;
  const router = docsRoutes(() => {
    built += 1;
    return { openapi: '3.1.0', info: { title: 'SCADA platform API', version: '20260422-7' }, paths: {} };
  });
  const app = new Koa();
  app.silent = true;
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, builds: () => built };
}

t.test('GET /docs answers an HTML page under a CSP that forbids inline and foreign scripts', async (t) => {
  const { base } = await start(t);

  const res = await fetch(`${base}/docs`);
  const html = await res.text();

  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  const scriptSrc = csp
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('script-src'));
  t.equal(scriptSrc, "script-src 'self'");
  t.match(csp, /default-src 'none'/);
  t.match(html, /<link rel="stylesheet" href="\/docs\/swagger-ui\.css/);
  t.match(html, /<script src="\/docs\/swagger-ui-bundle\.js/);
  t.match(html, /<script src="\/docs\/init\.js"><\/script>/);
  t.notMatch(html, /<script>/, 'no inline script');
  t.notMatch(html, /https?:\/\//, 'nothing from another host');
});

t.test('the page assets are served from the package with a long cache', async (t) => {
  const { base } = await start(t);

  for (const [file, type] of [
    ['swagger-ui.css', /^text\/css/],
    ['swagger-ui-bundle.js', /^text\/javascript/],
    ['favicon-32x32.png', /^image\/png/],
  ] as const) {
    const res = await fetch(`${base}/docs/${file}?v=1`);
    const body = await res.arrayBuffer();

    t.equal(res.status, 200, file);
    t.match(res.headers.get('content-type'), type, file);
    t.match(res.headers.get('cache-control'), /max-age=31536000/, file);
    t.ok(body.byteLength > 100, `${file} has content`);
  }
});

t.test('the initializer is a script file that loads /openapi.json', async (t) => {
  const { base } = await start(t);

  const res = await fetch(`${base}/docs/init.js`);
  const script = await res.text();

  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/javascript/);
  t.match(script, /url: '\/openapi\.json'/);
  t.match(script, /validatorUrl: null/, 'no online validator badge');
});

t.test('files outside the allow-list are 404, traversal included', async (t) => {
  const { base } = await start(t);

  for (const path of [
    '/docs/unknown.js',
    '/docs/swagger-ui.js.map',
    '/docs/package.json',
    '/docs/..%2Fpackage.json',
    '/docs/%2E%2E%2F%2E%2E%2Fpackage.json',
  ]) {
    const res = await fetch(`${base}${path}`);
    await res.arrayBuffer();

    t.equal(res.status, 404, path);
  }
});

t.test('GET /openapi.json answers the document as JSON, built once', async (t) => {
  const { base, builds } = await start(t);

  const first = await fetch(`${base}/openapi.json`);
  const doc = (await first.json()) as { openapi: string };
  const second = await fetch(`${base}/openapi.json`);
  await second.arrayBuffer();

  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), /^application\/json/);
  t.equal(doc.openapi, '3.1.0');
  t.equal(builds(), 1);
});
