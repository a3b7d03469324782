/**
 * The device model from `…/browse` (the device's own while connected, else the SCL file's), drawn a level
 * at a time: a branch's children are made only when it is opened. Attributes that may be written, data
 * objects that may be operated and report blocks that may be enabled carry their action.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { infoOf, modelInfo, type ModelInfo } from '../model_info.ts';
import { canEdit } from '../session.ts';
import { Alert, useAction } from './common.ts';
import { iecReference, trendHref } from '../trend_link.ts';

type Node = Record<string, unknown> & { name?: string; ref?: string };
type Actions = {
  id: string;
  /** Whether the connection has an SCL file, whose units and descriptions the device's own model lacks. */
  hasFile?: boolean;
  enabled?: Set<string>;
  /** The SCL file's words for the device's model. */
  info?: ModelInfo;
  onWrite: (reference: string, kind?: string) => void;
  onControl: (reference: string, cdc: string) => void;
};

/** What a person types for an attribute of this type: an on/off, a number, or text. */
function kindOf(type: string): string {
  if (/bool/i.test(type)) return 'boolean';
  if (/int|float|enum|unsigned|integer/i.test(type)) return 'number';
  return 'text';
}

/** Functional constraints the model says are read-only (the platform refuses writes to them). */
const readOnlyFcs = new Set(['ST', 'MX', 'OR', 'EX', 'CO']);
/** Common data classes with a control service. */
const controllable = new Set(['SPC', 'DPC', 'INC', 'ENC', 'BSC', 'ISC', 'APC', 'BAC']);

/** The tree of one connection. */
export function ModelTree(props: Actions) {
  const [model, setModel] = useState<Node | null>(null);
  const [run, busy, error] = useAction();
  const [enabled, setEnabled] = useState<Set<string>>(new Set());
  const [info, setInfo] = useState<ModelInfo>(new Map());
  const load = () =>
    run(async () => {
      const [tree, reports] = await Promise.all([
        api<Node>('GET', `/api/connections/${props.id}/browse`),
        api<{ rcb: string }[]>('GET', `/api/connections/${props.id}/reports`),
      ]);
      setEnabled(new Set(reports.map((r) => r.rcb)));
      setModel(tree);
      // The SCL model carries its own words; the device's is given them from the file.
      if (tree.source === 'device') setInfo(await modelInfo(props.id, props.hasFile ?? false).catch(() => new Map()));
    });
  useEffect(() => {
    void load();
  }, [props.id, props.hasFile]);
  return html`<div>
    <p>
      ${model ? (model.source === 'device' ? 'The model the connected device declares.' : 'The model of the SCL file.') : null}
      <button type="button" class="secondary small" onClick=${load} disabled=${busy}>${busy ? 'Loading the model…' : 'Browse again'}</button>
    </p>
    <${Alert} message=${error} />
    ${model ? html`<ul class="tree" role="list">${children(model, {}).map((c) => html`<${Branch} node=${c.node} label=${c.label} path=${c.path} actions=${{ ...props, enabled, info }} />`)}</ul>` : null}
  </div>`;
}

/** Where a node sits: the logical device and node names, to name a data object's reference. */
type Path = { ld?: string; ln?: string };

/** A node's child nodes: each array of objects it holds, with the path they sit on. */
function children(node: Node, path: Path): { node: Node; label: string; path: Path }[] {
  const out: { node: Node; label: string; path: Path }[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (!Array.isArray(value) || key === 'fcs' || key === 'arrays' || key === 'trgOps' || key === 'optFields') continue;
    for (const child of value) {
      if (!child || typeof child !== 'object') continue;
      const c = child as Node;
      const next: Path = key === 'logicalDevices' ? { ld: c.name } : key === 'logicalNodes' ? { ...path, ln: c.name } : path;
      out.push({ node: c, label: labelOf(key, c), path: next });
    }
  }
  return out;
}

/** What a node is called on screen; an enumeration by its id, its values by ord and name. */
function labelOf(key: string, n: Node): string {
  if (key === 'enumTypes') return `${String(n.id ?? '(no id)')} (enumeration)`;
  if (key === 'values' && n.ord !== undefined) return `${String(n.ord)}: ${String(n.value ?? '')}`;
  const name = String(n.name ?? n.ref ?? n.iedName ?? n.id ?? '(unnamed)');
  if (key === 'dataObjects' && n.cdc) return `${name} (${n.cdc})`;
  if (key === 'attributes' && n.fc) return `${name} [${n.fc}] ${n.bType ?? ''}${n.value !== undefined ? ` = ${n.value}` : ''}`;
  if (key === 'reportControls') return `${name} (${n.buffered ? 'buffered' : 'unbuffered'} report)`;
  if (key === 'dataSets') return `${name} (data set)`;
  return name;
}

/** A node's unit and description: its own (SCL model), else the file's for the device's node. */
function wordsOf(node: Node, path: Path, info: ModelInfo | undefined): { unit?: string; desc?: string } {
  const own = { unit: typeof node.unit === 'string' ? node.unit : undefined, desc: typeof node.desc === 'string' ? node.desc : undefined };
  if (own.unit || own.desc || !info || !path.ld) return own;
  if (typeof node.ref === 'string' && node.ref.includes('[')) {
    const found = infoOf(info, node.ref);
    return { unit: found.unit, desc: found.desc };
  }
  if ('logicalNodes' in node) return info.get(path.ld) ?? {};
  if ('dataObjects' in node && path.ln) return info.get(`${path.ld}/${path.ln}`) ?? {};
  if (Array.isArray(node.attributes) && typeof node.name === 'string' && path.ln)
    return info.get(`${path.ld}/${path.ln}.${node.name}`) ?? {};
  return own;
}

