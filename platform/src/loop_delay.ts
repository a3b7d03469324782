/**
 * The event loop's delay as a histogram that is never reset: how late a timer due every 10 ms ran, counted
 * in buckets since the process started. prom-client's `nodejs_eventloop_lag_p99_seconds` is the p99 of
 * the time since the scrape before, which cannot be combined over a longer period or over replicas; two
 * scrapes of this one give the delay's distribution, and so any quantile, over the time between them
 * (`histogram_quantile` over a `rate` of its buckets).
 */
import { setInterval } from 'node:timers';
import { Histogram } from 'prom-client';

/** How often the timer is due, as prom-client's own measure samples (its default precision). */
const everyMs = 10;

/** One process's histogram, started with the first metrics that ask for it; its timer does not hold the process. */
let histogram: Histogram | undefined;

/**
 * The process's `event_loop_delay_seconds` histogram, for `registry.registerMetric`: one for the whole
 * process, so every registry that shows it shows the same counts. Its buckets are fine around the
 * platform's goal of 50 ms.
 */
export function loopDelayMetric(): Histogram {
  if (histogram) return histogram;
  const h = new Histogram({
    name: 'event_loop_delay_seconds',
    help: `How late the event loop ran a timer due every ${everyMs} ms, counted since the process started`,
    buckets: [0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.2, 0.5, 1, 2, 5],
    registers: [],
  });
  histogram = h;
  let due = performance.now() + everyMs;
  setInterval(() => {
    const now = performance.now();
    h.observe(Math.max(0, now - due) / 1000);
    due = now + everyMs;
  }, everyMs).unref();
  return h;
}
