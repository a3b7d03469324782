/**
 * User accounts: the list with roles, spaces and state; a new user; a user edited, disabled or enabled,
 * their password reset (they choose their own at their next sign-in) and deleted, each destructive act
 * confirmed first.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Alert, Field, Modal, useAction } from '../common.ts';
import { Confirm, roleNames, type Space, type User, Wide } from './shared.ts';

/** What the screen asks about one user. */
type Asking = { kind: 'edit' | 'disable' | 'reset' | 'delete'; user: User };

/** The user accounts screen. */
export function Users() {
  const [users, setUsers] = useState<User[] | null>(null);
  const [spaces, setSpaces] = useState<Space[]>([]);
  const [asking, setAsking] = useState<Asking | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [load, , loadError] = useAction();
  const [act, , actError] = useAction();
  const reload = () =>
    load(async () => {
      setUsers(await api<User[]>('GET', '/api/users'));
      setSpaces(await api<Space[]>('GET', '/api/spaces'));
    });
  useEffect(() => {
    void reload();
  }, []);
  const spaceName = (id: string) => spaces.find((s) => s.id === id)?.name ?? id;
  const finished = async (sentence: string) => {
    setDone(sentence);
    await reload();
  };
  const enable = (user: User) =>
    act(async () => {
      await api('PUT', `/api/users/${user.id}`, { body: { enabled: true } });
      await finished(`${user.username} is enabled again.`);
    });
  const ask = (kind: Asking['kind'], user: User) => () => {
    setDone(null);
    setAsking({ kind, user });
  };
  const close = () => setAsking(null);
  return html`<section aria-labelledby="h-users">
    <h2 id="h-users">User accounts</h2>
    <${Alert} message=${loadError ?? actError} />
    ${done ? html`<p class="alert info" role="status">${done}</p>` : null}
    ${users === null && !loadError ? html`<p role="status">Loading the users…</p>` : null}
    <${Wide} label="User accounts">
      <table><caption class="sr-only">User accounts</caption>
        <thead><tr><th scope="col">User</th><th scope="col">Roles</th><th scope="col">Spaces</th><th scope="col">State</th><th scope="col">OTP</th><th scope="col">Actions</th></tr></thead>
        <tbody>${(users ?? []).map(
          (u) => html`<tr key=${u.id} data-user=${u.username}>
            <td>${u.username}${u.email ? html`<br /><small>${u.email}</small>` : null}</td>
            <td>${u.roles.join(', ')}</td>
            <td>${u.spaces.map(spaceName).join(', ')}</td>
            <td>${u.enabled ? 'enabled' : html`<span class="bad">disabled</span>`}${u.requirePasswordReset ? html`<br /><small>must choose a password</small>` : null}</td>
            <td>${u.otpType}</td>
            <td class="actions">
              <button type="button" class="small secondary" aria-label=${`Edit ${u.username}`} onClick=${ask('edit', u)}>Edit</button>
              ${
                u.enabled
                  ? html`<button type="button" class="small secondary" aria-label=${`Disable ${u.username}`} onClick=${ask('disable', u)}>Disable</button>`
                  : html`<button type="button" class="small secondary" aria-label=${`Enable ${u.username}`} onClick=${() => void enable(u)}>Enable</button>`
              }
              <button type="button" class="small secondary" aria-label=${`Reset password of ${u.username}`} onClick=${ask('reset', u)}>Reset password</button>
              <button type="button" class="small danger" aria-label=${`Delete ${u.username}`} onClick=${ask('delete', u)}>Delete</button>
            </td>
          </tr>`,
        )}</tbody>
      </table>
    </${Wide}>
    <${NewUser} spaces=${spaces} onCreated=${(name: string) => void finished(`${name} was created.`)} />
    ${asking ? html`<${Ask} asking=${asking} onClose=${close} onDone=${(sentence: string) => void finished(sentence)} />` : null}
  </section>`;
}

/** The dialog for the act asked about. */
function Ask({ asking, onClose, onDone }: { asking: Asking; onClose: () => void; onDone: (sentence: string) => void }) {
  const { kind, user } = asking;
  const name = user.username;
  if (kind === 'edit') return html`<${EditUser} user=${user} onClose=${onClose} onDone=${onDone} />`;
  if (kind === 'reset') return html`<${ResetPassword} user=${user} onClose=${onClose} onDone=${onDone} />`;
  if (kind === 'disable')
    return html`<${Confirm}
      title=${`Disable ${name}?`}
      confirm="Disable"
      onClose=${onClose}
      onConfirm=${async () => (await api('PUT', `/api/users/${user.id}`, { body: { enabled: false } }), onDone(`${name} is disabled.`))}
    >
      <p>${name} is signed out at their next request and cannot sign in until an administrator enables the account again.</p>
    </${Confirm}>`;
  return html`<${Confirm}
    title=${`Delete ${name}?`}
    confirm="Delete"
    onClose=${onClose}
    onConfirm=${async () => (await api('DELETE', `/api/users/${user.id}`), onDone(`${name} was deleted.`))}
  >
    <p>The account ${name} and its sessions end for good. This cannot be undone.</p>
  </${Confirm}>`;
}

