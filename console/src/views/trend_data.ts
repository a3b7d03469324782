/**
 * The trend screen's data: each plotted attribute's history (`GET /api/connections/{id}/history`) turned
 * into what a chart draws (seconds on the time axis, numbers, `null` where the session was down, each
 * bucket's min and max, which points were of bad quality), and the live tail from `/api/live` appended
 * while the period ends now.
 */
import { api, currentSpace, messageOf } from '../api.ts';
import { leavesOf, maxTrendSeries, type TrendSelection, type TrendSeries } from '../trend_link.ts';

/** The ranges a trend offers, ending now: their names in the URL and their length. */
export const trendRanges: Record<string, number> = {
  '5m': 300_000,
  '1h': 3_600_000,
  '8h': 28_800_000,
  '24h': 86_400_000,
  '7d': 604_800_000,
  '30d': 2_592_000_000,
};

/** The selection a trend URL's query names; what it cannot read is left out. */
export function parseTrendQuery(search: string): TrendSelection {
  const q = new URLSearchParams(search);
  const series: TrendSeries[] = [];
  for (const s of q.getAll('s')) {
    const at = s.indexOf(':');
    if (at > 0 && at < s.length - 1 && series.length < maxTrendSeries)
      series.push({ connectionId: s.slice(0, at), reference: s.slice(at + 1) });
  }
  const from = Date.parse(q.get('from') ?? '');
  const to = Date.parse(q.get('to') ?? '');
  if (Number.isFinite(from) && Number.isFinite(to) && from < to) return { series, from, to };
  const range = q.get('range') ?? '';
  return { series, range: range in trendRanges ? range : '1h' };
}

/** A point as the history answers it (`HistoryPoint` of the contracts). */
type HistoryPoint = { t: string; value: unknown; quality: unknown; timestamp?: string | null; min?: number; max?: number; count?: number };
/** A stretch in which the session with the device was down. */
export type HistoryGap = { from: string; to: string; reason: string };
/** The history's answer (`HistoryAnswer` of the contracts). */
type HistoryAnswer = { resolution: string; bucketSeconds: number | null; points: HistoryPoint[]; gaps: HistoryGap[] };

/** One attribute's data, ready to draw: parallel arrays on seconds, ascending. */
export type SeriesData = TrendSeries & {
  /** Seconds since the epoch. */
  xs: number[];
  /** The value as a number (on/off as 1/0); `null` marks a gap: no line is drawn across it. */
  ys: (number | null)[];
  /** Each bucket's smallest and largest value, when the history answered buckets. */
  mins: (number | null)[];
  maxs: (number | null)[];
  /** Whether each point's quality was not good. */
  bad: boolean[];
  /** Whether the attribute is an on/off state (drawn as steps). */
  onOff: boolean;
  gaps: HistoryGap[];
  /** `raw`, `raw-buckets`, `minute` or `hour`, as the history answered. */
  resolution: string;
  /** The last value received, for the text alternative. */
  latest: { at: number; value: unknown; quality: string } | null;
  /** A sentence when the history could not be read. */
  error: string | null;
};

/** A quality's validity: `good` for a missing one (the device sent none). */
export function validityOf(quality: unknown): string {
  if (typeof quality === 'string') return quality;
  if (quality && typeof quality === 'object') return String((quality as { validity?: unknown }).validity ?? 'good');
  return 'good';
}

/** A value as a number a chart can draw, or undefined. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return undefined;
}

/** An empty series for an attribute. */
function emptySeries(s: TrendSeries, error: string | null = null): SeriesData {
  return { ...s, xs: [], ys: [], mins: [], maxs: [], bad: [], onOff: false, gaps: [], resolution: 'raw', latest: null, error };
}

/** Puts a point in place, keeping the times strictly ascending (a gap's mark never hides a value). */
function insert(d: SeriesData, x: number, y: number | null, min: number | null, max: number | null, bad: boolean): void {
  let i = d.xs.length;
  while (i > 0 && (d.xs[i - 1] as number) > x) i--;
  if (i > 0 && d.xs[i - 1] === x) {
    if (y === null) x += 0.001;
    else if (d.ys[i - 1] !== null) {
      d.ys[i - 1] = y;
      d.bad[i - 1] = bad;
      return;
    } else {
      // A value at the very time a gap starts or ends stands just before that mark.
      i--;
      x -= 0.001;
    }
  }
  d.xs.splice(i, 0, x);
  d.ys.splice(i, 0, y);
  d.mins.splice(i, 0, min);
  d.maxs.splice(i, 0, max);
  d.bad.splice(i, 0, bad);
}

