import type Koa from 'koa';
import type { LiveReplicas } from '@scada/platform';
import type { ReadOutcome } from './read_cache.ts';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How a bus request ended, as the gateway's bus client saw it. */
export type BusOutcome = 'ok' | 'error' | 'timeout' | 'no_responders';

/**
 * The gateway's Prometheus metrics: a Koa middleware that counts and times every HTTP request by route
 * template, a hook for bus round trips, and the text exposition for `GET /metrics`.
 */
export type GatewayMetrics = {
  middleware: Koa.Middleware;
  observeBus(subject: string, outcome: BusOutcome, seconds: number): void;
  /** Counts a cacheable read by how it was answered. */
  countRead(outcome: ReadOutcome): void;
  /** Counts a sign-in the gateway answered itself (429 after a wait), its address still within the Retry-After of an `overloaded`. */
  countHeldBack(): void;
  contentType: string;
  render(): Promise<string>;
  /** The registry, for the metrics of other parts of the gateway (the live channel). */
  registry: Registry;
};

/** Latency buckets in seconds; the lower ones resolve the in-process bus and cached answers. */
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request that no route matched: the raw URL would make the label set unbounded. */
const unmatched = 'unmatched';

/**
 * Creates the metrics of one gateway in a registry of its own (with the default process metrics), so that
 * several gateways in one process, as in tests, never share or double-register a metric. With `replicas`,
 * a gauge of each service's live replicas as this gateway hears them, read at each scrape.
 */
export function createMetrics(replicas?: () => LiveReplicas): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status',
    labelNames,
    buckets,
    registers: [registry],
  });
  const bus = new Histogram({
    name: 'bus_request_duration_seconds',
    help: 'Time of a request over the bus, by subject and outcome',
    labelNames: ['subject', 'outcome'] as const,
    buckets,
    registers: [registry],
  });
  const heldBack = new Counter({
    name: 'login_held_back_total',
    help: 'Sign-ins answered 429 by the gateway itself, after a wait: their address had been answered 503 overloaded and its Retry-After had not passed',
    registers: [registry],
  });
  const reads = new Counter({
    name: 'gateway_read_cache_total',
    help: 'Cacheable reads by how they were answered: hit (from the cache), shared (by an identical read on its way), miss (from the service, then kept), off (from the service: no versions to trust a cache with)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const readCounters = { hit: reads.labels('hit'), shared: reads.labels('shared'), miss: reads.labels('miss'), off: reads.labels('off') };
  if (replicas) {
    new Gauge({
      name: 'service_live_replicas',
      help: 'Live replicas of each service, as this gateway hears their presence beats',
      labelNames: ['service'] as const,
      registers: [registry],
      collect() {
        for (const [service, list] of Object.entries(replicas())) this.set({ service }, list.length);
      },
    });
  }
  return {
    middleware: httpMetrics(requests, duration),
    observeBus: (subject, outcome, seconds) => bus.observe({ subject, outcome }, seconds),
    countHeldBack: () => heldBack.inc(),
    countRead: (outcome) => readCounters[outcome].inc(),
    contentType: registry.contentType,
    render: () => registry.metrics(),
    registry,
  };
}

type HttpLabel = 'method' | 'route' | 'status';

/** Label sets remembered at most; past it the memory starts afresh (a client inventing methods cannot grow it). */
const maxLabelSets = 1000;

/**
 * Records each request once it is answered. The router sets the matched route only after this
 * middleware has called `next()`, so the labels are read in `finally`, with the error's status when an
 * error passes through on its way to an outer problem middleware. The counter and histogram children of
 * each label set are looked up once and kept: prom-client hashes the labels of every call otherwise.
 */
function httpMetrics(requests: Counter<HttpLabel>, duration: Histogram<HttpLabel>): Koa.Middleware {
  const children = new Map<string, { count: { inc(): void }; time: { observe(seconds: number): void } }>();
  const childrenOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let known = children.get(key);
    if (!known) {
      const labels = { method, route, status: String(status) };
      known = { count: requests.labels(labels), time: duration.labels(labels) };
      if (children.size >= maxLabelSets) children.clear();
      children.set(key, known);
    }
    return known;
  };
  return async function recordHttpMetrics(ctx, next) {
    const started = performance.now();
    let thrown: { status: number } | undefined;
    try {
      await next();
    } catch (err) {
      thrown = { status: statusOfError(err) };
      throw err;
    } finally {
      const { count, time } = childrenOf(ctx.method, routeOf(ctx), thrown?.status ?? ctx.status);
      time.observe((performance.now() - started) / 1000);
      count.inc();
    }
  };
}

/** The route template @koa/router matched, or `unmatched`. */
function routeOf(ctx: Koa.Context): string {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof route === 'string') return route;
  // A RegExp route is still a template, never a URL; stringify it like the router does.
  return route instanceof RegExp ? route.toString() : unmatched;
}

/** The status an error is answered with, as Koa reads it: `status` or `statusCode` when an HTTP error status, else 500. */
function statusOfError(err: unknown): number {
  const e = typeof err === 'object' && err !== null ? (err as { status?: unknown; statusCode?: unknown }) : {};
  const status = e.status ?? e.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}
