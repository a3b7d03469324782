/** One connection: its session and warnings, its model tree, its live values and its control log. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { rowOf, sessions, valueKeys } from '../live.ts';
import { canEdit } from '../session.ts';
import { href } from '../router.ts';
import { Alert, show, useAction, when } from './common.ts';
import type { Connection } from './connections.ts';
import { StateBadge } from './connections.ts';
import { ControlDialog, WriteDialog } from './device_actions.ts';
import { ModelTree } from './model_tree.ts';
import { plottableLeaves, trendHref } from '../trend_link.ts';

const tabs = [
  ['model', 'Model'],
  ['values', 'Live values'],
  ['log', 'Control log'],
] as const;

/** A warning code in words. */
const warningText: Record<string, string> = {
  model_mismatch: "The device's model differs from the SCL file",
  buffer_overflow: 'The device lost report entries (buffer overflow)',
  rptid_conflict: 'Two report blocks send the same report id',
};

/** The connection's screen. */
export function ConnectionView({ id, tab }: { id: string; tab: string }) {
  const [conn, setConn] = useState<Connection | null>(null);
  const [load, , loadError] = useAction();
  const [run, busy, error] = useAction();
  const [dialog, setDialog] = useState<{ kind: 'write' | 'control'; reference: string; cdc?: string; valueKind?: string } | null>(null);
  useEffect(() => {
    void load(async () => setConn(await api<Connection>('GET', `/api/connections/${id}`)));
  }, [id]);
  const s = sessions.value[id];
  const running = s && s.state !== 'stopped';
  const act = (verb: 'start' | 'stop') => run(() => api('POST', `/api/connections/${id}/${verb}`));
  const current = tabs.some(([t]) => t === tab) ? tab : 'model';
  return html`<section aria-labelledby="h-conn">
    <div class="heading">
      <h1 id="h-conn">${conn?.name ?? 'Connection'} <${StateBadge} id=${id} /></h1>
      <div class="actions">
        ${
          canEdit()
            ? html`<button type="button" disabled=${busy} onClick=${() => act(running ? 'stop' : 'start')}>
              ${busy ? 'Working…' : running ? 'Stop session' : 'Start session'}
            </button>
            <a class="button secondary" href=${href('connections', id, 'edit')}>Edit</a>`
            : null
        }
      </div>
    </div>
    <${Alert} message=${loadError ?? error} />
    ${conn ? html`<p>${conn.ip}:${conn.port}${conn.sclFile ? ` · ${conn.sclFile.name}` : ''}${s?.since ? ` · since ${when(s.since)}` : ''}</p>` : null}
    ${s?.lastError ? html`<p class="alert error" role="status">Last error: ${s.lastError}</p>` : null}
    ${
      (s?.warnings ?? []).length > 0
        ? html`<div class="alert warn" role="status"><h2>Session warnings</h2><ul>
          ${s?.warnings?.map((w) => html`<li><strong>${warningText[w.code] ?? w.code}</strong>${w.detail ? `: ${w.detail}` : ''}</li>`)}
        </ul></div>`
        : null
    }
    <nav class="tabs" aria-label="Connection views">
      ${tabs.map(([t, label]) => html`<a href=${href('connections', id, t)} aria-current=${current === t ? 'page' : undefined}>${label}</a>`)}
    </nav>
    ${current === 'model' ? html`<${ModelTree} id=${id} onWrite=${(reference: string, valueKind?: string) => setDialog({ kind: 'write', reference, valueKind })} onControl=${(reference: string, cdc: string) => setDialog({ kind: 'control', reference, cdc })} />` : null}
    ${current === 'values' ? html`<${ValuesTable} id=${id} />` : null}
    ${current === 'log' ? html`<${ControlLog} id=${id} />` : null}
    ${dialog?.kind === 'write' ? html`<${WriteDialog} id=${id} reference=${dialog.reference} kind=${dialog.valueKind} onClose=${() => setDialog(null)} />` : null}
    ${dialog?.kind === 'control' ? html`<${ControlDialog} id=${id} reference=${dialog.reference} cdc=${dialog.cdc} onClose=${() => setDialog(null)} />` : null}
  </section>`;
}

