/** Sign-ins: the user names locked after failed attempts (unlocked here) and the log of sign-in attempts. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Alert, useAction, when } from '../common.ts';
import { Wide } from './shared.ts';

type AuthLog = { username: string; ip: string | null; dttm: string; isSuccessful: boolean; msg: string };

/** The sign-ins screen. */
export function SignIns() {
  const [locked, setLocked] = useState<string[]>([]);
  const [log, setLog] = useState<AuthLog[]>([]);
  const [load, , loadError] = useAction();
  const [act, , error] = useAction();
  const reload = () =>
    load(async () => {
      setLocked(await api<string[]>('GET', '/api/auth/locked-users'));
      setLog((await api<{ content: AuthLog[] }>('GET', '/api/auth/auth-logs', { query: { page: 0, size: 20 } })).content);
    });
  useEffect(() => {
    void reload();
  }, []);
  const unlock = (name: string) =>
    act(async () => (await api('DELETE', `/api/auth/lockedUsers/${encodeURIComponent(name)}`), await reload()));
  return html`<section aria-labelledby="h-locked">
    <${Alert} message=${loadError ?? error} />
    <h2 id="h-locked">Locked user names</h2>
    ${
      locked.length === 0
        ? html`<p>None.</p>`
        : html`<ul>${locked.map((n) => html`<li>${n} <button type="button" class="small secondary" onClick=${() => unlock(n)}>Unlock</button></li>`)}</ul>`
    }
    <h2 id="h-log">Sign-in log</h2>
    <${Wide} label="Sign-in log">
      <table><caption class="sr-only">Sign-in log</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">User</th><th scope="col">Address</th><th scope="col">Result</th><th scope="col">Message</th></tr></thead>
        <tbody>${log.map((l) => html`<tr><td>${when(l.dttm)}</td><td>${l.username}</td><td>${l.ip ?? '—'}</td><td class=${l.isSuccessful ? 'ok' : 'bad'}>${l.isSuccessful ? 'signed in' : 'refused'}</td><td>${l.msg}</td></tr>`)}</tbody>
      </table>
    </${Wide}>
  </section>`;
}