/** An answer of the history as chart data: its points, and a `null` at each end of each gap. */
export function seriesOf(s: TrendSeries, answer: HistoryAnswer): SeriesData {
  const d = emptySeries(s);
  d.resolution = answer.resolution;
  d.gaps = answer.gaps;
  for (const p of answer.points) {
    const y = numberOf(p.value);
    const at = Date.parse(p.t);
    if (y === undefined || !Number.isFinite(at)) continue;
    if (typeof p.value === 'boolean') d.onOff = true;
    d.xs.push(at / 1000);
    d.ys.push(y);
    d.mins.push(p.min ?? null);
    d.maxs.push(p.max ?? null);
    d.bad.push(validityOf(p.quality) !== 'good');
    d.latest = { at, value: p.value, quality: validityOf(p.quality) };
  }
  for (const g of answer.gaps) {
    for (const edge of [g.from, g.to]) {
      const at = Date.parse(edge);
      if (Number.isFinite(at)) insert(d, at / 1000, null, null, null, false);
    }
  }
  return d;
}

/** How many points to ask for: about one a pixel of the chart's width. */
export const pointsFor = (width: number) => Math.max(200, Math.min(2000, Math.round(width)));

/** Reads each attribute's history of the period, all at once; an attribute that fails says why. */
export async function loadSeries(series: TrendSeries[], from: number, to: number, maxPoints: number): Promise<SeriesData[]> {
  return Promise.all(
    series.map(async (s) => {
      try {
        const answer = await api<HistoryAnswer>('GET', `/api/connections/${encodeURIComponent(s.connectionId)}/history`, {
          query: { reference: s.reference, from: new Date(from).toISOString(), to: new Date(to).toISOString(), maxPoints },
        });
        return seriesOf(s, answer);
      } catch (err) {
        return emptySeries(s, messageOf(err));
      }
    }),
  );
}

/** The URL of an attribute's recorded values of the period as CSV (the API's `format=csv`). */
export function csvHref(s: TrendSeries, from: number, to: number): string {
  const q = new URLSearchParams({
    reference: s.reference,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    format: 'csv',
  });
  // A link sends no X-Space: the space the console works in goes along as `space`.
  if (currentSpace.value) q.set('space', currentSpace.value);
  return `/api/connections/${encodeURIComponent(s.connectionId)}/history?${q}`;
}

/** A value event of `/api/live` (the fields the tail uses). */
type LiveValue = {
  connectionId: string;
  reference: string;
  value: unknown;
  quality?: unknown;
  timestamp?: string | null;
  receivedAt?: string;
};

/**
 * Appends the plotted attributes' values from `/api/live` to `data` while it is followed, and a gap
 * where a session leaves `connected`; `changed` is called after each change. Answers how to stop.
 */
export function followTail(space: string, data: SeriesData[], changed: () => void): () => void {
  const ids = [...new Set(data.map((d) => d.connectionId))];
  const es = new EventSource(
    `/api/live?space=${encodeURIComponent(space)}&connections=${ids.map(encodeURIComponent).join(',')}&topics=values,sessions`,
  );
  const byKey = new Map(data.map((d) => [`${d.connectionId} ${d.reference}`, d]));
  es.addEventListener('value', (e) => {
    const v = JSON.parse((e as MessageEvent).data) as LiveValue;
    // The device's time when it carries one, else the time of receipt: the place the history gives it.
    const at = Date.parse(v.timestamp ?? v.receivedAt ?? '');
    if (!Number.isFinite(at)) return;
    let any = false;
    for (const [reference, value] of leavesOf(v.reference, v.value)) {
      const d = byKey.get(`${v.connectionId} ${reference}`);
      const y = numberOf(value);
      if (!d || y === undefined) continue;
      if (typeof value === 'boolean') d.onOff = true;
      const quality = validityOf(v.quality);
      insert(d, at / 1000, y, null, null, quality !== 'good');
      if (!d.latest || at >= d.latest.at) d.latest = { at, value, quality };
      any = true;
    }
    if (any) changed();
  });
  es.addEventListener('session', (e) => {
    const s = JSON.parse((e as MessageEvent).data) as { connectionId: string; state: string; since?: string };
    if (s.state === 'connected') return;
    const at = Date.parse(s.since ?? '') || Date.now();
    for (const d of data) if (d.connectionId === s.connectionId) insert(d, at / 1000, null, null, null, false);
    changed();
  });
  return () => es.close();
}

/** Drops what fell out of the period's start (a followed period moves on with time). */
export function trimBefore(data: SeriesData[], fromSeconds: number): void {
  for (const d of data) {
    let n = 0;
    while (n < d.xs.length - 1 && (d.xs[n + 1] as number) < fromSeconds) n++;
    if (n === 0) continue;
    for (const a of [d.xs, d.ys, d.mins, d.maxs, d.bad] as unknown[][]) a.splice(0, n);
  }
}
