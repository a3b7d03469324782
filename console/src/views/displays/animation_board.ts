/**
 * A board of type `Animation`: its animation's drawing, sanitized, moved by the values of the console's
 * one live stream (`live.ts`: each attribute's own signal, so a value redraws only the elements bound to
 * it) and by the space's alarms. A faceplate's placeholders are filled from the board's `animationParams`,
 * so the same symbol on two boards follows two bays. Bound elements with an action open the model tree's
 * write or control dialog for those the platform lets write and control (editors and administrators, as
 * the model tree); for anyone else nothing is clickable.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { activeAlarms, waitsForAck } from '../../alarms.ts';
import { api, messageOf } from '../../api.ts';
import { canEdit } from '../../session.ts';
import type { Signal } from '@preact/signals';
import { rowOf, valueKeys, type LiveValue } from '../../live.ts';
import { alarmCovers, apply, blink, controlObjectOf, type Binding } from './bindings.ts';
import { prepareDrawing } from './drawing.ts';

/** An animation as `GET /api/animations/{id}` answers it. */
export type Animation = { id: string; name: string; svg: string; bindings: Binding[]; placeholders: string[] };

/** A board as `GET /api/dashboard/{id}/boards` answers it. */
export type Board = {
  id: string;
  name: string;
  type: 'Animation' | 'Html' | 'Iframe';
  header: boolean;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  iframeUrl?: string;
  animationId?: string;
  animationParams?: string;
};

/** What clicking a bound element asks for: a write of the attribute or a control of its object. */
export type Act = { kind: 'write' | 'control'; connectionId: string; reference: string; value: unknown };

/** One bound element, with the attribute it follows once its placeholder is filled. */
type Target = { el: SVGElement; binding: Binding; connectionId: string; reference: string };

/** A placeholder's value from `animationParams`: a data attribute of a connection, or a constant. */
export type Param = { connectionId?: unknown; reference?: unknown } | string | number | boolean | null;

/** The board's `animationParams` as placeholder values; a sentence when they are not JSON. */
export function paramsOf(board: Board): { params: Record<string, Param>; problem: string | null } {
  if (!board.animationParams) return { params: {}, problem: null };
  try {
    const parsed = JSON.parse(board.animationParams) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { params: parsed as Record<string, Param>, problem: null };
  } catch {
    // Said below.
  }
  return { params: {}, problem: `The parameters of board "${board.name}" are not a JSON object; its placeholders stay empty.` };
}

/** The elements of a drawing its bindings move, each with its attribute. */
function targetsOf(animation: Animation, byId: Map<string, SVGElement>, params: Record<string, Param>): Target[] {
  return animation.bindings.flatMap((binding) => {
    const el = byId.get(binding.elementId);
    const source = 'placeholder' in binding.source ? params[binding.source.placeholder] : binding.source;
    if (!el || typeof source !== 'object' || source === null) return [];
    if (typeof source.connectionId !== 'string' || typeof source.reference !== 'string') return [];
    return [{ el, binding, connectionId: source.connectionId, reference: source.reference }];
  });
}

/**
 * Shows the placeholders a board fills with a constant (a number, a text, a colour) rather than an
 * attribute: a colour paints a `fill` or `stroke` binding as it is, anything else is applied as a value.
 */
function showConstants(animation: Animation, byId: Map<string, SVGElement>, params: Record<string, Param>): void {
  for (const binding of animation.bindings) {
    if (!('placeholder' in binding.source)) continue;
    const value = params[binding.source.placeholder];
    const el = byId.get(binding.elementId);
    if (!el || value === undefined || (typeof value === 'object' && value !== null)) continue;
    const colour = typeof value === 'string' && /^#[0-9a-fA-F]{6}$/.test(value);
    if (colour && (binding.kind === 'fill' || binding.kind === 'stroke')) el.setAttribute(binding.kind, value);
    else apply(el, binding, { value });
  }
}

/**
 * The live row that carries an attribute, and the path to it inside the row's value: the attribute's own
 * row, or the row of the data object (or structure) it is part of, when the device reports that whole
 * (`LD/LN.AnIn1[MX]` carries `LD/LN.AnIn1.mag.f[MX]` as `{mag: {f}}`). Undefined until a value came.
 */
export function rowFor(connectionId: string, reference: string): { row: Signal<LiveValue>; path: string[] } | undefined {
  const m = /^(.*?)(\[[A-Z]{2}\])?$/.exec(reference) as RegExpExecArray;
  const [device = '', rest = ''] = (m[1] as string).split('/');
  const parts = rest.split('.');
  for (let n = parts.length; n >= 2; n--) {
    const row = rowOf(`${connectionId} ${device}/${parts.slice(0, n).join('.')}${m[2] ?? ''}`) as Signal<LiveValue> | undefined;
    if (row) return { row, path: parts.slice(n) };
  }
  return undefined;
}

