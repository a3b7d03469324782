/**
 * Authoring (`#/displays/author`, editors): the animations of the space with their editor, and the boards
 * of a dashboard placed on its grid by dragging (`author_layout.ts`) or by `x`, `y`, `width` and `height`
 * (each board saved on its own), a new board or dashboard added. A full drawing editor is not the aim: drawings come from any SVG tool.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api.ts';
import { href } from '../../router.ts';
import { Alert } from '../common.ts';
import type { Animation, Board } from './animation_board.ts';
import { AnimationEditor } from './author_animation.ts';
import { BoardLayout, boardBody } from './author_layout.ts';

type BoardGroup = { id: string; name: string };
const grid = ['x', 'y', 'width', 'height'] as const;

/** One board's place on the grid, saved on its own. */
function BoardPlace({ groupId, board, onSaved }: { groupId: string; board: Board; onSaved: () => void }) {
  const [place, setPlace] = useState<Record<string, number>>(
    Object.fromEntries(grid.map((g) => [g, board[g] ?? (g === 'x' || g === 'y' ? 0 : 1)])),
  );
  const [error, setError] = useState<string | null>(null);
  const save = () =>
    api('PUT', `/api/dashboard/${groupId}/boards/${board.id}`, {
      body: { ...boardBody(board), ...place },
    })
      .then(onSaved)
      .catch((e) => setError(messageOf(e)));
  return html`<fieldset class="board-place"><legend>${board.name} (${board.type})</legend>
    ${grid.map(
      (g) => html`<div class="field"><label for=${`bp-${board.id}-${g}`}>${g}</label>
        <input id=${`bp-${board.id}-${g}`} type="number" min=${g === 'x' || g === 'y' ? 0 : 1} value=${place[g]}
          onInput=${(e: Event) => setPlace({ ...place, [g]: Number((e.target as HTMLInputElement).value) })} /></div>`,
    )}
    <${Alert} message=${error} />
    <button type="button" onClick=${save}>Save place</button>
  </fieldset>`;
}

/** A dashboard's boards, placed, and a new board. */
function Boards({ group, animations }: { group: BoardGroup; animations: Animation[] }) {
  const [boards, setBoards] = useState<Board[]>([]);
  const [fresh, setFresh] = useState({ name: '', animationId: '', animationParams: '' });
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api<Board[]>('GET', `/api/dashboard/${group.id}/boards`)
      .then(setBoards)
      .catch((e) => setError(messageOf(e)));
  useEffect(() => void load(), [group.id]);
  const add = () =>
    api('POST', `/api/dashboard/${group.id}/boards`, {
      body: {
        name: fresh.name,
        type: 'Animation',
        header: true,
        x: 0,
        y: 0,
        width: 4,
        height: 4,
        animationId: fresh.animationId,
        animationParams: fresh.animationParams || null,
      },
    })
      .then(load)
      .catch((e) => setError(messageOf(e)));
  return html`<h3>${group.name} <a href=${href('displays', group.id)}>open</a></h3>
    <${BoardLayout} groupId=${group.id} boards=${boards} onSaved=${load} />
    ${boards.map((b) => html`<${BoardPlace} key=${`${b.id} ${b.x} ${b.y} ${b.width} ${b.height}`} groupId=${group.id} board=${b} onSaved=${load} />`)}
    <fieldset><legend>New animation board</legend>
      <div class="field"><label for="nb-name">Name</label><input id="nb-name" value=${fresh.name} onInput=${(e: Event) => setFresh({ ...fresh, name: (e.target as HTMLInputElement).value })} /></div>
      <div class="field"><label for="nb-anim">Animation</label>
        <select id="nb-anim" value=${fresh.animationId} onChange=${(e: Event) => setFresh({ ...fresh, animationId: (e.target as HTMLSelectElement).value })}>
          <option value="">Choose…</option>${animations.map((a) => html`<option value=${a.id}>${a.name}</option>`)}
        </select></div>
      <div class="field"><label for="nb-params">Placeholder values (JSON: {"name": {"connectionId": "…", "reference": "…"}})</label>
        <input id="nb-params" value=${fresh.animationParams} onInput=${(e: Event) => setFresh({ ...fresh, animationParams: (e.target as HTMLInputElement).value })} /></div>
      <${Alert} message=${error} />
      <button type="button" disabled=${!fresh.name || !fresh.animationId} onClick=${add}>Add board</button>
    </fieldset>`;
}

/** The authoring screen. */
export function Author() {
  const [animations, setAnimations] = useState<Animation[]>([]);
  const [groups, setGroups] = useState<BoardGroup[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [groupName, setGroupName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    Promise.all([api<Animation[]>('GET', '/api/animations'), api<BoardGroup[]>('GET', '/api/dashboard')])
      .then(([a, g]) => {
        setAnimations(a);
        setGroups(g);
      })
      .catch((e) => setError(messageOf(e)));
  useEffect(() => void load(), []);
  const addGroup = () =>
    api('POST', '/api/dashboard', { body: { name: groupName } })
      .then(load)
      .catch((e) => setError(messageOf(e)));
  return html`<p><a href=${href('displays')}>All displays</a></p>
    <h1>Author displays</h1>
    <${Alert} message=${error} />
    <h2>Animations</h2>
    <ul>${animations.map((a) => html`<li><button type="button" class="secondary" onClick=${() => setEditing(a.id)}>Edit ${a.name}</button></li>`)}</ul>
    <button type="button" onClick=${() => setEditing(`new-${Date.now()}`)}>New animation</button>
    ${editing ? html`<${AnimationEditor} key=${editing} id=${editing.startsWith('new-') ? undefined : editing} onSaved=${load} />` : null}
    <h2>Dashboards</h2>
    <div class="field"><label for="ng-name">New dashboard</label><input id="ng-name" value=${groupName} onInput=${(e: Event) => setGroupName((e.target as HTMLInputElement).value)} /></div>
    <button type="button" disabled=${!groupName} onClick=${addGroup}>Add dashboard</button>
    ${groups.map((g) => html`<${Boards} key=${g.id} group=${g} animations=${animations} />`)}`;
}
