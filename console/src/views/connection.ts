/** One connection: its session and warnings, its model tree, its live values and its control log. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { sessions } from '../live.ts';
import { canEdit } from '../session.ts';
import { href } from '../router.ts';
import { Alert, show, useAction, when } from './common.ts';
import type { Connection } from './connections.ts';
import { StateBadge } from './connections.ts';
import { ControlDialog, WriteDialog } from './device_actions.ts';
import { ModelTree } from './model_tree.ts';
import { ValuesTable } from './live_table.ts';

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
    ${conn ? html`<p>${conn.ip}:${conn.port}${conn.sclFile ? ` · ${conn.sclFile.name}` : ''}${running && s.since && Date.parse(s.since) > 0 ? ` · ${s.state} since ${when(s.since)}` : ''}</p>` : null}
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
    ${current === 'model' ? html`<${ModelTree} id=${id} hasFile=${Boolean(conn?.sclFile)} onWrite=${(reference: string, valueKind?: string) => setDialog({ kind: 'write', reference, valueKind })} onControl=${(reference: string, cdc: string) => setDialog({ kind: 'control', reference, cdc })} />` : null}
    ${current === 'values' ? html`<${ValuesTable} id=${id} hasFile=${Boolean(conn?.sclFile)} />` : null}
    ${current === 'log' ? html`<${ControlLog} id=${id} />` : null}
    ${dialog?.kind === 'write' ? html`<${WriteDialog} id=${id} reference=${dialog.reference} kind=${dialog.valueKind} onClose=${() => setDialog(null)} />` : null}
    ${dialog?.kind === 'control' ? html`<${ControlDialog} id=${id} reference=${dialog.reference} cdc=${dialog.cdc} onClose=${() => setDialog(null)} />` : null}
  </section>`;
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
