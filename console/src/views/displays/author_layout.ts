/**
 * A dashboard's boards placed by hand (authoring, editors only): each board a box on the dashboard's grid,
 * moved by dragging it and resized by dragging its corner handle, snapping to whole cells; with the keyboard,
 * the arrow keys move the focused board a cell and Shift with them resizes it. Each change is saved at once
 * through the public API (the board replaced with its new `x`, `y`, `width` and `height`).
 */
import { html } from 'htm/preact';
import { useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../../api.ts';
import { Alert } from '../common.ts';
import type { Board } from './animation_board.ts';

/** A board's place on the grid, in cells. */
export type Place = { x: number; y: number; width: number; height: number };

/** The fields a board's replacement takes, from the board as read. */
export function boardBody(b: Board): Record<string, unknown> {
  const fields = ['name', 'type', 'header', 'x', 'y', 'width', 'height', 'iframeUrl', 'animationParams', 'animationId', 'customHtmlId'];
  const all = b as Board & Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => all[f] !== undefined).map((f) => [f, all[f]]));
}

/** Where a board sits, with the defaults a dashboard draws it at. */
export function placeOf(b: Board): Place {
  return { x: b.x ?? 0, y: b.y ?? 0, width: b.width ?? 1, height: b.height ?? 1 };
}

/** Saves a board at a new place. */
export function savePlace(groupId: string, board: Board, place: Place): Promise<unknown> {
  return api('PUT', `/api/dashboard/${groupId}/boards/${board.id}`, { body: { ...boardBody(board), ...place } });
}

const same = (a: Place, b: Place) => a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;

/** The place a move or a resize by whole cells gives, never off the grid's top or left, never smaller than a cell. */
function moved(from: Place, dx: number, dy: number, resize: boolean): Place {
  if (resize) return { ...from, width: Math.max(1, from.width + dx), height: Math.max(1, from.height + dy) };
  return { ...from, x: Math.max(0, from.x + dx), y: Math.max(0, from.y + dy) };
}

const arrows: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

/** The boards of a dashboard on its grid, to drag into place. */
export function BoardLayout({ groupId, boards, onSaved }: { groupId: string; boards: Board[]; onSaved: () => Promise<unknown> }) {
  const grid = useRef<HTMLDivElement>(null);
  const [moving, setMoving] = useState<{ id: string; place: Place } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const places = new Map(boards.map((b) => [b.id, moving?.id === b.id ? moving.place : placeOf(b)]));
  // Room to drag into beyond the boards: two free columns and rows.
  const columns = Math.max(12, ...[...places.values()].map((p) => p.x + p.width + 2));
  const rows = Math.max(6, ...[...places.values()].map((p) => p.y + p.height + 2));

  // Places asked for and not yet saved and read back, and the saves one after another: a key pressed again
  // before the last save came back moves on from where the board was sent, and is never dropped.
  const intended = useRef(new Map<string, Place>());
  const saving = useRef<Promise<unknown>>(Promise.resolve());
  const placeNow = (board: Board) => intended.current.get(board.id) ?? placeOf(board);
  const save = (board: Board, place: Place) => {
    if (same(place, placeNow(board))) {
      if (!intended.current.has(board.id)) setMoving(null);
      return;
    }
    intended.current.set(board.id, place);
    setMoving({ id: board.id, place });
    saving.current = saving.current
      .then(() => savePlace(groupId, board, place))
      .then(onSaved)
      .then(() => setError(null))
      .catch((e) => setError(messageOf(e)))
      .finally(() => {
        if (intended.current.get(board.id) !== place) return;
        intended.current.delete(board.id);
        setMoving(null);
      });
  };

  /** Follows the pointer from a press on a board (or its handle) to its release; saves where it snapped. */
  const drag = (e: PointerEvent, board: Board, resize: boolean) => {
    if (e.button !== 0 || !grid.current) return;
    e.preventDefault();
    e.stopPropagation();
    const box = grid.current.getBoundingClientRect();
    const cellWidth = box.width / columns;
    const cellHeight = box.height / rows;
    const from = placeOf(board);
    let place = from;
    const follow = (ev: PointerEvent) => {
      place = moved(from, Math.round((ev.clientX - e.clientX) / cellWidth), Math.round((ev.clientY - e.clientY) / cellHeight), resize);
      setMoving({ id: board.id, place });
    };
    const release = () => {
      window.removeEventListener('pointermove', follow);
      window.removeEventListener('pointerup', release);
      window.removeEventListener('pointercancel', release);
      save(board, place);
    };
    window.addEventListener('pointermove', follow);
    window.addEventListener('pointerup', release);
    window.addEventListener('pointercancel', release);
  };

  const key = (e: KeyboardEvent, board: Board) => {
    const step = arrows[e.key];
    if (!step) return;
    e.preventDefault();
    save(board, moved(placeNow(board), step[0], step[1], e.shiftKey));
  };

  return html`<div class="board-layout-help" id=${`layout-help-${groupId}`}>Drag a board to move it, its corner to resize it; or focus it and use the arrow keys (Shift with them resizes).</div>
    <div class="board-layout" ref=${grid} style=${{ gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))`, gridTemplateRows: `repeat(${rows}, 2rem)` }}>
      ${boards.map((b) => {
        const p = places.get(b.id) as Place;
        return html`<div key=${b.id} class=${`layout-board${moving?.id === b.id ? ' moving' : ''}`} tabindex="0" role="button"
          aria-describedby=${`layout-help-${groupId}`}
          aria-label=${`${b.name}: column ${p.x}, row ${p.y}, ${p.width} wide, ${p.height} high`}
          style=${{ gridColumn: `${p.x + 1} / span ${p.width}`, gridRow: `${p.y + 1} / span ${p.height}` }}
          onPointerDown=${(e: PointerEvent) => drag(e, b, false)} onKeyDown=${(e: KeyboardEvent) => key(e, b)}>
          <span class="layout-name">${b.name}</span>
          <span class="layout-resize" aria-hidden="true" onPointerDown=${(e: PointerEvent) => drag(e, b, true)}></span>
        </div>`;
      })}
    </div>
    <${Alert} message=${error} />`;
}
