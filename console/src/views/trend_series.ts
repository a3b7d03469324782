/**
 * The trend screen's list of plotted attributes (its text alternative: each one's latest value, how many
 * points and gaps the chart holds, its CSV, a way to remove it) and the form that adds one from the
 * attributes a connection's history holds.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { TrendSeries } from '../trend_link.ts';
import { Alert, show, useAction, when } from './common.ts';
import type { Drawn } from './trend_chart.ts';
import { csvHref, type SeriesData } from './trend_data.ts';

type ConnectionName = { id: string; name: string };

/** The space's connections, read once per screen. */
function useConnections(): ConnectionName[] {
  const [list, setList] = useState<ConnectionName[]>([]);
  useEffect(() => {
    api<ConnectionName[]>('GET', '/api/connections')
      .then((l) => setList(l.map(({ id, name }) => ({ id, name }))))
      .catch(() => setList([]));
  }, []);
  return list;
}

const same = (a: TrendSeries, b: TrendSeries) => a.connectionId === b.connectionId && a.reference === b.reference;

/** The plotted attributes, as a table: what the chart shows, in words. */
export function SeriesTable(props: { data: SeriesData[]; drawn: Drawn; from: number; to: number; onRemove: (s: TrendSeries) => void }) {
  const connections = useConnections();
  const { data, drawn } = props;
  if (data.length === 0) return null;
  const nameOf = (id: string) => connections.find((c) => c.id === id)?.name ?? id;
  return html`<table class="trend-series">
    <caption>Plotted attributes and their latest values</caption>
    <thead><tr><th scope="col">Attribute</th><th scope="col">Latest value</th><th scope="col">On the chart</th><th scope="col">Data</th></tr></thead>
    <tbody>${data.map(
      (
        d,
        n,
      ) => html`<tr data-reference=${d.reference} data-points=${drawn.points[n] ?? 0} data-nulls=${drawn.nulls[n] ?? 0} data-resolution=${d.resolution}>
        <th scope="row"><span class=${`swatch swatch-${n}`} aria-hidden="true"></span>${d.reference}<br /><small>${nameOf(d.connectionId)}</small></th>
        <td>${d.latest ? html`${show(d.latest.value)}${d.latest.quality !== 'good' ? html` <span class="badge bad">${d.latest.quality}</span>` : null}<br /><small>${when(new Date(d.latest.at).toISOString())}</small>` : '—'}</td>
        <td>${pointsText(drawn.points[n] ?? 0, d)}</td>
        <td>
          <a href=${csvHref(d, props.from, props.to)} download aria-label=${`CSV of ${d.reference}`}>CSV</a>
          <button type="button" class="small secondary" aria-label=${`Remove ${d.reference}`} onClick=${() => props.onRemove(d)}>Remove</button>
        </td>
      </tr>`,
    )}</tbody>
  </table>`;
}

/** How many points an attribute has on the chart, how they were made, and its gaps, in words. */
function pointsText(points: number, d: SeriesData): string {
  const made =
    d.resolution === 'raw'
      ? 'values'
      : `intervals of ${d.resolution === 'hour' ? 'hours' : d.resolution === 'minute' ? 'minutes' : 'values'}`;
  const gaps = d.gaps.length === 0 ? '' : `, ${d.gaps.length} ${d.gaps.length === 1 ? 'gap' : 'gaps'} (session down)`;
  const bad = d.bad.filter(Boolean).length;
  return `${points} ${made}${gaps}${bad ? `, ${bad} of bad quality` : ''}`;
}

/** Adds an attribute: a connection, then one of the attributes its history holds. */
export function AddSeries({ plotted, onAdd }: { plotted: TrendSeries[]; onAdd: (s: TrendSeries) => void }) {
  const connections = useConnections();
  const [connectionId, setConnectionId] = useState('');
  const [references, setReferences] = useState<string[]>([]);
  const [reference, setReference] = useState('');
  const [run, busy, error] = useAction();
  const chosen = connectionId || connections[0]?.id || '';
  useEffect(() => {
    setReferences([]);
    if (!chosen) return;
    void run(async () => {
      const summary = await api<{ reference: string }[]>('GET', `/api/connections/${encodeURIComponent(chosen)}/history/summary`);
      // A quality or a time is how a value was, not a value to draw (bad quality is marked on the line).
      setReferences(summary.map((s) => s.reference).filter((r) => !/\.[qt](\.|\[|$)/.test(r)));
    });
  }, [chosen]);
  const open = references.filter((r) => !plotted.some((p) => same(p, { connectionId: chosen, reference: r })));
  const picked = open.includes(reference) ? reference : (open[0] ?? '');
  const add = (e: Event) => {
    e.preventDefault();
    if (chosen && picked) onAdd({ connectionId: chosen, reference: picked });
  };
  return html`<form class="trend-add" onSubmit=${add} aria-labelledby="h-add-series">
    <h2 id="h-add-series">Add an attribute</h2>
    <div class="field">
      <label for="trend-connection">Connection</label>
      <select id="trend-connection" value=${chosen} onChange=${(e: Event) => setConnectionId((e.target as HTMLSelectElement).value)}>
        ${connections.map((c) => html`<option value=${c.id}>${c.name}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="trend-reference">Attribute</label>
      <select id="trend-reference" value=${picked} disabled=${open.length === 0} onChange=${(e: Event) => setReference((e.target as HTMLSelectElement).value)}>
        ${open.map((r) => html`<option value=${r}>${r}</option>`)}
      </select>
    </div>
    <button type="submit" disabled=${busy || !picked}>Add to the chart</button>
    ${!busy && chosen && open.length === 0 && !error ? html`<p>This connection has recorded no other attribute yet.</p>` : null}
    <${Alert} message=${error} />
  </form>`;
}
