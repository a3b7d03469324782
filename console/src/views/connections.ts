/** The space's connections with their live state, and the form that creates or edits one with its SCL file. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { configChanges, sessions } from '../live.ts';
import { canEdit } from '../session.ts';
import { go, href } from '../router.ts';
import { Alert, Field, useAction } from './common.ts';
import { ReportBlocksField } from './report_blocks_field.ts';

/** A connection as the API answers it (the fields the console shows). */
export type Connection = {
  id: string;
  name: string;
  ip: string;
  port: number;
  projectId: string;
  dsc?: string;
  /** Report blocks enabled whenever the connection is started. */
  enableReports?: string[];
  sclFile: {
    name: string;
    size: number;
    edition: string;
    warnings: { message: string; line: number; column: number }[];
    connectionWarnings: { code: string; message: string }[];
  } | null;
};
type Project = { id: string; name: string };

/** A session state in words, with its class for the badge. */
export function StateBadge({ id }: { id: string }) {
  const s = sessions.value[id];
  const state = s?.state ?? 'stopped';
  return html`<span class=${`badge state-${state}`}>${state}</span>`;
}

/** The list of connections. */
export function Connections() {
  const [list, setList] = useState<Connection[] | null>(null);
  const [run, , error] = useAction();
  useEffect(() => {
    void run(async () => setList(await api<Connection[]>('GET', '/api/connections')));
  }, [configChanges.value]);
  return html`<section aria-labelledby="h-connections">
    <div class="heading">
      <h1 id="h-connections">Connections</h1>
      ${canEdit() ? html`<a class="button" href=${href('connections', 'new')}>New connection</a>` : null}
    </div>
    <${Alert} message=${error} />
    ${list === null && !error ? html`<p role="status">Loading connections…</p>` : null}
    ${list?.length === 0 ? html`<p>No connections in this space yet.</p>` : null}
    ${
      list && list.length > 0
        ? html`<table>
          <caption class="sr-only">Connections of the space</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Address</th><th scope="col">SCL file</th><th scope="col">Session</th><th scope="col">Last error</th></tr></thead>
          <tbody>
            ${list.map(
              (c) => html`<tr key=${c.id}>
                <td><a href=${href('connections', c.id)}>${c.name}</a></td>
                <td>${c.ip}:${c.port}</td>
                <td>${c.sclFile ? `${c.sclFile.name} (${c.sclFile.edition})` : 'none'}</td>
                <td><${StateBadge} id=${c.id} /></td>
                <td>${sessions.value[c.id]?.lastError ?? ''}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
        : null
    }
  </section>`;
}

/** Creates (no id) or edits a connection; the SCL file travels with it and its parse report is shown. */
export function ConnectionForm({ id }: { id?: string }) {
  const [projects, setProjects] = useState<Project[]>([]);
  const [form, setForm] = useState({ name: '', ip: '127.0.0.1', port: '102', projectId: '', dsc: '', newProject: '' });
  const [file, setFile] = useState<File | null>(null);
  const [reports, setReports] = useState<string[]>([]);
  const [hasFile, setHasFile] = useState(false);
  const [saved, setSaved] = useState<Connection | null>(null);
  const [run, busy, error] = useAction();
  const [load, , loadError] = useAction();
  useEffect(() => {
    void load(async () => {
      const ps = await api<Project[]>('GET', '/api/projects');
      setProjects(ps);
      if (id) {
        const c = await api<Connection>('GET', `/api/connections/${id}`);
        setForm({ name: c.name, ip: c.ip, port: String(c.port), projectId: c.projectId, dsc: c.dsc ?? '', newProject: '' });
        setReports(c.enableReports ?? []);
        setHasFile(c.sclFile !== null);
      } else setForm((f) => ({ ...f, projectId: ps[0]?.id ?? '' }));
    });
  }, [id]);
  const set = (key: keyof typeof form) => (v: string) => setForm((f) => ({ ...f, [key]: v }));
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      let projectId = form.projectId;
      if (!projectId) {
        const p = await api<Project>('POST', '/api/projects', { body: { name: form.newProject || 'Plant', isActive: true } });
        projectId = p.id;
      }
      const body = new FormData();
      const connection = {
        name: form.name,
        ip: form.ip,
        port: Number(form.port),
        projectId,
        protocol: 'IEC 61850',
        ...(form.dsc ? { dsc: form.dsc } : {}),
        enableReports: reports,
      };
      body.set('connection', new Blob([JSON.stringify(connection)], { type: 'application/json' }), 'connection.json');
      if (file) body.set('file', file, file.name);
      if (id) {
        await api('PUT', `/api/protocols/iec61850/connections/${id}/with-file`, { form: body });
        setSaved(await api<Connection>('GET', `/api/connections/${id}`));
      } else setSaved(await api<Connection>('POST', '/api/protocols/iec61850/connections/with-file', { form: body }));
    });
  };
  if (saved) return html`<${ParseReport} connection=${saved} />`;
  return html`<section aria-labelledby="h-form">
    <h1 id="h-form">${id ? 'Edit connection' : 'New connection'}</h1>
    <${Alert} message=${loadError} />
    <form onSubmit=${submit} aria-busy=${busy}>
      <${Field} label="Name" name="name" required value=${form.name} onInput=${set('name')} />
      <div class="row">
        <${Field} label="Device address" name="ip" required value=${form.ip} onInput=${set('ip')} />
        <${Field} label="Port" name="port" type="number" required value=${form.port} onInput=${set('port')} />
      </div>
      ${
        projects.length > 0
          ? html`<div class="field">
            <label for="f-project">Project</label>
            <select id="f-project" value=${form.projectId} onChange=${(e: Event) => set('projectId')((e.target as HTMLSelectElement).value)}>
              ${projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}
            </select>
          </div>`
          : html`<${Field} label="New project" name="newProject" value=${form.newProject} onInput=${set('newProject')} hint="The space has no project yet; this one is created with the connection." />`
      }
      <${Field} label="Description" name="dsc" value=${form.dsc} onInput=${set('dsc')} />
      <${ReportBlocksField} id=${id} hasFile=${hasFile} value=${reports} onChange=${setReports} />
      <div class="field">
        <label for="f-file">SCL file (ICD, CID, IID, SCD or SSD)</label>
        <input id="f-file" type="file" accept=".icd,.cid,.iid,.scd,.ssd,.xml" onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        ${id ? html`<small>Without a new file the stored one is kept.</small>` : null}
      </div>
      <${Alert} message=${error} />
      <button type="submit" disabled=${busy}>${busy ? (file ? 'Uploading and checking the file…' : 'Saving…') : 'Save'}</button>
      <a class="button secondary" href=${id ? href('connections', id) : href('connections')}>Cancel</a>
    </form>
  </section>`;
}

/** What the platform said of the uploaded file: its edition and the warnings it kept. */
function ParseReport({ connection }: { connection: Connection }) {
  const f = connection.sclFile;
  const warnings = [
    ...(f?.warnings ?? []).map((w) => `Line ${w.line}, column ${w.column}: ${w.message}`),
    ...(f?.connectionWarnings ?? []).map((w) => w.message),
  ];
  return html`<section aria-labelledby="h-report">
    <h1 id="h-report">Connection ${connection.name} saved</h1>
    ${f ? html`<p>SCL file ${f.name}, edition ${f.edition}, ${f.size} bytes.</p>` : html`<p>No SCL file.</p>`}
    ${
      warnings.length > 0
        ? html`<h2>${warnings.length} warning${warnings.length === 1 ? '' : 's'} in the file</h2><ul class="warnings">${warnings.map((w) => html`<li>${w}</li>`)}</ul>`
        : html`<p role="status">The file has no warnings.</p>`
    }
    <button type="button" onClick=${() => go('connections', connection.id)}>Open the connection</button>
  </section>`;
}
