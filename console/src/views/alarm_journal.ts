/** The alarm journal: every transition, oldest first, filtered on the platform, paged, and its CSV. */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, currentSpace, sentenceFor } from '../api.ts';
import type { AlarmState } from '../alarms.ts';
import { stateWords } from './alarm_actions.ts';
import type { AlarmFilters, AlarmGroup } from './alarms.ts';
import { Alert, show, useAction, when } from './common.ts';

type Row = {
  seq: string;
  alarmId: string;
  from: AlarmState;
  to: AlarmState;
  at: string;
  by: string | null;
  value: unknown;
  comment: string | null;
};
type Definition = { id: string; name: string; message: string; priority: number };

const pageSize = 50;

/** The journal's query for the filters, from a cursor. */
function queryOf(f: AlarmFilters, after: string | undefined): Record<string, string | undefined> {
  const priority = Number.parseInt(f.priority, 10);
  return {
    groupId: f.groupId || undefined,
    priority: priority >= 1 && priority <= 255 ? String(priority) : undefined,
    state: f.state || undefined,
    text: f.text.trim() || undefined,
    after,
  };
}

/** The journal tab. */
export function Journal({ filters }: { filters: AlarmFilters; groups: AlarmGroup[] }) {
  // The cursors of the pages seen, for the filters they were seen with: new filters start at the first page.
  const key = JSON.stringify(filters);
  const [seen, setSeen] = useState<{ key: string; cursors: (string | undefined)[] }>({ key, cursors: [undefined] });
  const cursors = seen.key === key ? seen.cursors : [undefined];
  const setCursors = (next: (string | undefined)[]) => setSeen({ key, cursors: next });
  const latest = useRef(0);
  const [page, setPage] = useState<{ rows: Row[]; next: string | null } | null>(null);
  const [names, setNames] = useState<Record<string, Definition>>({});
  const [load, busy, error] = useAction();
  const [download, downloading, downloadError] = useAction();
  const after = cursors.at(-1);
  useEffect(() => {
    void api<Definition[]>('GET', '/api/alarm-definitions')
      .then((defs) => setNames(Object.fromEntries(defs.map((d) => [d.id, d]))))
      .catch(() => undefined);
  }, []);
  useEffect(() => {
    const asked = ++latest.current;
    void load(async () => {
      const answer = await api<{ rows: Row[]; next: string | null }>('GET', '/api/alarms/journal', {
        query: { ...queryOf(filters, after), limit: String(pageSize) },
      });
      // Typing in the text filter asks again before the last answer came: only the newest question's answer shows.
      if (asked === latest.current) setPage(answer);
    });
  }, [after, key]);
  const csv = () =>
    download(async () => {
      const query = new URLSearchParams(
        Object.entries({ ...queryOf(filters, after), format: 'csv', limit: '1000' }).filter(
          (e): e is [string, string] => e[1] !== undefined,
        ),
      );
      const res = await fetch(`/api/alarms/journal?${query}`, {
        headers: { accept: 'text/csv', 'x-space': currentSpace.value ?? '' },
        credentials: 'same-origin',
      });
      if (!res.ok) {
        const problem = await res.json().catch(() => ({}));
        throw new ApiError(res.status, problem.code ?? 'http', sentenceFor(res.status, problem, res.headers.get('retry-after')), problem);
      }
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = 'alarm-journal.csv';
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  return html`
    <${Alert} message=${error ?? downloadError} />
    <div class="row pager">
      <button type="button" class="secondary" disabled=${cursors.length === 1 || busy} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
      <span>Page ${cursors.length}</span>
      <button type="button" class="secondary" disabled=${!page?.next || busy} onClick=${() => page?.next && setCursors([...cursors, page.next])}>Next page</button>
      <button type="button" disabled=${downloading} onClick=${csv}>${downloading ? 'Preparing…' : 'Download CSV'}</button>
    </div>
    ${page && page.rows.length === 0 ? html`<p>No transition matches.</p>` : null}
    ${
      page && page.rows.length > 0
        ? html`<table class="alarms journal">
          <caption class="sr-only">Alarm journal, oldest first</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Alarm</th><th scope="col">Transition</th><th scope="col">By and comment</th></tr></thead>
          <tbody>${page.rows.map((r) => {
            const d = names[r.alarmId];
            return html`<tr key=${r.seq}>
              <td>${when(r.at)}</td>
              <td>${d ? html`<strong>${d.name}</strong> <span class="badge">P${d.priority}</span><div>${d.message}</div>` : html`<span class="muted">An alarm no longer defined</span>`}</td>
              <td class="transition">${stateWords[r.from]} → ${stateWords[r.to]}<div class="muted">Value ${show(r.value)}</div></td>
              <td>${r.by ?? 'the platform'}${r.comment ? html`<div>${r.comment}</div>` : null}</td>
            </tr>`;
          })}</tbody>
        </table>`
        : null
    }`;
}
