/**
 * Displays (`#/displays`, a chunk of its own with DOMPurify, fetched when a display is opened): the board
 * groups of the space, and one group drawn as its grid of boards at their `x`, `y`, `width` and `height`
 * (grid cells), each with its name as a heading when `header` is set. `Animation` boards draw their
 * animation live; `Iframe` boards frame their page sandboxed (the CSP's `frame-src` lets only the origins
 * an administrator allowed through); `Html` boards show their HTML sanitized, without script.
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../../api.ts';
import { configChanges } from '../../live.ts';
import { href } from '../../router.ts';
import { canEdit } from '../../session.ts';
import { Alert } from '../common.ts';
import { ControlDialog, WriteDialog } from '../device_actions.ts';
import { AnimationBoard, type Act, type Board } from './animation_board.ts';
import { sanitizeHtml } from './drawing.ts';
import { adoptDisplayStyles } from './styles.ts';

export { Author } from './author.ts';

adoptDisplayStyles();

/** A board group as `GET /api/dashboard` answers it. */
type BoardGroup = { id: string; name: string; color?: string; rank?: number };

/** The board groups of the space, each a link to its display. */
export function Displays() {
  const [groups, setGroups] = useState<BoardGroup[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<BoardGroup[]>('GET', '/api/dashboard')
      .then(setGroups)
      .catch((err) => setError(messageOf(err)));
  }, [configChanges.value]);
  return html`<h1>Displays</h1>
    <${Alert} message=${error} />
    ${canEdit() ? html`<p><a href=${href('displays', 'author')}>Author animations and place boards</a></p>` : null}
    ${groups && groups.length === 0 ? html`<p>No dashboards yet.</p>` : null}
    <ul class="display-list">
      ${(groups ?? []).map((g) => html`<li><a href=${href('displays', g.id)}>${g.name}</a></li>`)}
    </ul>`;
}

/** The hatching a stale value's element is filled with, defined once for every drawing of the page. */
function Hatch() {
  return html`<svg class="display-defs" aria-hidden="true" focusable="false" width="0" height="0">
    <defs>
      <pattern id="display-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <rect width="6" height="6" fill="#e4e4e4" />
        <line x1="0" y1="0" x2="0" y2="6" stroke="#6b6b6b" stroke-width="2" />
      </pattern>
    </defs>
  </svg>`;
}

/** An `Iframe` board: the page framed in a sandbox (scripts of its own, no access to the console). */
function IframeBoard({ board }: { board: Board }) {
  if (!board.iframeUrl) return html`<p class="alert warn">Board "${board.name}" names no page.</p>`;
  return html`<iframe class="board-frame" src=${board.iframeUrl} title=${board.name} sandbox="allow-scripts" referrerpolicy="no-referrer"></iframe>`;
}

/** An `Html` board: its HTML (kept in `animationParams`), sanitized, without script or style. */
function HtmlBoard({ board }: { board: Board }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    host.current?.replaceChildren(sanitizeHtml(board.animationParams ?? ''));
  }, [board.animationParams]);
  return html`<div class="board-html" ref=${host}></div>`;
}

/** Where a board sits on the grid, set through the CSSOM (the CSP allows no `style` attribute). */
function placement(b: Board): Record<string, string> {
  return {
    gridColumn: `${(b.x ?? 0) + 1} / span ${b.width ?? 1}`,
    gridRow: `${(b.y ?? 0) + 1} / span ${b.height ?? 1}`,
  };
}

/** A board group drawn as its grid of boards, with the write or control dialog a drawing opens. */
export function Dashboard({ id }: { id: string }) {
  const [group, setGroup] = useState<BoardGroup | null>(null);
  const [boards, setBoards] = useState<Board[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [act, setAct] = useState<Act | null>(null);
  useEffect(() => {
    Promise.all([
      api<BoardGroup>('GET', `/api/dashboard/${encodeURIComponent(id)}`),
      api<Board[]>('GET', `/api/dashboard/${encodeURIComponent(id)}/boards`),
    ])
      .then(([g, b]) => {
        setGroup(g);
        setBoards(b);
      })
      .catch((err) => setError(messageOf(err)));
  }, [id]);
  const columns = Math.max(12, ...(boards ?? []).map((b) => (b.x ?? 0) + (b.width ?? 1)));
  return html`<p><a href=${href('displays')}>All displays</a></p>
    <h1>${group?.name ?? 'Display'}</h1>
    <${Alert} message=${error} />
    <${Hatch} />
    ${boards && boards.length === 0 ? html`<p>This dashboard has no boards yet.</p>` : null}
    <div class="dashboard" style=${{ gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` }}>
      ${(boards ?? []).map(
        (b) => html`<section class="board" key=${b.id} style=${placement(b)} aria-label=${b.header ? undefined : b.name}>
          ${b.header ? html`<h2 class="board-header">${b.name}</h2>` : null}
          ${
            b.type === 'Animation'
              ? html`<${AnimationBoard} board=${b} onAct=${setAct} />`
              : b.type === 'Iframe'
                ? html`<${IframeBoard} board=${b} />`
                : html`<${HtmlBoard} board=${b} />`
          }
        </section>`,
      )}
    </div>
    ${act?.kind === 'write' ? html`<${WriteDialog} id=${act.connectionId} reference=${act.reference} kind=${typeof act.value === 'boolean' ? 'boolean' : typeof act.value === 'string' ? 'text' : 'number'} onClose=${() => setAct(null)} />` : null}
    ${act?.kind === 'control' ? html`<${ControlDialog} id=${act.connectionId} reference=${act.reference} cdc=${typeof act.value === 'boolean' ? 'SPC' : ''} onClose=${() => setAct(null)} />` : null}`;
}
