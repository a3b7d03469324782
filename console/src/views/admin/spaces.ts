/**
 * Spaces: the list, a new space, and one space's members with their roles; a user added to a space with
 * a role, or the space taken from them (confirmed first). Roles are the user's in every space they belong to.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { href } from '../../router.ts';
import { Alert, Field, useAction } from '../common.ts';
import { Confirm, roleNames, type Space, type User, Wide } from './shared.ts';

/** What the screen asks about: taking a space from a user, or deleting a space. */
type Asking = { kind: 'remove'; user: User; space: Space } | { kind: 'delete'; space: Space };

/** The spaces screen; `spaceId` names the space whose members are shown. */
export function Spaces({ spaceId }: { spaceId?: string }) {
  const [spaces, setSpaces] = useState<Space[] | null>(null);
  const [users, setUsers] = useState<User[]>([]);
  const [name, setName] = useState('');
  const [asking, setAsking] = useState<Asking | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [load, , loadError] = useAction();
  const [act, busy, actError] = useAction();
  const reload = () =>
    load(async () => {
      setSpaces(await api<Space[]>('GET', '/api/spaces'));
      setUsers(await api<User[]>('GET', '/api/users'));
    });
  useEffect(() => {
    void reload();
  }, []);
  const finished = async (sentence: string) => {
    setDone(sentence);
    await reload();
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const made = await api<Space>('POST', '/api/spaces', { body: { name } });
      setName('');
      await finished(`The space ${made.name} was created.`);
    });
  };
  const members = (space: Space) => users.filter((u) => u.spaces.includes(space.id));
  const chosen = spaces?.find((s) => s.id === spaceId) ?? null;
  return html`<section aria-labelledby="h-spaces">
    <h2 id="h-spaces">Spaces</h2>
    <${Alert} message=${loadError ?? actError} />
    ${done ? html`<p class="alert info" role="status">${done}</p>` : null}
    <${Wide} label="Spaces">
      <table><caption class="sr-only">Spaces</caption>
        <thead><tr><th scope="col">Space</th><th scope="col">Id</th><th scope="col">Members</th><th scope="col">Actions</th></tr></thead>
        <tbody>${(spaces ?? []).map(
          (s) => html`<tr key=${s.id}>
            <td><a href=${href('admin', 'spaces', s.id)} aria-current=${s.id === spaceId ? 'true' : undefined}>${s.name}</a></td>
            <td><code>${s.id}</code></td>
            <td>${members(s).length}</td>
            <td>${s.id === 'default' ? null : html`<button type="button" class="small danger" aria-label=${`Delete the space ${s.name}`} onClick=${() => setAsking({ kind: 'delete', space: s })}>Delete</button>`}</td>
          </tr>`,
        )}</tbody>
      </table>
    </${Wide}>
    <form onSubmit=${create} class="row">
      <${Field} label="New space" name="space-name" required value=${name} onInput=${setName} />
      <div class="field"><span aria-hidden="true"> </span><button type="submit" disabled=${busy}>Create space</button></div>
    </form>
    ${chosen ? html`<${Members} key=${chosen.id} space=${chosen} users=${users} onAsk=${setAsking} onDone=${finished} />` : null}
    ${asking ? html`<${Ask} asking=${asking} onClose=${() => setAsking(null)} onDone=${finished} />` : null}
  </section>`;
}

/** One space's members with their roles, and a user added to it with a role. */
function Members(props: { space: Space; users: User[]; onAsk: (a: Asking) => void; onDone: (sentence: string) => Promise<void> }) {
  const { space, users } = props;
  const inside = users.filter((u) => u.spaces.includes(space.id));
  const outside = users.filter((u) => !u.spaces.includes(space.id));
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState('viewer');
  const [act, busy, error] = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    const user = outside.find((u) => u.id === userId) ?? outside[0];
    if (!user) return;
    void act(async () => {
      await api('POST', `/api/users/${user.id}/spaces`, { query: { spaceId: space.id } });
      if (!user.roles.includes(role)) await api('POST', `/api/users/${user.id}/roles`, { query: { roleId: role } });
      setUserId('');
      await props.onDone(`${user.username} was added to ${space.name} as ${role}.`);
    });
  };
  return html`<section aria-labelledby="h-members">
    <h2 id="h-members">Members of ${space.name}</h2>
    <p>Administrators reach every space. A role is the user's in every space they belong to.</p>
    ${
      inside.length === 0
        ? html`<p>Nobody has been given this space yet.</p>`
        : html`<${Wide} label=${`Members of ${space.name}`}><table><caption class="sr-only">Members of ${space.name}</caption>
          <thead><tr><th scope="col">User</th><th scope="col">Roles</th><th scope="col">Actions</th></tr></thead>
          <tbody>${inside.map(
            (u) => html`<tr key=${u.id}><td>${u.username}</td><td>${u.roles.join(', ')}</td>
              <td><button type="button" class="small danger" aria-label=${`Take away ${space.name} from ${u.username}`} onClick=${() => props.onAsk({ kind: 'remove', user: u, space })}>Take away</button></td></tr>`,
          )}</tbody></table></${Wide}>`
    }
    ${
      outside.length === 0
        ? null
        : html`<form onSubmit=${add} class="row" aria-label=${`Add a member to ${space.name}`}>
          <div class="field"><label for="f-member">User</label>
            <select id="f-member" value=${userId || outside[0]?.id} onChange=${(e: Event) => setUserId((e.target as HTMLSelectElement).value)}>
              ${outside.map((u) => html`<option value=${u.id}>${u.username}</option>`)}
            </select></div>
          <div class="field"><label for="f-member-role">Role</label>
            <select id="f-member-role" value=${role} onChange=${(e: Event) => setRole((e.target as HTMLSelectElement).value)}>
              ${roleNames.map((r) => html`<option value=${r}>${r}</option>`)}
            </select></div>
          <div class="field"><span aria-hidden="true"> </span><button type="submit" disabled=${busy}>Add to ${space.name}</button></div>
        </form>`
    }
    <${Alert} message=${error} />
  </section>`;
}

/** The confirmation of what was asked. */
function Ask({ asking, onClose, onDone }: { asking: Asking; onClose: () => void; onDone: (sentence: string) => Promise<void> }) {
  const { space } = asking;
  if (asking.kind === 'remove') {
    const { user } = asking;
    return html`<${Confirm}
      title=${`Take ${space.name} from ${user.username}?`}
      confirm="Take away"
      onClose=${onClose}
      onConfirm=${async () => {
        await api('DELETE', `/api/users/${user.id}/spaces/${space.id}`);
        await onDone(`${user.username} no longer belongs to ${space.name}.`);
      }}
    >
      <p>${user.username} can no longer see or change anything in ${space.name}, from their next request on.</p>
    </${Confirm}>`;
  }
  return html`<${Confirm}
    title=${`Delete the space ${space.name}?`}
    confirm="Delete"
    onClose=${onClose}
    onConfirm=${async () => {
      await api('DELETE', `/api/spaces/${space.id}`);
      await onDone(`The space ${space.name} was deleted.`);
    }}
  >
    <p>The space ${space.name} is deleted for good, and its members lose it. This cannot be undone.</p>
  </${Confirm}>`;
}
