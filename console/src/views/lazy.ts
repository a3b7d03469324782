/** A screen whose code is a chunk of its own, fetched when the screen is first opened. */
import { html } from 'htm/preact';
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A component that loads `load()` on first use and then draws the component it answers, with the same
 * props; "Loading…" until then, and a sentence if the chunk cannot be fetched.
 */
export function lazyView<P>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | null = null;
  return (props: P) => {
    const [view, setView] = useState<{ c: FunctionComponent<P> } | null>(loaded ? { c: loaded } : null);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (view) return;
      load()
        .then((c) => {
          loaded = c;
          setView({ c });
        })
        .catch(() => setFailed(true));
    }, []);
    if (failed)
      return html`<p class="alert error" role="alert">This screen could not be loaded. Check the network and reload the page.</p>`;
    if (!view) return html`<p role="status">Loading…</p>`;
    return html`<${view.c} ...${props} />`;
  };
}
