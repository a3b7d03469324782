import Router from '@koa/router';
import FindMyWay from 'find-my-way';
import compose from 'koa-compose';
import type { Context, Middleware, Next } from 'koa';

type Layer = Router['stack'][number];

declare module 'koa' {
  interface DefaultContext {
    /** The template of the route that answered (`/api/projects/:id`). */
    routerPath?: string;
    /** The name of the route that answered (the operation's id for a registry route). */
    routerName?: string;
  }
}

/** What a request matches: the routes of its path (any method), those of its method, and whether one is a route. */
export type RouteMatch = { path: Layer[]; pathAndMethod: Layer[]; route: boolean };

/**
 * The gateway's one router. Routes are declared with @koa/router's API (each part of the gateway builds a
 * `Router`), and their layers (pattern, methods, name, middleware) make one table; a request is routed by
 * find-my-way, and nothing else matches it: find-my-way picks the shape of route its method and path can
 * take, and the request runs the first route of the table, in the table's order, among those of that shape
 * and its method whose pattern takes the path (almost always the one route find-my-way found: one test of
 * that route's pattern, which also gives its parameters). What @koa/router's own router and its
 * `allowedMethods` answered is answered the same: a path no route takes falls through (404 downstream); a
 * path some routes take with other methods gets 405 with `Allow`, OPTIONS 200 with `Allow`, an unknown
 * method 501 with `Allow`. A path find-my-way does not find, or one that is not plain (an escape, a
 * character outside the unreserved set, an empty segment inside it), is matched against the whole table.
 *
 * A route's shape is its segments (literals lower-cased, parameters as ':'); the candidates of a shape are,
 * in the table's order, every route whose pattern can take a path the shape takes (the same number of
 * segments, each pair equal or one a parameter) and every route or middleware whose pattern is not made
 * of literal and `:param` segments. Whichever route find-my-way prefers (a literal segment before a
 * parameter), every route of the table that can take the request is among them, so the table's order
 * decides as it always has.
 *
 * Until 2026-11-30 the candidates were a @koa/router router of their own, which matched the request again
 * (every candidate's pattern, any method), built its middleware chain for every request and wrapped it in
 * its `allowedMethods` check: two routers stacked (bench/README.md, "one router").
 */
export function indexedRoutes(routers: Router[]): {
  middleware: Middleware;
  /** What the request matches, as @koa/router's `Router.match` of the whole table would say. */
  match(method: string, path: string): RouteMatch;
  /** The routes a request is tested against, in the table's order. */
  candidates(method: string, path: string): readonly Layer[];
} {
  const all = new Router();
  for (const router of routers) all.use(router.routes());
  const layers = all.stack;
  const run = new Map(layers.map((layer) => [layer, runner(layer)]));
  const whole = group(layers);
  // A route's shape, null for one that is a candidate of every request.
  const shapes = layers.map((layer) => (layer.methods.length > 0 && typeof layer.path === 'string' ? shapeOf(layer.path) : null));
  const find = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true });
  const groups = new Map<string, Group>();
  const registered = new Set<string>();
  for (const [at, layer] of layers.entries()) {
    const shape = shapes[at];
    if (!shape) continue;
    const key = `/${shape.join('/')}`;
    let found = groups.get(key);
    if (!found) {
      const mine = shape;
      found = group(layers.filter((_, i) => shapes[i] === null || overlaps(shapes[i] as string[], mine)));
      groups.set(key, found);
    }
    // find-my-way takes one route per method and shape; parameters renamed so that two spellings of a
    // shape are one route.
    let p = 0;
    const pattern = `/${shape.map((s) => (s === ':' ? `:p${p++}` : s)).join('/')}`;
    for (const method of layer.methods) {
      if (registered.has(`${method} ${key}`)) continue;
      registered.add(`${method} ${key}`);
      find.on(method as 'GET', pattern, noop, found);
    }
  }
  const groupFor = (method: string, path: string): Group => {
    if (!plainPath.test(path)) return whole;
    return (find.find(method as 'GET', path)?.store as Group | undefined) ?? whole;
  };

  const middleware: Middleware = (ctx, next) => {
    const path = ctx.path;
    const method = ctx.method.toUpperCase();
    const candidates = groupFor(method, path);
    // Each candidate's pattern is run once: its match both selects the route and gives its parameters.
    let first: Layer | undefined;
    let firstMatch: RegExpExecArray | undefined;
    let more: [Layer, RegExpExecArray][] | undefined;
    let route = false;
    for (const layer of candidates.byMethod.get(method) ?? candidates.anyMethod) {
      const found = layer.regexp.exec(path);
      if (found === null) continue;
      if (first === undefined) {
        first = layer;
        firstMatch = found;
      } else (more ??= []).push([layer, found]);
      if (layer.methods.length > 0) route = true;
    }
    const allowed = () => allowedMethods(ctx, next, candidates.all);
    if (!route || first === undefined) return allowed();
    if (more === undefined) return (run.get(first) as Runner)(ctx, allowed, path, firstMatch as RegExpExecArray);
    const chain: [Layer, RegExpExecArray][] = [[first, firstMatch as RegExpExecArray], ...more];
    return compose(
      chain.map(
        ([layer, found]): Middleware =>
          (c, n) =>
            (run.get(layer) as Runner)(c, n, path, found),
      ),
    )(ctx, allowed);
  };
  return {
    middleware,
    match: (method, path) => {
      const found: RouteMatch = { path: [], pathAndMethod: [], route: false };
      const upper = method.toUpperCase();
      for (const layer of groupFor(upper, path).all) {
        if (!layer.match(path)) continue;
        found.path.push(layer);
        if (layer.methods.length === 0 || layer.methods.includes(upper)) {
          found.pathAndMethod.push(layer);
          if (layer.methods.length > 0) found.route = true;
        }
      }
      return found;
    },
    candidates: (method, path) => {
      const found = groupFor(method.toUpperCase(), path);
      return found.byMethod.get(method.toUpperCase()) ?? found.anyMethod;
    },
  };
}

