/**
 * The displays' styles, in the display chunk rather than the first page's style sheet: the board grid, and
 * what bindings do to a drawing's elements (classes, never style strings). Adopted as a constructed style
 * sheet, which the CSP allows where a `<style>` element would not be.
 */
const css = `
.dashboard { display: grid; grid-auto-rows: 3rem; gap: 0.5rem; }
.board { border: 1px solid var(--line); border-radius: 4px; min-width: 0; min-height: 0; display: flex; flex-direction: column; overflow: hidden; }
.board-header { font-size: 1rem; margin: 0; padding: 0.2rem 0.5rem; background: #f4f6f8; border-bottom: 1px solid var(--line); }
.board .animation, .board-frame, .board-html { flex: 1; min-height: 0; width: 100%; border: 0; }
.board-html { overflow: auto; padding: 0.3rem; box-sizing: border-box; }
.display-defs { position: absolute; width: 0; height: 0; }
.display-bad { fill: #9e9e9e; stroke: #616161; }
text.display-bad, tspan.display-bad { fill: #595959; stroke: none; }
.display-stale { fill: url(#display-hatch) #bdbdbd; stroke-dasharray: 3 2; }
.display-action { cursor: pointer; }
.display-action:focus-visible { outline: 3px solid var(--accent); }
.display-blink { animation: display-blink 1s steps(2, jump-none) infinite; }
.board-layout { display: grid; gap: 0; margin: 0.5rem 0; border: 1px dashed var(--line); touch-action: none;
  background-image: linear-gradient(to right, #eef1f4 1px, transparent 1px), linear-gradient(to bottom, #eef1f4 1px, transparent 1px); }
.layout-board { position: relative; margin: 2px; border: 1px solid var(--accent); border-radius: 4px; background: #f4f6f8;
  cursor: move; user-select: none; overflow: hidden; min-width: 0; }
.layout-board:focus-visible { outline: 3px solid var(--accent); }
.layout-board.moving { opacity: 0.7; }
.layout-name { display: block; padding: 0.1rem 0.3rem; font-size: 0.85rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.layout-resize { position: absolute; right: 0; bottom: 0; width: 0.8rem; height: 0.8rem; cursor: nwse-resize;
  background: linear-gradient(135deg, transparent 50%, var(--accent) 50%); }
.board-layout-help { font-size: 0.85rem; }
@keyframes display-blink { from { opacity: 1; } to { opacity: 0.2; } }
@media (prefers-reduced-motion: reduce) { .display-blink { animation: none; stroke: var(--bad); stroke-width: 3; } }
`;

let adopted = false;

/** Adds the displays' style sheet to the document, once. */
export function adoptDisplayStyles(): void {
  if (adopted) return;
  adopted = true;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}
