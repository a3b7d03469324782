/**
 * What a binding does to its element when a value comes: text with its format and unit, a colour by
 * enumerated value or threshold, visibility, a rotation or translation scaled from a range. Quality is
 * shown on every bound element: bad quality greys it, a stale value (the session ended) hatches it. All
 * through attributes and classes, never a `style` string (the CSP allows none).
 */

/** A binding as the animation carries it (`contracts/src/config/animations.ts`). */
export type Binding = {
  elementId: string;
  source: { connectionId: string; reference: string } | { placeholder: string };
  kind: 'text' | 'fill' | 'stroke' | 'visibility' | 'rotate' | 'translate' | 'blink';
  format?: string;
  unit?: string;
  thresholds?: { at: number; color: string }[];
  colors?: Record<string, string>;
  range?: { in: [number, number]; out: [number, number] };
  visibleWhen?: boolean | number | string;
  action?: 'write' | 'control';
};

/** A value as the live channel carries it. */
export type Reading = { value: unknown; quality?: unknown; stale?: boolean };

/** A value as text: numbers with the binding's decimals, then its unit. */
export function formatValue(b: Binding, value: unknown): string {
  const decimals = b.format?.includes('.') ? b.format.length - b.format.indexOf('.') - 1 : b.format ? 0 : null;
  let text: string;
  if (typeof value === 'number' && decimals !== null) text = value.toFixed(decimals);
  else if (value === null || value === undefined) text = '—';
  else text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return b.unit ? `${text} ${b.unit}` : text;
}

/** The colour a value takes: its own in `colors`, else the highest threshold it reaches; null for none. */
export function colorOf(b: Binding, value: unknown): string | null {
  const own = b.colors?.[String(value)];
  if (own) return own;
  const n = typeof value === 'boolean' ? Number(value) : Number(value);
  if (!b.thresholds || Number.isNaN(n)) return null;
  let chosen: string | null = null;
  let best = Number.NEGATIVE_INFINITY;
  for (const t of b.thresholds) {
    if (n >= t.at && t.at >= best) {
      best = t.at;
      chosen = t.color;
    }
  }
  return chosen;
}

/** The value scaled from the binding's `in` range to its `out` range, clamped. */
export function scaled(b: Binding, value: unknown): number {
  const n = Number(value);
  if (!b.range || Number.isNaN(n)) return 0;
  const [a, z] = b.range.in;
  const [from, to] = b.range.out;
  const share = z === a ? 0 : Math.min(1, Math.max(0, (n - a) / (z - a)));
  return from + share * (to - from);
}

/** Whether a value shows its element. */
export function visible(b: Binding, value: unknown): boolean {
  if (b.visibleWhen === undefined) return Boolean(value) && value !== 'false' && value !== '0';
  return value === b.visibleWhen || String(value) === String(b.visibleWhen);
}

/** Whether a quality is other than good. */
export function badQuality(quality: unknown): boolean {
  if (quality === null || quality === undefined) return false;
  if (typeof quality === 'string') return quality !== 'good';
  const validity = (quality as { validity?: unknown }).validity;
  return validity !== undefined && validity !== 'good';
}

/** The element's own transform, before any binding added to it. */
const baseTransforms = new WeakMap<Element, string>();
/** The element's centre, for rotations. */
const centres = new WeakMap<Element, { x: number; y: number }>();

function transform(el: SVGElement, extra: string): void {
  if (!baseTransforms.has(el)) baseTransforms.set(el, el.getAttribute('transform') ?? '');
  el.setAttribute('transform', `${baseTransforms.get(el)} ${extra}`.trim());
}

function centreOf(el: SVGElement): { x: number; y: number } {
  let c = centres.get(el);
  if (!c) {
    const box = el instanceof SVGGraphicsElement ? el.getBBox() : { x: 0, y: 0, width: 0, height: 0 };
    c = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    centres.set(el, c);
  }
  return c;
}

/** The quality classes an element was given last, so an unchanged quality writes nothing. */
const shownQuality = new WeakMap<Element, number>();

/** Sets an element's text, in place when it holds one text node (no node is made or dropped). */
function setText(el: SVGElement, text: string): void {
  const only = el.firstChild;
  if (only && only === el.lastChild && only.nodeType === Node.TEXT_NODE) {
    if ((only as Text).data !== text) (only as Text).data = text;
  } else el.textContent = text;
}

/** Applies one reading to the element of one binding. */
export function apply(el: SVGElement, b: Binding, r: Reading): void {
  const quality = (badQuality(r.quality) ? 1 : 0) | (r.stale === true ? 2 : 0);
  if (shownQuality.get(el) !== quality) {
    shownQuality.set(el, quality);
    el.classList.toggle('display-bad', (quality & 1) !== 0);
    el.classList.toggle('display-stale', (quality & 2) !== 0);
  }
  switch (b.kind) {
    case 'text':
      setText(el, formatValue(b, r.value));
      break;
    case 'fill':
    case 'stroke': {
      const color = colorOf(b, r.value);
      if (color && el.getAttribute(b.kind) !== color) el.setAttribute(b.kind, color);
      break;
    }
    case 'visibility':
      el.setAttribute('visibility', visible(b, r.value) ? 'visible' : 'hidden');
      break;
    case 'rotate': {
      const c = centreOf(el);
      transform(el, `rotate(${scaled(b, r.value)} ${c.x} ${c.y})`);
      break;
    }
    case 'translate':
      transform(el, `translate(${scaled(b, r.value)} 0)`);
      break;
    case 'blink':
      break;
  }
}

/** Blinks the element of a `blink` binding while an alarm of its attribute waits for acknowledgement. */
export function blink(el: SVGElement, on: boolean): void {
  el.classList.toggle('display-blink', on);
}

/** Whether an alarm on `alarmRef` covers the attribute `ref` (the same, or a part of the alarm's data object). */
export function alarmCovers(alarmRef: string, ref: string): boolean {
  const split = (r: string) => {
    const m = /^(.*?)(\[[A-Z]{2}\])?$/.exec(r.replace(/\$/g, '.')) as RegExpExecArray;
    return { path: m[1] as string, fc: m[2] ?? '' };
  };
  const a = split(alarmRef);
  const b = split(ref);
  if (a.fc && b.fc && a.fc !== b.fc) return false;
  return b.path === a.path || b.path.startsWith(`${a.path}.`);
}

/** The control object (`LD/LN.DO`) an attribute (`LD/LN.DO.stVal[ST]`) belongs to. */
export function controlObjectOf(reference: string): string {
  const [device, rest = ''] = reference.replace(/\[[A-Z]{2}\]$/, '').split('/');
  return `${device}/${rest.split('.').slice(0, 2).join('.')}`;
}