const noop = () => {};

/** The candidates of a shape: all of them, and those that may take each method (with every middleware). */
type Group = { all: Layer[]; byMethod: Map<string, Layer[]>; anyMethod: Layer[] };

function group(layers: Layer[]): Group {
  const anyMethod = layers.filter((l) => l.methods.length === 0);
  const byMethod = new Map<string, Layer[]>();
  for (const method of new Set(layers.flatMap((l) => l.methods)))
    byMethod.set(
      method,
      layers.filter((l) => l.methods.length === 0 || l.methods.includes(method)),
    );
  return { all: layers, byMethod, anyMethod };
}

/** Runs a route's middleware for a path its pattern matched (`found`, the match's captures). */
type Runner = (ctx: Context, next: Next, path: string, found: RegExpExecArray) => Promise<unknown>;

/**
 * A route's middleware, after the parameters, template and name of the route are set on the context: the
 * parameters from the match the router made (as @koa/router's `captures` and `params` give them, without
 * matching the path a second time).
 */
function runner(layer: Layer): Runner {
  const handle = compose(layer.stack as Middleware[]);
  const noCaptures = layer.opts.ignoreCaptures === true || layer.paramNames.length === 0;
  const empty: string[] = [];
  return (ctx, next, path, found) => {
    ctx.params = layer.params(path, noCaptures ? empty : found.slice(1), ctx.params);
    ctx.routerPath = layer.path as string;
    ctx.routerName = layer.name || undefined;
    return handle(ctx, next);
  };
}

/** What @koa/router's router accepts of methods; any other gets 501. */
const implemented = new Set(['HEAD', 'OPTIONS', 'GET', 'PUT', 'PATCH', 'POST', 'DELETE']);

/**
 * After what follows the routes (nothing answered: 404): 501 for a method no router knows, 200 to OPTIONS,
 * 405 to another method of a path some routes take, each with `Allow` (the methods of the routes that take
 * the path, in the table's order), as @koa/router's `allowedMethods` answers.
 */
async function allowedMethods(ctx: Context, next: Next, candidates: Layer[]): Promise<void> {
  await next();
  if (ctx.status && ctx.status !== 404) return;
  const path = ctx.path;
  const allowed = new Set<string>();
  for (const layer of candidates) if (layer.match(path)) for (const method of layer.methods) allowed.add(method);
  const list = [...allowed].join(', ');
  const method = ctx.method.toUpperCase();
  if (!implemented.has(method)) {
    ctx.status = 501;
    ctx.set('Allow', list);
  } else if (method === 'OPTIONS' && allowed.size > 0) {
    ctx.status = 200;
    ctx.body = '';
    ctx.set('Allow', list);
  } else if (allowed.size > 0 && !allowed.has(method)) {
    ctx.status = 405;
    ctx.set('Allow', list);
  }
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
