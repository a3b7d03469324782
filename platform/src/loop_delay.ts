/**
 * The event loop's delay as a histogram that is never reset: how late a timer due every 10 ms ran, counted
 * in buckets since the process started. prom-client's `nodejs_eventloop_lag_p99_seconds` is the p99 of
 * the time since the scrape before, which cannot be combined over a longer period or over replicas; two
 * scrapes of this one give the delay's distribution, and so any quantile, over the time between them
 * (`histogram_quantile` over a `rate` of its buckets).
 */
import { setInterval } from 'node:timers';

/** How often the timer is due, as prom-client's own measure samples (its default precision). */
const everyMs = 10;

/** The buckets' upper bounds in seconds: fine around the platform's goal of 50 ms. */
export const loopDelayBuckets = [0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.2, 0.5, 1, 2, 5] as const;

const name = 'event_loop_delay_seconds';
const help = `How late the event loop ran a timer due every ${everyMs} ms, counted since the process started`;

/** One process's measure, started with the first metrics that ask for it and never stopped (its timer does not hold the process). */
let counts: { inBucket: number[]; sum: number; count: number } | undefined;

function started(): NonNullable<typeof counts> {
  if (counts) return counts;
  const c = { inBucket: loopDelayBuckets.map(() => 0), sum: 0, count: 0 };
  counts = c;
  let due = performance.now() + everyMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due) / 1000;
    due = now + everyMs;
    let i = 0;
    while (i < loopDelayBuckets.length && late > loopDelayBuckets[i]!) i++;
    if (i < loopDelayBuckets.length) c.inBucket[i]!++;
    c.sum += late;
    c.count++;
  }, everyMs);
  timer.unref();
  return c;
}

/**
 * The histogram as prom-client's registry reads a metric (its name, help, type and `get()`), for
 * `registry.registerMetric`; every registry of the process shows the same counts.
 */
export function loopDelayMetric(): { name: string; help: string; type: string; aggregator: 'sum'; get(): Promise<unknown>; reset(): void } {
  const c = started();
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      let below = 0;
      const values = [
        ...loopDelayBuckets.map((le, i) => ({ labels: { le }, value: (below += c.inBucket[i]!), metricName: `${name}_bucket` })),
        { labels: { le: '+Inf' }, value: c.count, metricName: `${name}_bucket` },
        { labels: {}, value: c.sum, metricName: `${name}_sum` },
        { labels: {}, value: c.count, metricName: `${name}_count` },
      ];
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    // Never reset: the point of it is a count since the start.
    reset: () => {},
  };
}
