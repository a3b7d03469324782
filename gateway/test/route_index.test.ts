/**
 * The gateway's router (find-my-way over the layers of @koa/router's routers) narrows the routes a request
 * is matched against and changes no answer: for every route of the registry and the gateway's own, and for
 * spellings around them (case, trailing and doubled slashes, a segment more or less, encodings, look-alike
 * letters), each method and path matches exactly what the whole table matches, and is answered exactly as
 * @koa/router's own router and its `allowedMethods` answered it (status, `Allow`, body, and the route,
 * name and parameters the handler sees).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { operations } from '@scada/contracts';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import t from 'tap';
import { indexedRoutes } from '../src/route_index.ts';

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];

function routers(): Router[] {
  const own = new Router();
  const answer: Middleware = (ctx) => {
    ctx.body = { route: ctx.routerPath, name: ctx.routerName ?? null, params: ctx.params, before: ctx.state.before ?? null };
  };
  for (const path of ['/healthz', '/readyz', '/openapi.json', '/', '/docs', '/docs/init.js', '/docs/:file']) own.get(path, answer);
  for (const path of ['/login', '/validate', '/refresh', '/logout']) own.post(path, answer);
  const api = new Router();
  for (const op of operations) {
    if (!op.http) continue;
    const method = op.http.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    api[method](op.operationId, op.http.path, answer);
  }
  // A route with a parameter first, a literal route registered after a parameter route that also takes
  // its paths (the table's order decides, not find-my-way's preference), and a pattern that is not made
  // of literal and `:param` segments, a candidate of every request.
  const odd = new Router();
  odd.get('/:anything/odd', answer);
  odd.get('/api/echo/:word', answer);
  odd.get('/api/echo/first', answer);
  odd.get('/api/files/:name.txt', answer);
  // A middleware of a router (no method): it runs before the routes of the request's path that follow it.
  odd.use('/api/files', async (ctx, next) => {
    ctx.state.before = ctx.routerPath ?? 'middleware';
    await next();
  });
  odd.get('/api/files/:name', answer);
  return [own, api, odd];
}

function spellings(pattern: string): string[] {
  const path = pattern.replaceAll(/:[A-Za-z_]+/g, 'x1');
  const segments = path.split('/');
  return [
    path,
    path.toUpperCase(),
    `${path}/`,
    `${path}//`,
    path.replace('/', '//'),
    `${path}/more`,
    segments.slice(0, -1).join('/') || '/',
    path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
    path.replaceAll('k', '\u212a'),
    path.replaceAll('s', '\u017f'),
    `/x${path}`,
  ];
}

function allPaths(whole: Router): Set<string> {
  return new Set(['', '/', '//', '/api', '/api/', '/nothing', '/API/ECHO', ...whole.stack.flatMap((l) => spellings(String(l.path)))]);
}

function described(result: ReturnType<Router['match']>) {
  const of = (layers: Router['stack']) => layers.map((l) => `${l.methods.join(',')} ${String(l.path)}`);
  return { path: of(result.path), pathAndMethod: of(result.pathAndMethod), route: result.route };
}

t.test('the candidates of a path match what the whole table matches', async (t) => {
  const whole = new Router();
  for (const router of routers()) whole.use(router.routes());
  const index = indexedRoutes(routers());
  const paths = allPaths(whole);
  let compared = 0;
  let narrowed = 0;
  let routed = 0;
  for (const path of paths) {
    for (const method of methods) {
      const candidates = index.candidates(method, path);
      const expected = described(whole.match(path, method));
      if (expected.route && candidates.length < whole.stack.length) narrowed++;
      if (expected.route) routed++;
      const got = described(index.match(method, path));
      if (JSON.stringify(got) !== JSON.stringify(expected)) t.same(got, expected, `${method} ${path}`);
      compared++;
    }
  }
  t.ok(compared > 5000, `${compared} requests compared`);
  t.ok(narrowed > routed * 0.9, `${narrowed} of the ${routed} requests a route takes are matched against a few routes`);
  const echo = index.candidates('GET', '/api/echo').length;
  t.ok(echo < 5, `GET /api/echo is matched against ${echo} routes, not ${whole.stack.length}`);
});

t.test('every request is answered as the whole table answered it', async (t) => {
  const whole = new Router();
  for (const router of routers()) whole.use(router.routes());
  const before = compose([whole.routes() as unknown as Middleware, whole.allowedMethods() as unknown as Middleware]);
  const now = indexedRoutes(routers()).middleware;
  const app = new Koa();
  const answer = async (middleware: Middleware, method: string, path: string) => {
    const req = new IncomingMessage(new Socket());
    req.method = method;
    req.url = path || '/';
    const ctx = app.createContext(req, new ServerResponse(req));
    // What Koa sets before any middleware runs.
    ctx.res.statusCode = 404;
    await middleware(ctx, async () => {});
    return { status: ctx.status, allow: ctx.response.get('Allow'), body: ctx.body ?? null };
  };
  let compared = 0;
  let routed = 0;
  let refused = 0;
  for (const path of allPaths(whole)) {
    for (const method of methods) {
      const expected = await answer(before, method, path);
      const got = await answer(now, method, path);
      if (JSON.stringify(got) !== JSON.stringify(expected)) t.same(got, expected, `${method} ${path}`);
      compared++;
      if (expected.status === 200 && expected.body !== '') routed++;
      if (expected.status === 405 || expected.status === 501) refused++;
    }
  }
  t.ok(compared > 5000, `${compared} requests compared`);
  t.ok(routed > 500 && refused > 1000, `${routed} routed, ${refused} refused with 405 or 501`);
  const files = await answer(now, 'GET', '/api/files/a%20b');
  t.same(
    files.body,
    { route: '/api/files/:name', name: null, params: { name: 'a b' }, before: '/api/files' },
    'a middleware of a router runs first',
  );
});
