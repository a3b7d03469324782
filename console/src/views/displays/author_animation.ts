/**
 * Authoring an animation, the least that makes it usable: upload an SVG, see its element ids, pick an
 * element on the drawing (or from the list), pick the attribute from those the connection reports (or a
 * placeholder), say what it moves, and see the drawing move live before saving. The platform checks the
 * drawing at save; its refusal (element and line) is shown as it says it.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../../api.ts';
import { valueKeys } from '../../live.ts';
import { Alert } from '../common.ts';
import { drawAnimation, type Animation } from './animation_board.ts';
import type { Binding } from './bindings.ts';

type Project = { id: string; name: string };
type Connection = { id: string; name: string };
type Stored = Animation & { projectId: string; dsc?: string };

const kinds: Binding['kind'][] = ['fill', 'stroke', 'text', 'visibility', 'rotate', 'translate', 'blink'];
const previewPrefix = 'author-';

/** `value=#rrggbb, value=#rrggbb` as the pairs it lists. */
function pairs(text: string): [string, string][] {
  return text
    .split(',')
    .map((p) => p.split('=').map((s) => s.trim()))
    .filter((p): p is [string, string] => p.length === 2 && p[0] !== '' && p[1] !== '');
}

/** The binding the form describes. */
function bindingOf(f: Record<string, string>): Binding {
  const b: Binding = {
    elementId: f.elementId ?? '',
    source: f.placeholder ? { placeholder: f.placeholder } : { connectionId: f.connectionId ?? '', reference: f.reference ?? '' },
    kind: (f.kind ?? 'fill') as Binding['kind'],
  };
  if (f.format) b.format = f.format;
  if (f.unit) b.unit = f.unit;
  if (f.colors) b.colors = Object.fromEntries(pairs(f.colors));
  if (f.thresholds) b.thresholds = pairs(f.thresholds).map(([at, color]) => ({ at: Number(at), color }));
  if (f.range) {
    const [a = 0, z = 1, from = 0, to = 90] = f.range.split(',').map(Number);
    b.range = { in: [a, z], out: [from, to] };
  }
  if (f.action) b.action = f.action as 'write' | 'control';
  return b;
}

/** One labelled input of the binding form. */
function Input({
  name,
  label,
  form,
  set,
  list,
}: {
  name: string;
  label: string;
  form: Record<string, string>;
  set: (n: string, v: string) => void;
  list?: string;
}) {
  return html`<div class="field"><label for=${`ab-${name}`}>${label}</label>
    <input id=${`ab-${name}`} list=${list} value=${form[name] ?? ''} onInput=${(e: Event) => set(name, (e.target as HTMLInputElement).value)} /></div>`;
}

