import type Koa from 'koa';
import { loopDelayMetric, type LiveReplicas } from '@scada/platform';
import type { ReadOutcome } from './read_cache.ts';
import { collectDefaultMetrics, Counter, Gauge, type Metric, Registry } from 'prom-client';

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
  const http = new Tallies(['method', 'route', 'status']);
  register(
    registry,
    http.counter('http_requests_total', 'HTTP requests answered, by method, route template and status'),
    http.histogram('http_request_duration_seconds', 'Time to answer an HTTP request, by method, route template and status'),
  );
  const bus = new Tallies(['subject', 'outcome']);
  register(registry, bus.histogram('bus_request_duration_seconds', 'Time of a request over the bus, by subject and outcome'));
  registry.registerMetric(loopDelayMetric());
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
    middleware: httpMetrics(http),
    observeBus: (subject, outcome, seconds) => bus.observe(`${outcome} ${subject}`, () => ({ subject, outcome }), seconds),
    countHeldBack: () => heldBack.inc(),
    countRead: (outcome) => readCounters[outcome].inc(),
    contentType: registry.contentType,
    render: () => registry.metrics(),
    registry,
  };
}

/** Label sets counted apart at most; past it, new ones are counted together as `other` (a client inventing methods cannot grow it). */
const maxLabelSets = 1000;

type Labels = Record<string, string>;

/** The observations of one label set: how many ended in each bucket (not cumulative), their sum and count. */
type Tally = { labels: Labels; inBucket: number[]; sum: number; count: number };

/** What prom-client's registry reads of a metric: its name, help, type and `get()`. */
type Exposed = { name: string; help: string; type: string; aggregator: 'sum'; get(): Promise<unknown>; reset(): void };

/**
 * Timings kept as plain numbers per label set, written out as prom-client's histogram (and counter of
 * the same observations) would be, at each scrape. prom-client checks and hashes the labels of every
 * observation, a few microseconds a request; here an observation costs a map lookup by a key the caller
 * builds and three additions. Past `maxLabelSets` label sets, new ones are counted together under the
 * label values `other`. Kept by measure: a request counted and timed here ran 6.6–7.1 × (medians of two
 * runs; rounds 5.6–9.2) as many a second as through prom-client's children of the same counter and histogram (`labels()` kept per label set;
 * the histogram's child still hashes its labels on every observation), bench/parts.bench.ts, 2026-11-26.
 */
export class Tallies {
  readonly #tallies = new Map<string, Tally>();
  readonly #labelNames: readonly string[];
  #overflow: Tally | undefined;

  constructor(labelNames: readonly string[]) {
    this.#labelNames = labelNames;
  }

  /** Counts one observation of the label set named `key`; `labels` is called only for a new one. */
  observe(key: string, labels: () => Labels, seconds: number): void {
    let tally = this.#tallies.get(key);
    if (!tally) {
      if (this.#tallies.size < maxLabelSets) this.#tallies.set(key, (tally = newTally(labels())));
      else tally = this.#overflow ??= newTally(Object.fromEntries(this.#labelNames.map((name) => [name, 'other'])));
    }
    let i = 0;
    while (i < buckets.length && seconds > (buckets[i] as number)) i++;
    if (i < buckets.length) (tally.inBucket[i] as number)++;
    tally.sum += seconds;
    tally.count++;
  }

  /** The observations' count per label set, as a counter. */
  counter(name: string, help: string): Exposed {
    return this.#exposed(name, help, 'counter', (t) => [{ labels: t.labels, value: t.count }]);
  }

  /** The observations as a histogram with the gateway's buckets. */
  histogram(name: string, help: string): Exposed {
    return this.#exposed(name, help, 'histogram', (t) => {
      let below = 0;
      return [
        ...buckets.map((le, i) => ({
          labels: { le, ...t.labels },
          value: (below += t.inBucket[i] as number),
          metricName: `${name}_bucket`,
        })),
        { labels: { le: '+Inf', ...t.labels }, value: t.count, metricName: `${name}_bucket` },
        { labels: t.labels, value: t.sum, metricName: `${name}_sum` },
        { labels: t.labels, value: t.count, metricName: `${name}_count` },
      ];
    });
  }

  #exposed(name: string, help: string, type: string, values: (t: Tally) => unknown[]): Exposed {
    const all = () => (this.#overflow ? [...this.#tallies.values(), this.#overflow] : [...this.#tallies.values()]);
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: all().flatMap(values) }),
      reset: () => {
        this.#tallies.clear();
        this.#overflow = undefined;
      },
    };
  }
}

function register(registry: Registry, ...metrics: Exposed[]): void {
  // The registry reads the name, help, type and `get()` of what it is given; its type names only its own classes.
  for (const metric of metrics) registry.registerMetric(metric as unknown as Metric);
}

/**
 * Records each request once it is answered. The router sets the matched route only after this
 * middleware has called `next()`, so the labels are read in `finally`, with the error's status when an
 * error passes through on its way to an outer problem middleware.
 */
function httpMetrics(http: Tallies): Koa.Middleware {
  return async function recordHttpMetrics(ctx, next) {
    const started = performance.now();
    let thrown: { status: number } | undefined;
    try {
      await next();
    } catch (err) {
      thrown = { status: statusOfError(err) };
      throw err;
    } finally {
      const method = ctx.method;
      const route = routeOf(ctx);
      const status = thrown?.status ?? ctx.status;
      http.observe(`${method} ${status} ${route}`, () => ({ method, route, status: String(status) }), (performance.now() - started) / 1000);
    }
  };
}

function newTally(labels: Labels): Tally {
  return { labels, inBucket: buckets.map(() => 0), sum: 0, count: 0 };
}

/** The route template @koa/router matched, or `unmatched`. */
function routeOf(ctx: Koa.Context): string {
  return ctx.routerPath ?? unmatched;
}

/** The status an error is answered with, as Koa reads it: `status` or `statusCode` when an HTTP error status, else 500. */
function statusOfError(err: unknown): number {
  const e = typeof err === 'object' && err !== null ? (err as { status?: unknown; statusCode?: unknown }) : {};
  const status = e.status ?? e.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}