/** The connection's reported values, live: each row redrawn alone when its value changes (reported values are status and measurements, which are not written: writes start from the model). */
function ValuesTable({ id }: { id: string }) {
  const keys = valueKeys.value[id] ?? [];
  if (keys.length === 0) return html`<p role="status">No values reported yet. Enable a report block in the model to see values arrive.</p>`;
  return html`<table class="values">
    <caption class="sr-only">Live values</caption>
    <thead><tr><th scope="col">Reference</th><th scope="col">Value</th><th scope="col">Quality</th><th scope="col">Device time</th><th scope="col">Received</th></tr></thead>
    <tbody>${keys.map((k) => html`<${ValueRow} key=${k} k=${k} />`)}</tbody>
  </table>`;
}

/** One value: flashes when it changes, greyed while stale. */
function ValueRow({ k }: { k: string }) {
  const v = rowOf(k).value;
  const flash = v.changes === 0 ? '' : v.changes % 2 ? 'flash-a' : 'flash-b';
  return html`<tr class=${v.stale ? 'stale' : ''} data-reference=${v.reference}>
    <th scope="row">${v.reference} <${TrendLink} v=${v} /></th>
    <td class=${`value ${flash}`} data-changes=${v.changes}>${show(v.value)}${v.stale ? html` <span class="badge">stale</span>` : null}</td>
    <td>${quality(v.quality)}</td>
    <td>${when(v.timestamp)}</td>
    <td>${when(v.receivedAt)}</td>
  </tr>`;
}

/** A link to the trend of a value's numbers and on/off states (each attribute of a structure), if it has any. */
function TrendLink({ v }: { v: { connectionId: string; reference: string; value: unknown } }) {
  const refs = plottableLeaves(v.reference, v.value).slice(0, 8);
  if (refs.length === 0) return null;
  const series = refs.map((reference) => ({ connectionId: v.connectionId, reference }));
  return html`<a class="trend-link" href=${trendHref({ series })} aria-label=${`Trend of ${v.reference}`}>Trend</a>`;
}

/** A quality in words: `good`, or its validity and the flags set. */
function quality(q: unknown): string {
  if (q === undefined || q === null) return '—';
  if (typeof q === 'string') return q;
  if (typeof q === 'object') {
    const o = q as Record<string, unknown>;
    const flags = Object.entries(o)
      .filter(([k, val]) => k !== 'validity' && val === true)
      .map(([k]) => k);
    return [o.validity ?? '', ...flags].filter(Boolean).join(', ') || 'good';
  }
  return String(q);
}

type LogEntry = {
  at: string;
  username: string | null;
  action: string;
  reference: string;
  value: unknown;
  outcome: string;
  detail: string | null;
  deviceError: { error: string; addCause?: string } | null;
};

/** The connection's control log, newest first, a page at a time. */
function ControlLog({ id }: { id: string }) {
  const [page, setPage] = useState(0);
  const [data, setData] = useState<{ content: LogEntry[]; totalPages: number } | null>(null);
  const [run, busy, error] = useAction();
  const reload = () => run(async () => setData(await api('GET', `/api/connections/${id}/control-log`, { query: { page, size: 20 } })));
  useEffect(() => {
    void reload();
  }, [id, page]);
  return html`<div>
    <button type="button" class="secondary" onClick=${reload} disabled=${busy}>${busy ? 'Loading…' : 'Refresh'}</button>
    <${Alert} message=${error} />
    ${data && data.content.length === 0 ? html`<p>Nothing was written or operated yet.</p>` : null}
    ${
      data && data.content.length > 0
        ? html`<table class="log">
          <caption class="sr-only">Control log</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">User</th><th scope="col">Action</th><th scope="col">Reference</th><th scope="col">Value</th><th scope="col">Outcome</th><th scope="col">Device's reason</th></tr></thead>
          <tbody>${data.content.map(
            (e) => html`<tr>
              <td>${when(e.at)}</td><td>${e.username ?? '—'}</td><td>${e.action}</td><td>${e.reference}</td><td>${show(e.value)}</td>
              <td class=${e.outcome === 'ok' ? 'ok' : 'bad'}>${e.outcome}</td>
              <td>${e.deviceError ? `${e.deviceError.error}${e.deviceError.addCause ? ` (${e.deviceError.addCause})` : ''}` : (e.detail ?? '')}</td>
            </tr>`,
          )}</tbody>
        </table>
        <div class="pager">
          <button type="button" class="secondary" disabled=${page === 0} onClick=${() => setPage(page - 1)}>Newer</button>
          <span>Page ${page + 1} of ${Math.max(1, data.totalPages)}</span>
          <button type="button" class="secondary" disabled=${page + 1 >= data.totalPages} onClick=${() => setPage(page + 1)}>Older</button>
        </div>`
        : null
    }
  </div>`;
}
