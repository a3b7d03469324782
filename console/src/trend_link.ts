/**
 * Links to the trend screen (`#/trends?s=<connection>:<reference>&range=1h`), small enough for the first
 * page: the live table and the model tree offer a "Trend" link without loading the trend screen's chunk.
 */

/** One plotted attribute: a connection and an attribute's reference as the history records it. */
export type TrendSeries = { connectionId: string; reference: string };

/** The most attributes one chart shows. */
export const maxTrendSeries = 8;

/** A selection as the trend screen's URL carries it: the series, and a range name or a period. */
export type TrendSelection = { series: TrendSeries[]; range?: string; from?: number; to?: number };

/** The fragment of the trend screen showing `selection`. */
export function trendHref(selection: TrendSelection): string {
  const q = new URLSearchParams();
  for (const s of selection.series.slice(0, maxTrendSeries)) q.append('s', `${s.connectionId}:${s.reference}`);
  if (selection.from !== undefined && selection.to !== undefined) {
    q.set('from', new Date(selection.from).toISOString());
    q.set('to', new Date(selection.to).toISOString());
  } else q.set('range', selection.range ?? '1h');
  return `#/trends?${q}`;
}

/** A reference as IEC 61850 writes it: `LD/LN$FC$DO$DA` becomes `LD/LN.DO.DA[FC]`, as the history records it. */
export function iecReference(reference: string): string {
  const m = /^([^/$]+\/[^/$]+)\$([A-Z]{2})\$(.+)$/.exec(reference);
  return m ? `${m[1]}.${m[3]?.replaceAll('$', '.')}[${m[2]}]` : reference;
}

/**
 * The attributes a reported value holds, as the history service records them (its `leavesOf`): a
 * structure (`GGIO1.AnIn1[MX]` with `{mag: {f}}`) is each attribute under its own reference
 * (`GGIO1.AnIn1.mag.f[MX]`), its `q` and `t` being the point's quality and time, not values.
 */
export function leavesOf(reference: string, value: unknown): [string, unknown][] {
  const ref = iecReference(reference);
  if (value === null || typeof value !== 'object') return [[ref, value]];
  const m = /^(.*?)(\[[A-Z]{2}\])?$/.exec(ref);
  const base = m?.[1] ?? ref;
  const fc = m?.[2] ?? '';
  const out: [string, unknown][] = [];
  const walk = (v: unknown, path: string) => {
    if (out.length >= 256) return;
    if (Array.isArray(v)) for (const [i, item] of v.entries()) walk(item, `${path}(${i})`);
    else if (v !== null && typeof v === 'object' && Object.keys(v).length > 0) {
      for (const [k, item] of Object.entries(v)) if (k !== 'q' && k !== 't') walk(item, `${path}.${k}`);
    } else out.push([`${base}${path}${fc}`, v]);
  };
  walk(value, '');
  return out.length > 0 ? out : [[ref, value]];
}

/** The attributes of a reported value a chart can draw: numbers and on/off states. */
export function plottableLeaves(reference: string, value: unknown): string[] {
  return leavesOf(reference, value)
    .filter(([, v]) => typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
    .map(([r]) => r);
}
