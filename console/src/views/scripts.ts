/** Scripts: the list with whether each is scheduled, and one script's code, its runs by hand, its schedule. */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { configChanges } from '../live.ts';
import { bodyOf } from '../request_fields.ts';
import { canEdit } from '../session.ts';
import { go, href } from '../router.ts';
import { Alert, Field, useAction, when } from './common.ts';

/** A script as the API answers it. */
type Script = {
  id: string;
  name: string;
  projectId: string;
  type: string;
  log: boolean;
  code: string;
  period?: number;
  delay?: number;
  offset?: number;
  time?: string;
  dsc?: string;
};
type Run = {
  outcome: string;
  result?: unknown;
  logs: string[];
  durationMs: number;
  error?: string | { message?: string };
  logsTruncated?: boolean;
};

/** A run's error as text. */
const errorText = (e: Run['error']) => (typeof e === 'string' ? e : (e?.message ?? 'the script failed'));

/** The scripts of the space. */
export function Scripts() {
  const [list, setList] = useState<Script[] | null>(null);
  const [statuses, setStatuses] = useState<Record<string, string>>({});
  const [run, , error] = useAction();
  useEffect(() => {
    void run(async () => {
      const scripts = await api<Script[]>('GET', '/api/scripts');
      setList(scripts);
      if (scripts.length > 0)
        setStatuses(await api('GET', '/api/scripts/status/by-ids', { query: { scriptIds: scripts.map((s) => s.id).join(',') } }));
    });
  }, [configChanges.value]);
  return html`<section aria-labelledby="h-scripts">
    <div class="heading">
      <h1 id="h-scripts">Scripts</h1>
      ${canEdit() ? html`<a class="button" href=${href('scripts', 'new')}>New script</a>` : null}
    </div>
    <${Alert} message=${error} />
    ${list?.length === 0 ? html`<p>No scripts in this space yet.</p>` : null}
    ${
      list && list.length > 0
        ? html`<table>
          <caption class="sr-only">Scripts of the space</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Schedule</th><th scope="col">Status</th></tr></thead>
          <tbody>${list.map(
            (s) => html`<tr key=${s.id}>
              <td><a href=${href('scripts', s.id)}>${s.name}</a></td>
              <td>${s.type}${s.type === 'Periodic' && s.period ? `, every ${s.period} ms` : ''}</td>
              <td>${statuses[s.id] ?? '—'}</td>
            </tr>`,
          )}</tbody>
        </table>`
        : null
    }
  </section>`;
}

