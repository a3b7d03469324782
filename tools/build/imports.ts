import { isBuiltin } from 'node:module';

/**
 * The package a bare import specifier names (`@scope/name` of `@scope/name/sub`, `name` of `name/sub`);
 * null for a relative or absolute path, a URL and Node's own modules.
 */
export function packageOf(specifier: string): string | null {
  if (/^[./]/.test(specifier) || /^[a-z][a-z0-9+.-]*:/i.test(specifier) || isBuiltin(specifier)) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * The packages an ES module bundle, as esbuild prints it (minified or not), loads at run time: its static
 * and side-effect imports, and its dynamic imports. Requires are not read from a bundle: a minified one
 * renames `require`, and the strings of bundled packages mention `require('…')` in their messages.
 * Sorted, without duplicates.
 */
export function packagesImportedBy(bundle: string): string[] {
  return matched(bundle, [/\bimport\s*(?:[\w$*{][^"'`;]*?)from\s*"([^"]+)"/g, /\bimport\s*"([^"]+)"/g, /\bimport\(\s*"([^"]+)"\s*\)/g]);
}

/** The packages a source file loads through a `require` (one made with `createRequire`): `require('pkg/…')`. */
export function packagesRequiredBy(source: string): string[] {
  return matched(source, [/\brequire\d*\(\s*["']([^"']+)["']\s*\)/g]);
}

function matched(text: string, patterns: RegExp[]): string[] {
  const found = new Set<string>();
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const name = packageOf(match[1] as string);
      if (name !== null) found.add(name);
    }
  }
  return [...found].sort();
}
