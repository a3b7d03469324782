/** For administrators: users with their roles and spaces, locked names, and the sign-in log. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Alert, Field, useAction, when } from './common.ts';

type User = { id: string; username: string; enabled: boolean; roles: string[]; spaces: string[]; otpType?: string };
type AuthLog = { username: string; ip: string; dttm: string; isSuccessful: boolean; msg: string };

/** The administration screen. */
export function Admin() {
  const [users, setUsers] = useState<User[]>([]);
  const [locked, setLocked] = useState<string[]>([]);
  const [log, setLog] = useState<AuthLog[]>([]);
  const [load, , loadError] = useAction();
  const [act, busy, error] = useAction();
  const [form, setForm] = useState({ username: '', password: '', role: 'viewer' });
  const reload = () =>
    load(async () => {
      setUsers(await api<User[]>('GET', '/api/users'));
      setLocked(await api<string[]>('GET', '/api/auth/locked-users'));
      const page = await api<{ content?: AuthLog[] } | AuthLog[]>('GET', '/api/auth/auth-logs', { query: { page: 0, size: 20 } });
      setLog(Array.isArray(page) ? page : (page.content ?? []));
    });
  useEffect(() => {
    void reload();
  }, []);
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      await api('POST', '/api/users', {
        body: { username: form.username, password: form.password, roles: [form.role], spaces: ['default'] },
      });
      setForm({ username: '', password: '', role: 'viewer' });
      await reload();
    });
  };
  const unlock = (name: string) =>
    act(async () => (await api('DELETE', `/api/auth/lockedUsers/${encodeURIComponent(name)}`), await reload()));
  return html`<section aria-labelledby="h-admin">
    <h1 id="h-admin">Users and sign-ins</h1>
    <${Alert} message=${loadError ?? error} />
    <h2>Users</h2>
    <table><caption class="sr-only">Users</caption>
      <thead><tr><th scope="col">User</th><th scope="col">Roles</th><th scope="col">Spaces</th><th scope="col">Enabled</th><th scope="col">OTP</th></tr></thead>
      <tbody>${users.map((u) => html`<tr key=${u.id}><td>${u.username}</td><td>${u.roles.join(', ')}</td><td>${u.spaces.join(', ')}</td><td>${u.enabled ? 'yes' : 'no'}</td><td>${u.otpType ?? 'none'}</td></tr>`)}</tbody>
    </table>
    <h2>New user in the default space</h2>
    <form onSubmit=${create} class="row">
      <${Field} label="User name" name="new-username" required value=${form.username} onInput=${(v: string) => setForm({ ...form, username: v })} />
      <${Field} label="Password" name="new-password" type="password" autocomplete="new-password" required value=${form.password} onInput=${(v: string) => setForm({ ...form, password: v })} />
      <div class="field"><label for="f-role">Role</label>
        <select id="f-role" value=${form.role} onChange=${(e: Event) => setForm({ ...form, role: (e.target as HTMLSelectElement).value })}>
          <option value="viewer">viewer</option><option value="editor">editor</option><option value="admin">admin</option>
        </select></div>
      <div class="field"><span aria-hidden="true"> </span><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create user'}</button></div>
    </form>
    <h2>Locked user names</h2>
    ${
      locked.length === 0
        ? html`<p>None.</p>`
        : html`<ul>${locked.map((n) => html`<li>${n} <button type="button" class="small secondary" onClick=${() => unlock(n)}>Unlock</button></li>`)}</ul>`
    }
    <h2>Sign-in log</h2>
    <table><caption class="sr-only">Sign-in log</caption>
      <thead><tr><th scope="col">Time</th><th scope="col">User</th><th scope="col">Address</th><th scope="col">Result</th><th scope="col">Message</th></tr></thead>
      <tbody>${log.map((l) => html`<tr><td>${when(l.dttm)}</td><td>${l.username}</td><td>${l.ip}</td><td class=${l.isSuccessful ? 'ok' : 'bad'}>${l.isSuccessful ? 'signed in' : 'refused'}</td><td>${l.msg}</td></tr>`)}</tbody>
    </table>
  </section>`;
}
