/** The console's screens are addressed by the URL's fragment (`#/connections/…`), so the gateway serves one page. */
import { signal } from '@preact/signals';

/** The fragment's path, split: `#/connections/abc` → `['connections', 'abc']`. */
export const route = signal<string[]>(parse());

function parse(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

addEventListener('hashchange', () => {
  route.value = parse();
});

/** Goes to a screen. */
export function go(...parts: string[]): void {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** The `href` of a screen, for links. */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;
