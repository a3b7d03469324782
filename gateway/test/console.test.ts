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
    '/console/index.html.br',
    `/console/assets/${built.assets[0]}.gz`,
    `/console/assets/${built.assets[0]}.br`,
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

/** Reads an answer's bytes as sent, without the decoding fetch would do: a plain HTTP request. */
async function raw(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const { request } = await import('node:http');
  return new Promise<{ status: number; headers: import('node:http').IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('the page and assets are sent Brotli- or gzip-compressed as Accept-Encoding allows, q-values honoured', async (t) => {
  const { brotliDecompressSync, gunzipSync } = await import('node:zlib');
  const base = await start(t);
  const entry = built.assets.find((name) => name.startsWith('main-')) as string;
  for (const path of ['/console/', `/console/assets/${entry}`]) {
    const plain = await raw(`${base}${path}`);
    t.equal(plain.headers['content-encoding'], undefined, `${path}: no Accept-Encoding, sent as it is`);
    t.equal(plain.headers.vary, 'Accept-Encoding', `${path}: Vary names Accept-Encoding also when not compressed`);
    t.equal(Number(plain.headers['content-length']), plain.body.length);
    const cases: [string, string | undefined, (b: Buffer) => Buffer][] = [
      ['br, gzip', 'br', brotliDecompressSync],
      ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['br;q=0, gzip', 'gzip', gunzipSync],
      ['gzip;q=1, br;q=0.5', 'gzip', gunzipSync],
      ['gzip;q=0, br;q=0', undefined, (b) => b],
      ['identity', undefined, (b) => b],
      ['deflate', undefined, (b) => b],
    ];
    const etags = new Set<string>([String(plain.headers.etag)]);
    for (const [accept, coding, decode] of cases) {
      const res = await raw(`${base}${path}`, { 'accept-encoding': accept });
      t.equal(res.status, 200, `${path} ${accept}`);
      t.equal(res.headers['content-encoding'], coding, `${path} with "${accept}" is sent as ${coding ?? 'identity'}`);
      t.equal(res.headers.vary, 'Accept-Encoding');
      t.equal(Number(res.headers['content-length']), res.body.length, 'Content-Length is the length of what is sent');
      t.same(decode(res.body), plain.body, 'it decodes to the file');
      if (coding) t.ok(res.body.length < plain.body.length, 'smaller than the file');
      etags.add(String(res.headers.etag));
    }
    t.equal(etags.size, 3, `${path}: an ETag per coding (identity, br, gzip)`);
  }
});

t.test('HEAD answers the headers of the coding a GET would send, without a body', async (t) => {
  const base = await start(t);
  for (const accept of ['br', 'gzip', '']) {
    const get = await raw(`${base}/console/`, { 'accept-encoding': accept });
    const head = await raw(`${base}/console/`, { 'accept-encoding': accept }, 'HEAD');
    t.equal(head.status, 200);
    t.equal(head.body.length, 0, 'no body');
    for (const name of ['content-encoding', 'content-length', 'etag', 'vary', 'content-type', 'content-security-policy'])
      t.equal(head.headers[name], get.headers[name], `${accept || 'identity'}: ${name} as for GET`);
  }
});

t.test("a request naming the coding's ETag in If-None-Match answers 304 without a body", async (t) => {
  const base = await start(t);
  const entry = `/console/assets/${built.assets.find((name) => name.startsWith('main-'))}`;
  const br = await raw(`${base}${entry}`, { 'accept-encoding': 'br' });
  const again = await raw(`${base}${entry}`, { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) });
  t.equal(again.status, 304);
  t.equal(again.body.length, 0);
  const other = await raw(`${base}${entry}`, { 'accept-encoding': 'gzip', 'if-none-match': String(br.headers.etag) });
  t.equal(other.status, 200, "the Brotli file's tag does not stand for the gzip file");
  t.equal(other.headers['content-encoding'], 'gzip');
});

t.test(
  `the first page as transferred with Accept-Encoding: br, gzip is within 25 KB (${(built.initialBrotliBytes / 1024).toFixed(1)} KB)`,
  async (t) => {
    const base = await start(t);
    // The page, its entry, the chunks the entry imports and the styles: every file of the build but those
    // fetched on demand.
    const files = ['/console/', ...built.assets.filter((name) => !(name in built.lazyGzipBytes)).map((name) => `/console/assets/${name}`)];
    let bytes = 0;
    for (const file of files) {
      const res = await raw(`${base}${file}`, { 'accept-encoding': 'br, gzip' });
      t.equal(res.headers['content-encoding'], 'br', file);
      bytes += res.body.length;
    }
    t.ok(bytes <= 25 * 1024, `${files.length} files, ${bytes} bytes`);
  },
);
