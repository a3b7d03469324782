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
 * The packages an ES module bundle, as esbuild prints it, loads at run time: its static imports (hoisted
 * to the top, one statement each), dynamic imports, and calls of a `require` made with `createRequire`
 * (which the bundler may rename to `require2`). Sorted, without duplicates.
 */
export function packagesImportedBy(bundle: string): string[] {
  const patterns = [
    /^(?:import [^"]*?|\} )from "([^"]+)";$/gm,
    /^import "([^"]+)";$/gm,
    /\bimport\(\s*"([^"]+)"\s*\)/g,
    /\brequire\d*\(\s*"([^"]+)"\s*\)/g,
  ];
  const found = new Set<string>();
  for (const pattern of patterns) {
    for (const match of bundle.matchAll(pattern)) {
      const name = packageOf(match[1]);
      if (name !== null) found.add(name);
    }
  }
  return [...found].sort();
}
