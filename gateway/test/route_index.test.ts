/**
 * The route index (find-my-way) narrows the routes a request is matched against and changes no answer:
 * for every route of the registry and the gateway's own, and for spellings around them (case, trailing
 * and doubled slashes, a segment more or less, encodings, look-alike letters), the candidates of each
 * method and path match exactly what the whole table matches.
 */
import { operations } from '@scada/contracts';
import Router from '@koa/router';
import t from 'tap';
import { indexedRoutes } from '../src/route_index.ts';

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];

function routers(): Router[] {
  const own = new Router();
  const answer = () => {};
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

function described(result: ReturnType<Router['match']>) {
  const of = (layers: Router['stack']) => layers.map((l) => `${l.methods.join(',')} ${String(l.path)}`);
  return { path: of(result.path), pathAndMethod: of(result.pathAndMethod), route: result.route };
}

t.test('the candidates of a path match what the whole table matches', async (t) => {
  const whole = new Router();
  for (const router of routers()) whole.use(router.routes());
  const index = indexedRoutes(routers());
  const paths = new Set([
    '',
    '/',
    '//',
    '/api',
    '/api/',
    '/nothing',
    '/API/ECHO',
    ...whole.stack.flatMap((l) => spellings(String(l.path))),
  ]);
  let compared = 0;
  let narrowed = 0;
  let routed = 0;
  for (const path of paths) {
    for (const method of methods) {
      const candidates = index.candidates(method, path);
      const expected = described(whole.match(path, method));
      if (expected.route && candidates.stack.length < whole.stack.length) narrowed++;
      if (expected.route) routed++;
      const got = described(candidates.match(path, method));
      if (JSON.stringify(got) !== JSON.stringify(expected)) t.same(got, expected, `${method} ${path}`);
      compared++;
    }
  }
  t.ok(compared > 5000, `${compared} requests compared`);
  t.ok(narrowed > routed * 0.9, `${narrowed} of the ${routed} requests a route takes are matched against a few routes`);
  const echo = index.candidates('GET', '/api/echo').stack.length;
  t.ok(echo < 5, `GET /api/echo is matched against ${echo} routes, not ${whole.stack.length}`);
});
