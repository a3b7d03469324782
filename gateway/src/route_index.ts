import Router from '@koa/router';
import FindMyWay from 'find-my-way';
import type { Middleware } from 'koa';

type Layer = Router['stack'][number];

declare module 'koa' {
  interface DefaultContext {
    /** The template of the route that answered (`/api/projects/:id`), set by @koa/router as it runs the route. */
    routerPath?: string;
    /** The name of the route that answered (the operation's id for a registry route), set by @koa/router. */
    routerName?: string;
  }
}

/**
 * The routes of every router in one table, found through find-my-way: the request's method and path pick
 * the route pattern that takes them, and the request is matched by @koa/router against that pattern's
 * candidates only, so that it answers exactly what the whole table would.
 *
 * A pattern's candidates are, in the table's order, every route whose pattern can take a path the pattern
 * takes (the same number of segments, each pair of segments equal or one of them a parameter, whatever
 * their methods) and every route or middleware whose pattern is not made of literal and `:param`
 * segments. Whichever route find-my-way prefers (a literal segment before a parameter), every route of
 * the table that can take the request is among the candidates, and @koa/router decides between them in
 * the table's order as it always has; the other methods of the path are there too, for `Allow`. A path
 * find-my-way finds no route for (404, 405 and OPTIONS answers), and a path that is not plain (an escape,
 * a character outside the unreserved set, an empty segment inside it) is matched against the whole table.
 *
 * Matching the whole table tested every one of its route patterns against every request, a tenth of what
 * a health check cost; bench/parts.bench.ts measures the lookup.
 */
export function indexedRoutes(routers: Router[]): { middleware: Middleware; candidates(method: string, path: string): Router } {
  const all = new Router();
  for (const router of routers) all.use(router.routes());
  const layers = all.stack;
  // A route's shape (its segments, literals lower-cased, parameters as ':'), null for one that is a
  // candidate of every request.
  const shapes = layers.map((layer) => (layer.methods.length > 0 && typeof layer.path === 'string' ? shapeOf(layer.path) : null));
  const whole = indexed(layers);
  const find = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true });
  const groups = new Map<string, Indexed>();
  const registered = new Set<string>();
  for (const [at, layer] of layers.entries()) {
    const shape = shapes[at];
    if (!shape) continue;
    const key = `/${shape.join('/')}`;
    let group = groups.get(key);
    if (!group) {
      const mine = shape;
      group = indexed(layers.filter((_, i) => shapes[i] === null || overlaps(shapes[i] as string[], mine)));
      groups.set(key, group);
    }
    // find-my-way takes one route per method and shape; parameters renamed so that two spellings of a
    // shape are one route.
    let p = 0;
    const pattern = `/${shape.map((s) => (s === ':' ? `:p${p++}` : s)).join('/')}`;
    for (const method of layer.methods) {
      if (registered.has(`${method} ${key}`)) continue;
      registered.add(`${method} ${key}`);
      find.on(method as 'GET', pattern, noop, group);
    }
  }
  const groupFor = (method: string, path: string): Indexed => {
    if (!plainPath.test(path)) return whole;
    return (find.find(method as 'GET', path)?.store as Indexed | undefined) ?? whole;
  };
  return {
    middleware: (ctx, next) => groupFor(ctx.method, ctx.path).handle(ctx, next),
    candidates: (method, path) => groupFor(method, path).router,
  };
}

const noop = () => {};

type Indexed = { router: Router; handle: Middleware };

/** A router of the given routes, and its middleware: the routes, then its 405/OPTIONS check. */
function indexed(layers: Layer[]): Indexed {
  const router = new Router();
  router.stack.push(...layers);
  // The router's own middleware, typed for its context; Koa gives it the same context object.
  const routes = router.routes() as unknown as Middleware;
  const allowed = router.allowedMethods() as unknown as Middleware;
  return { router, handle: (ctx, next) => routes(ctx, () => allowed(ctx, next)) };
}

const param = /^:[A-Za-z_][A-Za-z0-9_]*$/;
const literal = /^[A-Za-z0-9._~-]+$/;
/** A path of unreserved characters in non-empty segments, with or without one trailing slash. */
const plainPath = /^(?:\/[A-Za-z0-9._~-]+)*\/?$/;

/** A route pattern's segments, literals lower-cased and parameters as ':'; null when one is neither. */
function shapeOf(pattern: string): string[] | null {
  if (!pattern.startsWith('/')) return null;
  const segments = pattern === '/' ? [] : pattern.slice(1).split('/');
  if (!segments.every((s) => literal.test(s) || param.test(s))) return null;
  return segments.map((s) => (param.test(s) ? ':' : s.toLowerCase()));
}

/** Whether some path is taken by both shapes. */
function overlaps(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i] || s === ':' || b[i] === ':');
}
