/** Reading what a process's `/metrics` answers (Prometheus text), for the tests and benches that check it. */

/** A histogram as one scrape shows it: each bucket's cumulative count by its upper bound (`le`, `+Inf` last), and the count. */
export type ScrapedHistogram = { buckets: Map<string, number>; count: number };

/** The histogram `name` (without labels) in a scrape's text; undefined when the text has none. */
export function histogramOf(text: string, name: string): ScrapedHistogram | undefined {
  const buckets = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))) buckets.set(m[1]!, Number(m[2]));
  const count = Number(new RegExp(`^${name}_count (\\d+)$`, 'm').exec(text)?.[1]);
  return buckets.size > 0 && Number.isFinite(count) ? { buckets, count } : undefined;
}
