/**
 * The script page's code editor (CodeMirror 6 with JavaScript): a chunk of its own, loaded only when a
 * script is opened. Tab is left to move the focus on (no `indentWithTab`), so the page stays usable with
 * the keyboard alone. The editor lives in a shadow root of `parent`: there CodeMirror puts its styles into
 * constructed style sheets, which the CSP allows, where in the document itself it would add a `<style>`
 * element, which `style-src 'self'` refuses.
 */
import { javascript } from '@codemirror/lang-javascript';
import { basicSetup, EditorView } from 'codemirror';

/** The editor's frame and focus ring, as the console's own fields have them. */
const frame = EditorView.theme({
  '&': { border: '1px solid #c8ced6', borderRadius: '4px', minHeight: '12rem', maxHeight: '28rem', fontSize: '0.9rem' },
  '&.cm-focused': { outline: '3px solid #f0a500', outlineOffset: '2px' },
  '.cm-scroller': { overflow: 'auto' },
});

/** Puts an editor holding `code` into `parent`; answers how to remove it. */
export function mountEditor(parent: HTMLElement, code: string, label: string, onChange: (code: string) => void): () => void {
  const shadow = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
  const holder = document.createElement('div');
  shadow.append(holder);
  const view = new EditorView({
    doc: code,
    parent: holder,
    root: shadow,
    extensions: [
      basicSetup,
      frame,
      javascript(),
      EditorView.contentAttributes.of({ 'aria-label': label }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange(update.state.doc.toString());
      }),
    ],
  });
  return () => {
    view.destroy();
    holder.remove();
  };
}