/** The animation editor: a new one, or the one `id` names. */
export function AnimationEditor({ id, onSaved }: { id?: string; onSaved: () => void }) {
  const [projects, setProjects] = useState<Project[]>([]);
  const [connections, setConnections] = useState<Connection[]>([]);
  const [meta, setMeta] = useState({ name: '', projectId: '', placeholders: '' });
  const [svg, setSvg] = useState('');
  const [bindings, setBindings] = useState<Binding[]>([]);
  const [ids, setIds] = useState<string[]>([]);
  const [form, setForm] = useState<Record<string, string>>({ kind: 'fill' });
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const set = (n: string, v: string) => setForm((f) => ({ ...f, [n]: v }));
  useEffect(() => {
    api<Project[]>('GET', '/api/projects')
      .then(setProjects)
      .catch((e) => setError(messageOf(e)));
    api<Connection[]>('GET', '/api/connections')
      .then(setConnections)
      .catch(() => setConnections([]));
    if (!id) return;
    api<Stored>('GET', `/api/animations/${encodeURIComponent(id)}`)
      .then((a) => {
        setMeta({ name: a.name, projectId: a.projectId, placeholders: a.placeholders.join(', ') });
        setSvg(a.svg);
        setBindings(a.bindings);
      })
      .catch((e) => setError(messageOf(e)));
  }, [id]);
  const placeholders = meta.placeholders
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // The live preview: drawn again whenever the drawing or its bindings change.
  useEffect(() => {
    const el = box.current;
    if (!el || !svg) return;
    const drawn = drawAnimation(el, { id: 'preview', name: meta.name || 'Preview', svg, bindings, placeholders }, {}, previewPrefix);
    setIds(drawn ? [...drawn.byId.keys()] : []);
    const pick = (e: Event) => {
      const hit = (e.target as Element).closest('[id]');
      if (hit?.id.startsWith(previewPrefix)) set('elementId', hit.id.slice(previewPrefix.length));
    };
    el.addEventListener('click', pick);
    return () => {
      el.removeEventListener('click', pick);
      drawn?.dispose();
    };
  }, [svg, bindings]);
  const references = (valueKeys.value[form.connectionId ?? ''] ?? []).map((k) => k.slice(k.indexOf(' ') + 1));
  const save = async () => {
    setError(null);
    setSaved(false);
    const body = { name: meta.name, projectId: meta.projectId, svg, bindings, placeholders };
    try {
      if (id) await api('PUT', `/api/animations/${encodeURIComponent(id)}`, { body });
      else await api('POST', '/api/animations', { body });
      setSaved(true);
      onSaved();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return html`<section aria-labelledby="anim-title">
    <h2 id="anim-title">${id ? `Animation ${meta.name}` : 'New animation'}</h2>
    <div class="field"><label for="an-name">Animation name</label><input id="an-name" value=${meta.name} onInput=${(e: Event) => setMeta({ ...meta, name: (e.target as HTMLInputElement).value })} /></div>
    <div class="field"><label for="an-project">Project</label>
      <select id="an-project" value=${meta.projectId} onChange=${(e: Event) => setMeta({ ...meta, projectId: (e.target as HTMLSelectElement).value })}>
        <option value="">Choose…</option>${projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}
      </select></div>
    <div class="field"><label for="an-file">SVG file</label>
      <input id="an-file" type="file" accept=".svg,image/svg+xml" onChange=${async (e: Event) => setSvg((await (e.target as HTMLInputElement).files?.[0]?.text()) ?? '')} /></div>
    <div class="field"><label for="an-ph">Placeholders (comma-separated)</label><input id="an-ph" value=${meta.placeholders} onInput=${(e: Event) => setMeta({ ...meta, placeholders: (e.target as HTMLInputElement).value })} /></div>
    <p>The drawing, live: click an element to bind it.</p>
    <div class="author-preview animation" ref=${box}></div>
    <p>Elements: ${ids.map((i) => html`<button type="button" class="secondary" aria-pressed=${form.elementId === i} onClick=${() => set('elementId', i)}>${i}</button>`)}</p>
    <fieldset><legend>Bind element ${form.elementId ?? '(pick one)'}</legend>
      <div class="field"><label for="ab-kind">Moves its</label>
        <select id="ab-kind" value=${form.kind} onChange=${(e: Event) => set('kind', (e.target as HTMLSelectElement).value)}>${kinds.map((k) => html`<option value=${k}>${k}</option>`)}</select></div>
      <div class="field"><label for="ab-conn">Connection</label>
        <select id="ab-conn" value=${form.connectionId ?? ''} onChange=${(e: Event) => set('connectionId', (e.target as HTMLSelectElement).value)}>
          <option value="">(a placeholder)</option>${connections.map((c) => html`<option value=${c.id}>${c.name}</option>`)}
        </select></div>
      <${Input} name="reference" label="Attribute (as reported)" form=${form} set=${set} list="ab-refs" />
      <datalist id="ab-refs">${references.map((r) => html`<option value=${r}></option>`)}</datalist>
      <${Input} name="placeholder" label="Or placeholder" form=${form} set=${set} />
      <${Input} name="format" label="Decimals (0.00)" form=${form} set=${set} />
      <${Input} name="unit" label="Unit" form=${form} set=${set} />
      <${Input} name="colors" label="Colours by value (true=#c62828, false=#2e7d32)" form=${form} set=${set} />
      <${Input} name="thresholds" label="Colours from (0=#0b5cad, 80=#a4161a)" form=${form} set=${set} />
      <${Input} name="range" label="Range (min, max, from, to)" form=${form} set=${set} />
      <div class="field"><label for="ab-action">On click</label>
        <select id="ab-action" value=${form.action ?? ''} onChange=${(e: Event) => set('action', (e.target as HTMLSelectElement).value)}>
          <option value="">nothing</option><option value="control">control</option><option value="write">write</option>
        </select></div>
      <button type="button" disabled=${!form.elementId} onClick=${() => setBindings([...bindings, bindingOf(form)])}>Add binding</button>
    </fieldset>
    <ul>${bindings.map(
      (b, i) => html`<li>${b.elementId}: ${b.kind} of ${'placeholder' in b.source ? `{{${b.source.placeholder}}}` : b.source.reference}
        <button type="button" class="secondary" onClick=${() => setBindings(bindings.filter((_, j) => j !== i))}>Remove</button></li>`,
    )}</ul>
    <${Alert} message=${error} />
    ${saved ? html`<p role="status" class="alert info">Saved.</p>` : null}
    <button type="button" disabled=${!svg || !meta.name || !meta.projectId} onClick=${save}>Save animation</button>
  </section>`;
}