/** One script: its code (in the code editor, loaded only here), saving, running now, scheduling. */
export function ScriptView({ id }: { id?: string }) {
  const [script, setScript] = useState<Script | null>(null);
  const [status, setStatus] = useState<string>('');
  const [lastRun, setLastRun] = useState<Run | null>(null);
  const [load, , loadError] = useAction();
  const [act, busy, error] = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    void load(async () => {
      if (!id) {
        const projects = await api<{ id: string }[]>('GET', '/api/projects');
        setScript({ id: '', name: '', projectId: projects[0]?.id ?? '', type: 'None', log: true, code: "ins.log('hello');\n" });
        return;
      }
      setScript(await api<Script>('GET', `/api/scripts/${id}`));
      setStatus(await api<string>('GET', `/api/scripts/${id}/status`));
    });
  }, [id]);
  if (!script) return html`<${Alert} message=${loadError} />${loadError ? null : html`<p role="status">Loading the script…</p>`}`;
  const set = (patch: Partial<Script>) => setScript({ ...script, ...patch });
  // The answer's own fields (id, audit fields) are not sent: only what the operation's body takes.
  const body = (operation: 'createScript' | 'updateScript') =>
    bodyOf(operation, { ...script, period: script.type === 'Periodic' ? Number(script.period ?? 1000) : script.period });
  const save = () =>
    act(async () => {
      setSaved(null);
      if (!id) {
        const made = await api<Script>('POST', '/api/scripts', { body: body('createScript') });
        go('scripts', made.id);
      } else {
        await api('PUT', `/api/scripts/${id}`, { body: body('updateScript') });
        setSaved('Saved.');
      }
    });
  const runNow = () => act(async () => setLastRun(await api<Run>('POST', `/api/scripts/${id}/run`)));
  const schedule = (verb: 'schedule' | 'unschedule') =>
    act(async () => {
      await api('POST', `/api/scripts/${id}/${verb}`);
      setStatus(await api<string>('GET', `/api/scripts/${id}/status`));
    });
  return html`<section aria-labelledby="h-script">
    <h1 id="h-script">${id ? `Script ${script.name}` : 'New script'}</h1>
    ${status ? html`<p>Status: <strong>${status}</strong></p>` : null}
    <form onSubmit=${(e: Event) => (e.preventDefault(), void save())}>
      <div class="row">
        <${Field} label="Name" name="name" required value=${script.name} onInput=${(v: string) => set({ name: v })} />
        <div class="field">
          <label for="f-type">Schedule</label>
          <select id="f-type" value=${script.type} onChange=${(e: Event) => set({ type: (e.target as HTMLSelectElement).value })}>
            <option value="None">None</option><option value="Periodic">Periodic</option><option value="Daily">Daily</option><option value="Once">Once</option>
          </select>
        </div>
        ${script.type === 'Periodic' ? html`<${Field} label="Period (ms)" name="period" type="number" value=${String(script.period ?? 1000)} onInput=${(v: string) => set({ period: Number(v) })} />` : null}
      </div>
      <${CodeEditor} code=${script.code} onChange=${(code: string) => set({ code })} />
      <${Alert} message=${error} />
      ${saved ? html`<p role="status" class="alert info">${saved}</p>` : null}
      ${
        canEdit()
          ? html`<button type="submit" disabled=${busy}>${busy ? 'Working…' : 'Save'}</button>
            ${
              id
                ? html`<button type="button" disabled=${busy} onClick=${runNow}>Run now</button>
                  <button type="button" class="secondary" disabled=${busy} onClick=${() => schedule(status === 'Scheduled' ? 'unschedule' : 'schedule')}>
                    ${status === 'Scheduled' ? 'Unschedule' : 'Schedule'}
                  </button>`
                : null
            }`
          : null
      }
    </form>
    ${
      lastRun
        ? html`<section aria-labelledby="h-run">
          <h2 id="h-run">Run: ${lastRun.outcome} in ${lastRun.durationMs} ms</h2>
          ${lastRun.error ? html`<p class="alert error">${errorText(lastRun.error)}</p>` : null}
          ${lastRun.result !== undefined ? html`<p>Result: <code>${JSON.stringify(lastRun.result)}</code></p>` : null}
          <pre class="logs" aria-label="Logs of the run" tabindex="0">${lastRun.logs.join('\n') || '(no log lines)'}${lastRun.logsTruncated ? '\n… (more lines than are kept)' : ''}</pre>
        </section>`
        : null
    }
    ${id ? html`<${Runs} id=${id} key=${lastRun} />` : null}
  </section>`;
}

/** The script's last runs. */
function Runs({ id }: { id: string }) {
  const [runs, setRuns] = useState<{ startedAt: string; outcome: string; durationMs: number }[]>([]);
  const [load] = useAction();
  useEffect(() => {
    void load(async () => setRuns((await api<{ runs: typeof runs }>('GET', `/api/scripts/${id}/runs`)).runs));
  }, [id]);
  if (runs.length === 0) return null;
  return html`<h2>Last runs</h2><table><caption class="sr-only">Last runs</caption>
    <thead><tr><th scope="col">Started</th><th scope="col">Outcome</th><th scope="col">Duration</th></tr></thead>
    <tbody>${runs.slice(0, 20).map((r) => html`<tr><td>${when(r.startedAt)}</td><td>${r.outcome}</td><td>${r.durationMs} ms</td></tr>`)}</tbody></table>`;
}

/**
 * The code: CodeMirror, fetched as a chunk of its own when this screen opens; a plain text area until it
 * has arrived (or if it cannot be fetched).
 */
function CodeEditor({ code, onChange }: { code: string; onChange: (code: string) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  const latest = useRef(onChange);
  latest.current = onChange;
  // What was typed in the text area before the editor arrived goes into the editor.
  const current = useRef(code);
  current.current = code;
  useEffect(() => {
    let remove: (() => void) | null = null;
    let gone = false;
    import('./code_editor.ts')
      .then(({ mountEditor }) => {
        if (gone || !host.current) return;
        remove = mountEditor(host.current, current.current, 'Code', (next) => latest.current(next));
        setReady(true);
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      remove?.();
    };
  }, []);
  return html`<div class="field">
    ${ready ? html`<span class="label" aria-hidden="true">Code</span>` : html`<label for="f-code">Code</label>`}
    ${ready ? null : html`<textarea id="f-code" class="code" rows="16" spellcheck="false" value=${code} onInput=${(e: Event) => onChange((e.target as HTMLTextAreaElement).value)}></textarea>`}
    <div ref=${host} class="editor"></div>
  </div>`;
}
