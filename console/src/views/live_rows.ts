/**
 * How the live values of a connection are laid out as rows an operator reads: a structured value (a whole
 * data object a data set names, `AnIn1[MX]` → `{mag: {f}, q, t}`) is split into its attributes; a data
 * object's quality `q` and time `t` are not rows of their own but the quality and time of the attributes
 * beside them (`AnIn1.mag.f[MX]` takes `AnIn1.q[MX]`); numbers are shown at a sensible precision.
 */

/** Where a shown value comes from: the live value's key and the path inside its JSON (empty: all of it). */
export type Source = { key: string; path: string[] };

/** One row of the table: the attribute's reference and where its value, quality and time come from. */
export type LiveRow = { reference: string; value: Source; quality?: Source; time?: Source };

/** A live value as the layout sees it: its key (`connectionId reference`), reference and value. */
export type LiveEntry = { key: string; reference: string; value: unknown };

/** A quality as the platform gives it (`{validity, detail, source, …}`) or as a `q` attribute's value (`{validity, flags, source}`). */
export const isQuality = (v: unknown): boolean => typeof v === 'object' && v !== null && 'validity' in v;

/** A `t` attribute's value: `{time, flags, accuracy}`. */
export const isTime = (v: unknown): v is { time: string } =>
  typeof v === 'object' && v !== null && typeof (v as { time?: unknown }).time === 'string';

/** A value that is a structure of attributes (not a quality, a time or an array). */
const isStruct = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !isQuality(v) && !isTime(v);

/** `LD/LN.DO.DA[FC]` → its dotted part and its functional constraint (`''` without one). */
function split(reference: string): { base: string; fc: string } {
  const m = /^(.*)\[([A-Z]{2})\]$/.exec(reference);
  return m ? { base: m[1], fc: m[2] } : { base: reference, fc: '' };
}

const join = (base: string, fc: string) => (fc ? `${base}[${fc}]` : base);

/** The part of a JSON value at a path of component names. */
export function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const name of path) v = isStruct(v) ? v[name] : undefined;
  return v;
}

/** Every attribute of a value: itself, or each leaf of its structure with its path. */
function leaves(value: unknown, path: string[] = []): string[][] {
  if (!isStruct(value)) return [path];
  return Object.entries(value).flatMap(([name, child]) => leaves(child, [...path, name]));
}

/**
 * The data object levels an attribute sits in, nearest first, down to the data object itself:
 * `LD/LN.A.phsA.cVal.mag.f` → `LD/LN.A.phsA.cVal.mag`, …, `LD/LN.A`.
 */
function parents(base: string): string[] {
  const slash = base.indexOf('/');
  const names = base.slice(slash + 1).split('.');
  const out: string[] = [];
  for (let n = names.length - 1; n >= 2; n--) out.push(`${base.slice(0, slash + 1)}${names.slice(0, n).join('.')}`);
  return out;
}

/**
 * The rows of a connection's live values, in the order the values first arrived. A `q` or `t` with an
 * attribute beside it is that attribute's quality or time; alone, it is a row of its own.
 */
export function layout(entries: readonly LiveEntry[]): LiveRow[] {
  const attributes = new Map<string, Source>();
  for (const e of entries) {
    const { base, fc } = split(e.reference);
    for (const path of leaves(e.value)) {
      const reference = join([base, ...path].join('.'), fc);
      if (!attributes.has(reference)) attributes.set(reference, { key: e.key, path });
    }
  }
  const qualities = new Map<string, Source>();
  const times = new Map<string, Source>();
  for (const [reference, source] of attributes) {
    const { base, fc } = split(reference);
    const dot = base.lastIndexOf('.');
    const name = base.slice(dot + 1);
    if (name === 'q') qualities.set(join(base.slice(0, dot), fc), source);
    if (name === 't') times.set(join(base.slice(0, dot), fc), source);
  }
  const nearest = (found: Map<string, Source>, base: string, fc: string) => {
    for (const level of parents(base)) {
      const source = found.get(join(level, fc));
      if (source) return source;
    }
    return undefined;
  };
  const rows: LiveRow[] = [];
  const covered = new Set<string>();
  for (const [reference, value] of attributes) {
    const { base, fc } = split(reference);
    const name = base.slice(base.lastIndexOf('.') + 1);
    if (name === 'q' || name === 't') continue;
    const quality = nearest(qualities, base, fc);
    const time = nearest(times, base, fc);
    if (quality) covered.add(`${quality.key} ${quality.path.join('.')}`);
    if (time) covered.add(`${time.key} ${time.path.join('.')}`);
    rows.push({ reference, value, ...(quality ? { quality } : {}), ...(time ? { time } : {}) });
  }
  // A quality or time no attribute took (a data set of qualities alone) is shown as it is.
  for (const [reference, value] of attributes) {
    const name = split(reference).base.split('.').pop();
    if ((name === 'q' || name === 't') && !covered.has(`${value.key} ${value.path.join('.')}`)) rows.push({ reference, value });
  }
  return rows;
}

/** A number at a sensible precision: up to 4 decimals, or 4 significant digits below 1; integers as they are. */
export function shortNumber(n: number): string {
  if (!Number.isFinite(n) || Number.isInteger(n)) return String(n);
  return String(Math.abs(n) >= 1 ? Number(n.toFixed(4)) : Number(n.toPrecision(4)));
}

/** A quality in words: its validity, then what is set (`questionable, oscillatory, test`); `—` without one. */
export function qualityText(q: unknown): string {
  if (q === undefined || q === null) return '—';
  if (typeof q !== 'object') return String(q);
  const o = q as Record<string, unknown>;
  const set = [...(Array.isArray(o.detail) ? o.detail : []), ...(Array.isArray(o.flags) ? o.flags : [])].map(String);
  if (o.source === 'substituted') set.push('substituted');
  if (o.test === true) set.push('test');
  if (o.operatorBlocked === true) set.push('operatorBlocked');
  return [String(o.validity ?? 'good'), ...new Set(set)].join(', ');
}
