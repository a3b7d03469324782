import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Router from '@koa/router';
import { ProblemError } from '@scada/contracts';

/**
 * The files of swagger-ui-dist the page needs, with their media types. Nothing else of the package is
 * served: a name is looked up in this map, never joined to a path as it came.
 */
const assets = new Map<string, string>([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['index.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
]);

/**
 * Scripts only from the gateway itself, no inline script and no eval; Swagger UI sets some styles inline and
 * draws its icons as data: images. Nothing may be loaded from elsewhere: plant networks have no internet.
 */
const pageCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Starts Swagger UI on the gateway's own document; a file, so that the CSP needs no 'unsafe-inline'. */
const initializer = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    queryConfigEnabled: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** Assets change only with the swagger-ui-dist version, so they are cached for a year under a versioned URL. */
const longCache = 'public, max-age=31536000, immutable';

/**
 * `GET /` (a redirect to the console when it is built, else to `/docs`), `GET /openapi.json` (the document, built once on first request) and `GET /docs`, an API reference page
 * rendered by Swagger UI from files of the swagger-ui-dist package: it works without internet access.
 */
export function docsRoutes(getDocument: () => Record<string, unknown>, home: () => string = () => '/docs'): Router {
  const router = new Router();
  const dist = swaggerUiDist();
  const documentJson = once(() => JSON.stringify(getDocument()));
  const readAsset = cachedReader(dist.dir);
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = documentJson();
  });
  // The root leads a person who opened the gateway's address in a browser to the console (or the reference page).
  router.get('/', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.redirect(home());
  });
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', pageCsp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(dist.version);
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = initializer;
  });
  router.get('/docs/:file', async (ctx) => {
    const type = assets.get(ctx.params.file ?? '');
    if (type === undefined) throw new ProblemError('not_found', `No file ${ctx.path}`);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', longCache);
    ctx.type = type;
    ctx.body = await readAsset(ctx.params.file as string);
  });
  return router;
}

/** The folder and version of the installed swagger-ui-dist. */
function swaggerUiDist(): { dir: string; version: string } {
  const require = createRequire(import.meta.url);
  // The package's own path helper, loaded alone: its index would load the whole 1.7 MB bundle into Node.
  const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string;
  const { version } = require('swagger-ui-dist/package.json') as { version: string };
  return { dir: getAbsoluteFSPath(), version };
}

/** The reference page: Swagger UI's styles and bundle, then the initializer, all from this gateway. */
function page(version: string): string {
  const v = encodeURIComponent(version);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>SCADA platform API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css?v=${v}">
  <link rel="stylesheet" href="/docs/index.css?v=${v}">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png?v=${v}" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/favicon-16x16.png?v=${v}" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js?v=${v}"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;
}

/** Reads each allowed asset once and keeps it in memory (about 2 MB in all). */
function cachedReader(dir: string): (name: string) => Promise<Buffer> {
  const cache = new Map<string, Promise<Buffer>>();
  return (name) => {
    let content = cache.get(name);
    if (!content) {
      content = readFile(join(dir, name));
      // A failed read is not kept, so a later request tries again.
      content.catch(() => cache.delete(name));
      cache.set(name, content);
    }
    return content;
  };
}

/** A value computed on first use and kept. */
function once<T>(build: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: build() }).v;
}
