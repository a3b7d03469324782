/**
 * The trend screen (`#/trends?s=<connection>:<reference>&range=1h`, or `from`/`to` for a period of one's
 * own): one to eight attributes on one chart, over the last 5 minutes to the last 30 days or any period;
 * drag across the chart to zoom, buttons to pan and zoom out; while the period ends now the attributes'
 * new values arrive from `/api/live`. The URL always holds what is shown, so it can be passed on.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { currentSpace } from '../api.ts';
import { maxTrendSeries, trendHref, type TrendSelection, type TrendSeries } from '../trend_link.ts';
import { Alert } from './common.ts';
import { type Chart, type Drawn, mountChart } from './trend_chart.ts';
import { followTail, loadSeries, parseTrendQuery, pointsFor, type SeriesData, trendRanges, trimBefore } from './trend_data.ts';
import { AddSeries, SeriesTable } from './trend_series.ts';

const lastTrendKey = 'scada-console-trend';
const rangeNames: Record<string, string> = { '5m': '5 min', '1h': '1 h', '8h': '8 h', '24h': '24 h', '7d': '7 days', '30d': '30 days' };

/** The period a selection shows, in milliseconds: a named range ends now. */
function periodOf(sel: TrendSelection, now = Date.now()): [number, number] {
  if (sel.from !== undefined && sel.to !== undefined) return [sel.from, sel.to];
  return [now - (trendRanges[sel.range ?? '1h'] ?? 3_600_000), now];
}

