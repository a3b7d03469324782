import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import t, { type Test } from 'tap';
import { buildConsole } from '@scada/console/build';
import { problemDetails } from '../src/middleware/problem.ts';
import { consoleRoutes } from '../src/routes/console.ts';

const built = await buildConsole();

/** Serves the console's routes on a loopback port, behind the problem middleware as in the gateway. */
async function start(t: Test): Promise<string> {
  const app = new Koa();
  app.silent = true;
  app.use(problemDetails());
  app.use(consoleRoutes().routes());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('GET /console/ answers the page under a CSP without inline script, inline style or eval', async (t) => {
  const base = await start(t);
  const res = await fetch(`${base}/console/`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.equal(res.headers.get('cache-control'), 'no-cache', 'the page is asked again, so a new build is seen at once');
  const csp = (res.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
  t.ok(csp.includes("script-src 'self'"));
  t.ok(csp.includes("style-src 'self'"));
  t.ok(csp.includes("default-src 'none'"));
  t.notMatch(csp.join(';'), /unsafe-inline|unsafe-eval/);
  const html = await res.text();
  t.notMatch(html, /<script>|<style|style=/, 'no inline script or style in the page');
  const scripts = [...html.matchAll(/src="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
  t.equal(scripts.length, 1, 'one entry module');
});

t.test('the assets answer with their type, cached for a year under their hashed names', async (t) => {
  const base = await start(t);
  for (const name of built.assets) {
    const res = await fetch(`${base}/console/assets/${name}`);
    t.equal(res.status, 200, name);
    t.match(res.headers.get('content-type'), name.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.match(name, /-[A-Z0-9]{8}\.(js|css)$/, 'named by its content');
  }
});

t.test('a name that is not a file of the build answers 404 problem details, also one that climbs out', async (t) => {
  const base = await start(t);
  for (const path of [
    '/console/assets/nothing.js',
    '/console/assets/..%2F..%2Fpackage.json',
    '/console/assets/%2e%2e%2fbuild.ts',
    '/console/index.html',
  ]) {
    const res = await fetch(`${base}${path}`);
    t.equal(res.status, 404, path);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/, path);
  }
});

t.test('/console leads to /console/', async (t) => {
  const base = await start(t);
  const res = await fetch(`${base}/console`, { redirect: 'manual' });
  t.equal(res.status, 302);
  t.equal(res.headers.get('location'), '/console/');
});

t.test(`the first page's files stay within the budget of 25 KB gzipped (${(built.initialGzipBytes / 1024).toFixed(1)} KB)`, async (t) => {
  t.ok(built.initialGzipBytes <= 25 * 1024);
  t.ok(
    Object.keys(built.lazyGzipBytes).some((name) => name.startsWith('code_editor-')),
    'the code editor is a chunk of its own',
  );
});
