/**
 * The trend's chart, drawn by uPlot (fetched with the trend screen only): every attribute a line (on/off
 * states as steps) on one time axis, broken where its session was down (`null` points), the band between
 * each bucket's min and max, and points of bad quality marked with hollow red rings. Dragging across the
 * chart selects a period to zoom to; Ctrl + wheel zooms in and out around the pointer. uPlot sets its elements' styles through the DOM, which the CSP
 * allows; its style sheet and the screen's own are constructed style sheets, which it allows too.
 */
import uPlot from 'uplot';
import uplotCss from 'uplot/dist/uPlot.min.css' with { type: 'text' };
import trendCss from './trends.css' with { type: 'text' };
import type { SeriesData } from './trend_data.ts';

/** The series' colours, in order; the screen's list shows the same as swatches (`.swatch-<n>` in trends.css). */
export const palette = ['#0b5cad', '#c2410c', '#15803d', '#7c3aed', '#be185d', '#0e7490', '#a16207', '#4b5563'];
const badColour = '#a4161a';

let styled = false;
/** Adds uPlot's style sheet and the screen's to the document, once. */
function adoptStyles(): void {
  if (styled) return;
  styled = true;
  const sheets = [uplotCss, trendCss].map((text) => {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(text);
    return sheet;
  });
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, ...sheets];
}

/** A colour with some transparency, for bands. */
const faint = (hex: string, alpha: number) => `rgba(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(',')},${alpha})`;

/** What a drawn chart holds, as numbers a test or a screen reader summary can read. */
export type Drawn = { points: number[]; nulls: number[] };

/** The joined table uPlot draws, and where each attribute's series sit in it. */
type Layout = { data: uPlot.AlignedData; series: uPlot.Series[]; bands: uPlot.Band[]; onOff: boolean; key: string; drawn: Drawn };

/**
 * The columns of one attribute: its line, its min and max (empty for raw values: kept, so that another
 * period only sets new data where a new chart would be built), its bad points.
 */
function tableOf(d: SeriesData): { table: uPlot.AlignedData; modes: uPlot.JoinNullMode[] } {
  // `null` is a gap (expanded over the other series' times, so no line crosses it); `undefined` is no point.
  const band = (a: (number | null)[]) => a.map((v, k) => (d.ys[k] === null ? null : (v ?? undefined)));
  const bad = d.ys.map((y, k) => (d.bad[k] && y !== null ? y : undefined));
  const columns = [d.xs, d.ys, band(d.mins), band(d.maxs), bad] as uPlot.AlignedData;
  // uPlot reads a column's mode at the column's index: the first, the times', is not used.
  return { table: columns, modes: [0, 2, 2, 2, 0] };
}