/** A node's unit and description beside its name. */
function Words({ node, path, info }: { node: Node; path: Path; info: ModelInfo | undefined }) {
  const { unit, desc } = wordsOf(node, path, info);
  if (!unit && !desc) return null;
  return html`<span class="desc">${unit ? html`<span class="unit">${unit}</span> ` : null}${desc ?? ''}</span>`;
}

/** One node: a leaf, or a branch whose children appear when opened. */
function Branch({ node, label, path, actions }: { node: Node; label: string; path: Path; actions: Actions }) {
  const [open, setOpen] = useState(false);
  const kids = open ? children(node, path) : [];
  const hasKids = Object.entries(node).some(([k, v]) => Array.isArray(v) && v.length > 0 && typeof v[0] === 'object' && k !== 'arrays');
  const action = actionOf(node, path, actions);
  const words = html`<${Words} node=${node} path=${path} info=${actions.info} />`;
  if (!hasKids) return html`<li><span class="leaf">${label}</span> ${words} ${action}${trendLinkOf(node, actions.id)}</li>`;
  // A disclosure button, not <details>: the node's own action sits beside it, never inside another control.
  return html`<li>
    <button type="button" class="disclosure" aria-expanded=${open} onClick=${() => setOpen(!open)}><span class="marker" aria-hidden="true">${open ? '\u25BE' : '\u25B8'}</span>${label}</button> ${words} ${action}
    ${open ? html`<ul role="list">${kids.map((c) => html`<${Branch} node=${c.node} label=${c.label} path=${c.path} actions=${actions} />`)}</ul>` : null}
  </li>`;
}

/** The button a node offers, if any: write an attribute, operate a data object, enable a report block. */
function actionOf(node: Node, path: Path, actions: Actions) {
  if (!canEdit()) return null;
  const only = (action: () => void) => (e: Event) => {
    e.preventDefault();
    action();
  };
  const leaf = !Array.isArray(node.children) || node.children.length === 0;
  if (typeof node.fc === 'string' && typeof node.ref === 'string' && !readOnlyFcs.has(node.fc) && !('attributes' in node) && leaf) {
    const ref = node.ref;
    const kind = kindOf(String(node.bType ?? node.type ?? ''));
    return html`<button type="button" class="small secondary" aria-label=${`Write ${ref}`} onClick=${only(() => actions.onWrite(ref, kind))}>Write…</button>`;
  }
  // The SCL model names the common data class; the device's own model shows a control by its CO attributes.
  const attributes = Array.isArray(node.attributes) ? (node.attributes as Node[]) : [];
  const operable = typeof node.cdc === 'string' ? controllable.has(node.cdc) : attributes.some((a) => a.fc === 'CO');
  if (operable && path.ld && path.ln) {
    const ref = `${path.ld}/${path.ln}.${node.name}`;
    const cdc = typeof node.cdc === 'string' ? node.cdc : '';
    return html`<button type="button" class="small" aria-label=${`Operate ${ref}`} onClick=${only(() => actions.onControl(ref, cdc))}>Operate…</button>`;
  }
  if (typeof node.ref === 'string' && /\$(RP|BR)\$/.test(node.ref) && !('instances' in node)) {
    return html`<${EnableReport} id=${actions.id} rcb=${node.ref} enabled=${actions.enabled?.has(node.ref) ?? false} />`;
  }
  return null;
}

/** A link to the trend of a status or measured attribute that holds a number or an on/off state. */
function trendLinkOf(node: Node, id: string) {
  const type = String(node.bType ?? node.type ?? '');
  if (typeof node.ref !== 'string' || (node.fc !== 'ST' && node.fc !== 'MX') || !/bool|int|float|enum|dbpos/i.test(type)) return null;
  const reference = iecReference(node.ref);
  return html` <a class="trend-link" href=${trendHref({ series: [{ connectionId: id, reference }] })} aria-label=${`Trend of ${reference}`}>Trend</a>`;
}

/** Enables a report block (with a general interrogation, so every value arrives once at once), or disables it. */
function EnableReport({ id, rcb, enabled }: { id: string; rcb: string; enabled: boolean }) {
  const [run, busy, error] = useAction();
  const [done, setDone] = useState(enabled);
  const toggle = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (done) await api('DELETE', `/api/connections/${id}/reports`, { query: { rcb } });
      else
        await api('POST', `/api/connections/${id}/reports`, {
          body: { rcb, generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] },
        });
      setDone(!done);
    });
  };
  return html`${done ? html`<span class="badge ok" role="status">reports enabled</span> ` : null}
    <button type="button" class="small" aria-label=${`${done ? 'Disable' : 'Enable'} reports of ${rcb}`} disabled=${busy} onClick=${toggle}>
      ${busy ? 'Working…' : done ? 'Disable reports' : 'Enable reports'}
    </button>
    ${error ? html`<span class="inline-error" role="alert">${error}</span>` : null}`;
}