/** A time as a `datetime-local` field writes it, in the person's time zone. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** The trend screen; `query` is the fragment's query it starts from. */
export function Trends({ query }: { query: string }) {
  // The trend last shown in this tab comes back when the screen is opened without one.
  const [sel, setSel] = useState<TrendSelection>(() => parseTrendQuery(query || (sessionStorage.getItem(lastTrendKey) ?? '')));
  const [data, setData] = useState<SeriesData[]>([]);
  const [drawn, setDrawn] = useState<Drawn>({ points: [], nulls: [] });
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  const chartEl = useRef<HTMLDivElement>(null);
  const chart = useRef<Chart | null>(null);
  const live = sel.range !== undefined;
  const [from, to] = periodOf(sel);

  useEffect(() => {
    const el = chartEl.current;
    if (!el) return;
    const c = mountChart(el, (a, b) => period(a, b));
    chart.current = c;
    const observer = new ResizeObserver(() => c.resize(el.clientWidth));
    observer.observe(el);
    return () => {
      observer.disconnect();
      c.destroy();
      chart.current = null;
    };
  }, []);

  // What is shown is in the URL, without a new entry in the browser's history for every zoom.
  useEffect(() => {
    const link = trendHref(sel);
    history.replaceState(null, '', link);
    sessionStorage.setItem(lastTrendKey, link.slice(link.indexOf('?') + 1));
  }, [sel]);

  useEffect(() => {
    let gone = false;
    setLoading(true);
    const width = chartEl.current?.clientWidth ?? 800;
    void loadSeries(sel.series, from, to, pointsFor(width)).then((loaded) => {
      if (gone) return;
      setLoading(false);
      setData(loaded);
    });
    return () => {
      gone = true;
    };
  }, [sel]);

  // While the period ends now: new values from the live channel, and the period moving on with time.
  useEffect(() => {
    const space = currentSpace.peek();
    if (!live || !space || data.length === 0) return;
    let frame = 0;
    const redraw = () => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setTick((n) => n + 1)));
    };
    const stop = followTail(space, data, redraw);
    const timer = setInterval(redraw, 5_000);
    return () => {
      stop();
      clearInterval(timer);
      cancelAnimationFrame(frame);
    };
  }, [data, live]);

  useEffect(() => {
    if (!chart.current) return;
    const [a, b] = periodOf(sel);
    if (live) trimBefore(data, a / 1000);
    const drawn = chart.current.draw(data, a, b);
    setDrawn(drawn);
    // Set on the element itself as soon as the chart is drawn, for whoever measures how long that takes.
    chartEl.current?.setAttribute('data-drawn-points', String(drawn.points.reduce((n, k) => n + k, 0)));
  }, [data, tick]);

  const series = sel.series;
  const setSeries = (next: TrendSeries[]) => setSel((s) => ({ ...s, series: next }));
  const span = to - from;
  /** Shows a period of one's own, never past now, at least a second long. */
  const period = (a: number, b: number) => {
    const end = Math.round(Math.min(b, Date.now()));
    setSel((s) => ({ series: s.series, from: Math.round(Math.min(a, end - 1000)), to: end }));
  };
  return html`<section aria-labelledby="h-trends">
    <h1 id="h-trends">Trends</h1>
    <div class="trend-controls">
      <fieldset>
        <legend>Period ending now</legend>
        ${Object.keys(trendRanges).map(
          (r) =>
            html`<button type="button" class="secondary small" aria-pressed=${sel.range === r} onClick=${() => setSel((s) => ({ series: s.series, range: r }))}>${rangeNames[r]}</button>`,
        )}
      </fieldset>
      <${CustomPeriod} from=${from} to=${to} shown=${`${sel.range} ${sel.from} ${sel.to}`} onShow=${period} />
      <fieldset>
        <legend>Move</legend>
        <button type="button" class="secondary small" onClick=${() => period(from - span / 2, to - span / 2)}>Earlier</button>
        <button type="button" class="secondary small" disabled=${live} onClick=${() => period(from + span / 2, to + span / 2)}>Later</button>
        <button type="button" class="secondary small" onClick=${() => period(from - span / 2, to + span / 2)}>Zoom out</button>
        <button type="button" class="secondary small" disabled=${live} onClick=${() => setSel((s) => ({ series: s.series, range: '1h' }))}>Back to now</button>
      </fieldset>
    </div>
    <p class="trend-hint" id="trend-hint">
      ${live ? 'Following: new values are added as they arrive. ' : ''}Drag across the chart to zoom in, or hold Ctrl and turn the wheel. Broken lines are periods in which the session with the device was down; shaded bands span each interval's lowest and highest value; <span class="bad-mark" aria-hidden="true"></span> marks values of bad quality.
    </p>
    <p role="status" class="sr-only">${loading ? 'Loading the history…' : `Showing ${series.length} attributes from ${new Date(from).toLocaleString()} to ${new Date(to).toLocaleString()}.`}</p>
    ${series.length === 0 ? html`<p>No attribute is plotted yet. Add one below, or use "Trend" in a connection's live values or model.</p>` : null}
    <div class="trend-chart" ref=${chartEl} aria-hidden="true" data-series=${data.length} data-loading=${loading ? 'true' : 'false'}></div>
    ${data.filter((d) => d.error).map((d) => html`<${Alert} message=${`${d.reference}: ${d.error}`} />`)}
    <${SeriesTable} data=${data} drawn=${drawn} from=${from} to=${to} onRemove=${(r: TrendSeries) => setSeries(series.filter((s) => s.connectionId !== r.connectionId || s.reference !== r.reference))} />
    ${series.length < maxTrendSeries ? html`<${AddSeries} plotted=${series} onAdd=${(s: TrendSeries) => setSeries([...series, s])} />` : html`<p>A chart holds at most ${maxTrendSeries} attributes: remove one to add another.</p>`}
  </section>`;
}

/** A period of one's own: from and to, in the person's time zone. */
function CustomPeriod({ from, to, shown, onShow }: { from: number; to: number; shown: string; onShow: (a: number, b: number) => void }) {
  const [a, setA] = useState(localInput(from));
  const [b, setB] = useState(localInput(to));
  const [error, setError] = useState<string | null>(null);
  // Filled again when another period is chosen, not while a followed period moves on.
  useEffect(() => {
    setA(localInput(from));
    setB(localInput(to));
  }, [shown]);
  const show = (e: Event) => {
    e.preventDefault();
    const start = new Date(a).getTime();
    const end = new Date(b).getTime();
    if (!Number.isFinite(start) || !Number.isFinite(end) || start >= end) return setError('The start must be a date before the end.');
    setError(null);
    onShow(start, end);
  };
  return html`<form class="trend-controls" onSubmit=${show} aria-label="Period of your own">
    <div class="field"><label for="trend-from">From</label><input id="trend-from" type="datetime-local" value=${a} onInput=${(e: Event) => setA((e.target as HTMLInputElement).value)} /></div>
    <div class="field"><label for="trend-to">To</label><input id="trend-to" type="datetime-local" value=${b} onInput=${(e: Event) => setB((e.target as HTMLInputElement).value)} /></div>
    <button type="submit" class="secondary small">Show period</button>
    ${error ? html`<span class="inline-error" role="alert">${error}</span>` : null}
  </form>`;
}