/** The part of a value a path names; undefined when it holds none. */
function dig(value: unknown, path: string[]): unknown {
  let v = value;
  for (const step of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[step] : undefined;
  return v;
}

/**
 * Follows the live values and alarms of the targets: one subscription per attribute on the stream's own
 * signal, taken as soon as the attribute's first value arrives. Answers what ends them.
 */
function follow(targets: Target[]): () => void {
  const byKey = new Map<string, Target[]>();
  for (const t of targets) {
    const key = `${t.connectionId} ${t.reference}`;
    byKey.set(key, [...(byKey.get(key) ?? []), t]);
  }
  const ends = new Map<string, () => void>();
  const attach = () => {
    for (const [key, list] of byKey) {
      if (ends.has(key)) continue;
      const first = list[0] as Target;
      const found = rowFor(first.connectionId, first.reference);
      if (!found) continue;
      const { row, path } = found;
      ends.set(
        key,
        row.subscribe((v: LiveValue) => {
          const reading = path.length === 0 ? v : { ...v, value: dig(v.value, path) };
          for (const t of list) apply(t.el, t.binding, reading);
        }),
      );
    }
  };
  const stopKeys = valueKeys.subscribe(attach);
  const blinking = targets.filter((t) => t.binding.kind === 'blink');
  const stopAlarms = activeAlarms.subscribe((alarms) => {
    for (const t of blinking) {
      blink(
        t.el,
        alarms.some((a) => waitsForAck(a.state) && a.connectionId === t.connectionId && alarmCovers(a.reference, t.reference)),
      );
    }
  });
  return () => {
    stopKeys();
    stopAlarms();
    for (const end of ends.values()) end();
  };
}

/** Makes the targets with an action operable from the keyboard and the mouse; answers the target of an element. */
function actionable(targets: Target[]): Map<Element, Target> {
  const map = new Map<Element, Target>();
  for (const t of targets) {
    if (!t.binding.action || map.has(t.el)) continue;
    map.set(t.el, t);
    const what = t.binding.action === 'control' ? `Operate ${controlObjectOf(t.reference)}` : `Write ${t.reference}`;
    t.el.classList.add('display-action');
    t.el.setAttribute('tabindex', '0');
    t.el.setAttribute('role', 'button');
    t.el.setAttribute('aria-label', what);
  }
  return map;
}

/** A drawing in its box, moving; `onAct` makes bound elements with an action operable. */
export type Drawn = { byId: Map<string, SVGElement>; dispose: () => void };

/**
 * Draws `animation` into `box` (sanitized, ids prefixed with `prefix`) and follows its bindings' values
 * and alarms; with `onAct`, elements with an action open it. Null when nothing drawable is left.
 */
export function drawAnimation(
  box: HTMLElement,
  animation: Animation,
  params: Record<string, Param>,
  prefix: string,
  onAct?: (act: Act) => void,
): Drawn | null {
  const drawing = prepareDrawing(animation.svg, prefix);
  if (!drawing) return null;
  drawing.root.setAttribute('role', 'group');
  drawing.root.setAttribute('aria-label', animation.name);
  box.replaceChildren(drawing.root);
  showConstants(animation, drawing.byId, params);
  const targets = targetsOf(animation, drawing.byId, params);
  const operable = onAct ? actionable(targets) : new Map<Element, Target>();
  const act = (e: Event) => {
    const el = (e.target as Element).closest('.display-action');
    const t = el ? operable.get(el) : undefined;
    if (!t || !onAct || (e instanceof KeyboardEvent && e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    const found = rowFor(t.connectionId, t.reference);
    const value = found ? dig(found.row.peek().value, found.path) : undefined;
    const reference = t.binding.action === 'control' ? controlObjectOf(t.reference) : t.reference;
    onAct({ kind: t.binding.action as 'write' | 'control', connectionId: t.connectionId, reference, value });
  };
  box.addEventListener('click', act);
  box.addEventListener('keydown', act);
  const stop = follow(targets);
  return {
    byId: drawing.byId,
    dispose: () => {
      stop();
      box.removeEventListener('click', act);
      box.removeEventListener('keydown', act);
      box.replaceChildren();
    },
  };
}

/** Draws one `Animation` board. */
export function AnimationBoard({ board, onAct }: { board: Board; onAct: (act: Act) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const [animation, setAnimation] = useState<Animation | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!board.animationId) return setProblem(`Board "${board.name}" names no animation.`);
    api<Animation>('GET', `/api/animations/${encodeURIComponent(board.animationId)}`)
      .then(setAnimation)
      .catch((err) => setProblem(messageOf(err)));
  }, [board.animationId]);
  useEffect(() => {
    const box = host.current;
    if (!animation || !box) return;
    const { params, problem: badParams } = paramsOf(board);
    if (badParams) setProblem(badParams);
    const drawn = drawAnimation(box, animation, params, `b${board.id.slice(0, 8)}-`, canEdit() ? onAct : undefined);
    if (!drawn) return setProblem(`The drawing of "${animation.name}" holds nothing that can be shown.`);
    return drawn.dispose;
  }, [animation, board.animationParams]);
  return html`${problem ? html`<p class="alert warn">${problem}</p>` : null}
    ${animation || problem ? null : html`<p role="status">Loading the drawing…</p>`}
    <div class="animation" ref=${host}></div>`;
}
