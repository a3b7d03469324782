/**
 * Checks an image's node_modules against its bundle: every package the bundle's code (the `.mjs` files at
 * the image's root) loads is installed, with everything those need as Node resolves it, and nothing else
 * is: no development dependency, no package of another service. Prints `ok: …` / `FAILED: …`; exits
 * non-zero on a failure.
 *   tsx deploy/image_modules.ts <image folder>
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { packagesImportedBy } from '../tools/build/imports.ts';

type Manifest = {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Every package folder under a node_modules folder, nested ones included (`@scope/name` counted once). */
function installedUnder(modules: string): string[] {
  if (!existsSync(modules)) return [];
  const out: string[] = [];
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    const dirs = name.startsWith('@') ? readdirSync(join(modules, name)).map((n) => join(modules, name, n)) : [join(modules, name)];
    for (const dir of dirs) {
      if (!existsSync(join(dir, 'package.json'))) continue;
      out.push(dir, ...installedUnder(join(dir, 'node_modules')));
    }
  }
  return out;
}

/** The folder Node loads package `name` from, looking up from `from` as far as the image's root. */
function resolveFrom(image: string, from: string, name: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === image || !dir.startsWith(image)) return null;
  }
}

/** What the bundle needs (package folders) and what it lacks, walking dependencies as Node resolves them. */
export function neededBy(image: string): { needed: Set<string>; missing: string[]; imports: string[] } {
  const code = readdirSync(image)
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => readFileSync(join(image, f), 'utf8'));
  // What the bundle imports, read from its code, and what the build found it requires by name (a
  // minified bundle's requires cannot be read back): the image's package.json names those.
  const manifest = JSON.parse(readFileSync(join(image, 'package.json'), 'utf8')) as Manifest;
  const imports = [...new Set([...packagesImportedBy(code.join('\n')), ...Object.keys(manifest.dependencies ?? {})])].sort();
  const needed = new Set<string>();
  const missing: string[] = [];
  const visit = (name: string, from: string, by: string, optional: boolean) => {
    const dir = resolveFrom(image, from, name);
    if (dir === null) {
      if (!optional) missing.push(`${name} (needed by ${by})`);
      return;
    }
    if (needed.has(dir)) return;
    needed.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir, pkg.name, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dep, dir, pkg.name, true);
    for (const dep of Object.keys(pkg.peerDependencies ?? {}))
      visit(dep, dir, pkg.name, pkg.peerDependenciesMeta?.[dep]?.optional === true);
  };
  for (const name of imports) visit(name, image, 'the bundle', false);
  return { needed, missing, imports };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const image = process.argv[2];
  if (!image) {
    process.stderr.write('usage: tsx deploy/image_modules.ts <image folder>\n');
    process.exit(2);
  }
  const { needed, missing, imports } = neededBy(image);
  const installed = installedUnder(join(image, 'node_modules'));
  const extra = installed.filter((dir) => !needed.has(dir)).map((dir) => relative(image, dir));
  const report = (ok: boolean, what: string) => console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  report(
    missing.length === 0,
    missing.length === 0
      ? `the bundle's ${imports.length} packages and what they need are installed (${needed.size} in all)`
      : `missing from node_modules: ${missing.join(', ')}`,
  );
  report(
    extra.length === 0,
    extra.length === 0
      ? 'node_modules holds nothing the bundle does not load'
      : `in node_modules but never loaded by the bundle: ${extra.join(', ')}`,
  );
  process.exit(missing.length === 0 && extra.length === 0 ? 0 : 1);
}