/** Edits a user's name, address and roles. */
function EditUser({ user, onClose, onDone }: { user: User; onClose: () => void; onDone: (sentence: string) => void }) {
  const [username, setUsername] = useState(user.username);
  const [email, setEmail] = useState(user.email ?? '');
  const [roles, setRoles] = useState<string[]>(user.roles);
  const [run, busy, error] = useAction();
  const toggle = (role: string, on: boolean) =>
    setRoles(on ? roleNames.filter((r) => r === role || roles.includes(r)) : roles.filter((r) => r !== role));
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api('PUT', `/api/users/${user.id}`, { body: { username, email: email.trim() || null, roles } });
      onClose();
      onDone(`${username} was saved.`);
    });
  };
  return html`<${Modal} title=${`Edit ${user.username}`} onClose=${onClose}>
    <form method="dialog" onSubmit=${submit}>
      <${Field} label="User name" name="edit-username" required value=${username} onInput=${setUsername} />
      <${Field} label="Email (optional)" name="edit-email" type="email" value=${email} onInput=${setEmail} />
      <fieldset>
        <legend>Roles (in every space of the user)</legend>
        ${roleNames.map(
          (role) =>
            html`<label class="check"><input type="checkbox" checked=${roles.includes(role)} onChange=${(e: Event) => toggle(role, (e.target as HTMLInputElement).checked)} /> ${role}</label>`,
        )}
      </fieldset>
      <${Alert} message=${error} />
      <button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save'}</button>
      <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
    </form>
  </${Modal}>`;
}

/** Sets a temporary password the administrator hands over; the user must choose their own at the next sign-in. */
function ResetPassword({ user, onClose, onDone }: { user: User; onClose: () => void; onDone: (sentence: string) => void }) {
  const [password, setPassword] = useState('');
  const name = user.username;
  return html`<${Confirm}
    title=${`Reset the password of ${name}?`}
    confirm="Reset password"
    onClose=${onClose}
    onConfirm=${async () => {
      await api('POST', `/api/users/${encodeURIComponent(name)}/reset-password`, { body: { newPassword: password } });
      onDone(
        `The password of ${name} was reset. Hand the temporary password over in person; ${name} chooses their own at the next sign-in.`,
      );
    }}
  >
    <p>Every session of ${name} ends now. ${name} signs in with the temporary password once and must then choose their own.</p>
    <${Field} label="Temporary password" name="reset-password" type="password" autocomplete="new-password" required value=${password} onInput=${setPassword} hint="At least 8 characters." />
  </${Confirm}>`;
}

/** Creates a user with one role in one space. */
function NewUser({ spaces, onCreated }: { spaces: Space[]; onCreated: (name: string) => void }) {
  const blank = { username: '', password: '', role: 'viewer', space: 'default' };
  const [form, setForm] = useState(blank);
  const [act, busy, error] = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      await api('POST', '/api/users', {
        body: { username: form.username, password: form.password, roles: [form.role], spaces: [form.space] },
      });
      setForm(blank);
      onCreated(form.username);
    });
  };
  const choose = (key: 'role' | 'space') => (e: Event) => setForm({ ...form, [key]: (e.target as HTMLSelectElement).value });
  return html`<h2 id="h-new-user">New user</h2>
    <form onSubmit=${create} class="row" aria-labelledby="h-new-user">
      <${Field} label="User name" name="new-username" required value=${form.username} onInput=${(v: string) => setForm({ ...form, username: v })} />
      <${Field} label="Password" name="new-password" type="password" autocomplete="new-password" required value=${form.password} onInput=${(v: string) => setForm({ ...form, password: v })} />
      <div class="field"><label for="f-role">Role</label>
        <select id="f-role" value=${form.role} onChange=${choose('role')}>${roleNames.map((r) => html`<option value=${r}>${r}</option>`)}</select></div>
      <div class="field"><label for="f-new-space">Space</label>
        <select id="f-new-space" value=${form.space} onChange=${choose('space')}>${spaces.map((s) => html`<option value=${s.id}>${s.name}</option>`)}</select></div>
      <div class="field"><span aria-hidden="true"> </span><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create user'}</button></div>
    </form>
    <${Alert} message=${error} />`;
}