/** Lays every attribute out for uPlot: one table on the union of their times, and each one's series. */
function layout(data: SeriesData[]): Layout {
  const tables = data.map(tableOf);
  const joined =
    data.length > 0
      ? uPlot.join(
          tables.map((t) => t.table),
          tables.map((t) => t.modes),
        )
      : ([[]] as uPlot.AlignedData);
  const series: uPlot.Series[] = [{}];
  const bands: uPlot.Band[] = [];
  const drawn: Drawn = { points: [], nulls: [] };
  data.forEach((d, n) => {
    const colour = palette[n % palette.length] as string;
    const scale = d.onOff ? 'onoff' : 'y';
    const line = series.length;
    const ys = joined[line] as (number | null | undefined)[];
    drawn.points.push(ys.filter((y) => typeof y === 'number').length);
    drawn.nulls.push(ys.filter((y) => y === null).length);
    series.push({
      label: d.reference,
      scale,
      stroke: colour,
      width: 2,
      spanGaps: false,
      ...(d.onOff ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
    });
    const edge = { scale, stroke: faint(colour, 0.5), width: 1, points: { show: false } };
    series.push({ ...edge, label: `${d.reference} min` }, { ...edge, label: `${d.reference} max` });
    bands.push({ series: [line + 2, line + 1], fill: faint(colour, 0.15) });
    series.push({
      label: `${d.reference} bad quality`,
      scale,
      paths: () => null,
      points: { show: true, size: 8, width: 2, stroke: badColour, fill: '#fff' },
    });
  });
  const onOff = data.some((d) => d.onOff);
  const key = data.map((d) => `${d.connectionId} ${d.reference} ${d.onOff}`).join('|');
  return { data: joined, series, bands, onOff, key, drawn };
}

/** A drawn chart: draw again with new data or a new period, resize, remove. */
export type Chart = {
  draw(data: SeriesData[], from: number, to: number): Drawn;
  resize(width: number): void;
  destroy(): void;
};

const axisColours = { stroke: '#1b1f24', grid: { stroke: '#e3e7ec', width: 1 }, ticks: { stroke: '#c8ced6', width: 1 } };

/** Puts a chart into `el`; a period dragged across it, or zoomed to with Ctrl + wheel, is handed to `onZoom` (milliseconds). */
export function mountChart(el: HTMLElement, onZoom: (from: number, to: number) => void): Chart {
  adoptStyles();
  let plot: uPlot | null = null;
  let key = '';
  let width = Math.max(200, el.clientWidth);
  // The period shown, in seconds: the x scale's range asks for it each time the data is set.
  let period: [number, number] = [0, 1];
  const height = () => Math.max(220, Math.min(420, Math.round(width * 0.5)));
  const options = (l: Layout): uPlot.Options => ({
    width,
    height: height(),
    legend: { show: false },
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: {
      x: { time: true, range: () => period },
      y: { auto: true },
      onoff: { range: [-0.1, 1.1] },
    },
    axes: [
      { ...axisColours },
      { ...axisColours, scale: 'y', size: 60 },
      ...(l.onOff
        ? [
            {
              ...axisColours,
              scale: 'onoff',
              side: 1,
              size: 40,
              splits: () => [0, 1],
              values: (_u: uPlot, v: number[]) => v.map((x) => (x ? 'on' : 'off')),
            },
          ]
        : []),
    ],
    series: l.series,
    bands: l.bands,
    hooks: {
      setSelect: [
        (u: uPlot) => {
          if (u.select.width < 2) return;
          const a = u.posToVal(u.select.left, 'x') * 1000;
          const b = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          if (b - a >= 1000) onZoom(Math.round(a), Math.round(b));
        },
      ],
    },
  });
  // Ctrl + wheel (and a trackpad's pinch) zooms around the pointer; the wheel alone still scrolls the page.
  let wheelTimer = 0;
  const wheel = (e: WheelEvent) => {
    if (!plot || !e.ctrlKey) return;
    const box = plot.over.getBoundingClientRect();
    const x = e.clientX - box.left;
    if (x < 0 || x > box.width) return;
    e.preventDefault();
    const at = plot.posToVal(x, 'x');
    const factor = e.deltaY > 0 ? 1.25 : 0.8;
    period = [at - (at - period[0]) * factor, at + (period[1] - at) * factor];
    plot.setScale('x', { min: period[0], max: period[1] });
    // The history is asked once the wheel rests.
    clearTimeout(wheelTimer);
    wheelTimer = window.setTimeout(() => onZoom(Math.round(period[0] * 1000), Math.round(period[1] * 1000)), 300);
  };
  el.addEventListener('wheel', wheel, { passive: false });
  return {
    draw(data, from, to) {
      const l = layout(data);
      period = [from / 1000, to / 1000];
      if (!plot || key !== l.key) {
        plot?.destroy();
        plot = new uPlot(options(l), l.data, el);
        key = l.key;
      } else plot.setData(l.data);
      return l.drawn;
    },
    resize(w) {
      width = Math.max(200, w);
      plot?.setSize({ width, height: height() });
    },
    destroy() {
      el.removeEventListener('wheel', wheel);
      clearTimeout(wheelTimer);
      plot?.destroy();
      plot = null;
    },
  };
}
