import Router from '@koa/router';
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
 * The routes of every router in one table, matched through an index: a request is matched only against
 * the routes that can take its path, found by its number of segments and its first two segments, and
 * a path known only for other methods answers 405 with `Allow` as from the whole table.
 *
 * Matching the whole table tested every one of its 121 route patterns against every request, a tenth
 * of what a health check cost. The index only narrows the candidates: each group is a router of its
 * own, in the table's order, that still tests its patterns, so it answers what the whole table would.
 * A route whose first two segments are not both literal (or that is not made of literal and `:param`
 * segments) is a candidate of every group; a request path with an empty segment inside it is matched
 * against the whole table.
 *
 * Measured beside find-my-way (bench/parts.bench.ts, 2026-11-26): find-my-way finds the route of the five
 * hot paths 4.7–5.9 × as fast (about 0.4 µs against 2), so this index has no margin to be kept for. It
 * stays until the router is moved over, which means answering as this table does where find-my-way would
 * not: a static segment beating a parameter whatever the table's order, 405 with `Allow` and OPTIONS from
 * every method of a path, and `routerPath`/`routerName` for the metrics and the operation routes.
 */
export function indexedRoutes(routers: Router[]): { middleware: Middleware; candidates(path: string): Router } {
  const all = new Router();
  for (const router of routers) all.use(router.routes());
  // A route's key, null for one that is a candidate of every group.
  const keys = all.stack.map((layer) => (layer.methods.length > 0 && typeof layer.path === 'string' ? keyOfPattern(layer.path) : null));
  // Each group keeps the table's order among its own routes and the routes of every group.
  const groupOf = (key: string | null) => indexed(all.stack.filter((_, at) => keys[at] === null || keys[at] === key));
  const whole = indexed(all.stack);
  const rest = groupOf(null);
  const groups = new Map<string, Indexed>();
  for (const key of keys) if (key !== null && !groups.has(key)) groups.set(key, groupOf(key));
  const groupFor = (path: string): Indexed => {
    const key = keyOfPath(path);
    return key === null ? whole : (groups.get(key) ?? rest);
  };
  return { middleware: (ctx, next) => groupFor(ctx.path).handle(ctx, next), candidates: (path) => groupFor(path).router };
}

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

/**
 * A route pattern's key: its number of segments and its first two, lower-cased (routes match without
 * regard to case); null when a segment is neither a literal nor a `:param`, or one of the first two is
 * not literal.
 */
function keyOfPattern(pattern: string): string | null {
  if (!pattern.startsWith('/')) return null;
  const segments = pattern === '/' ? [] : pattern.slice(1).split('/');
  if (!segments.every((s) => literal.test(s) || param.test(s))) return null;
  if (segments.slice(0, 2).some((s) => !literal.test(s))) return null;
  return keyOf(segments);
}

/**
 * A request path's key, read the way the routes match: one trailing slash is not a segment. Null for a
 * path with an empty segment inside it, which is matched against the whole table.
 */
function keyOfPath(path: string): string | null {
  if (!path.startsWith('/')) return null;
  const inner = path.length > 1 && path.endsWith('/') ? path.slice(1, -1) : path.slice(1);
  const segments = inner === '' ? [] : inner.split('/');
  if (segments.some((s) => s === '')) return null;
  return keyOf(segments);
}

function keyOf(segments: string[]): string {
  return `${segments.length}/${(segments[0] ?? '').toLowerCase()}/${(segments[1] ?? '').toLowerCase()}`;
}
