/** The console's screens are addressed by the URL's fragment (`#/connections/…`), so the gateway serves one page. */
import { signal } from '@preact/signals';

/** The fragment's path, split: `#/connections/abc` → `['connections', 'abc']`. */
export const route = signal<string[]>(parse());
/** The fragment's query, after its path: `#/trends?range=1h` → `range=1h` (a screen's linkable state). */
export const routeQuery = signal<string>(parseQuery());

function parse(): string[] {
  return (location.hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/').filter(Boolean).map(decodeURIComponent);
}

function parseQuery(): string {
  const at = location.hash.indexOf('?');
  return at < 0 ? '' : location.hash.slice(at + 1);
}

addEventListener('hashchange', () => {
  route.value = parse();
  routeQuery.value = parseQuery();
});

/** Goes to a screen. */
export function go(...parts: string[]): void {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** The `href` of a screen, for links. */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;
