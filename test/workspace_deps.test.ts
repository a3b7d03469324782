/**
 * Each workspace declares what it imports: every package its sources import (type-only imports too: the
 * types come from the package) is in its `dependencies`, pinned as the root pins it, and nothing declared
 * there goes unused. Read from the sources, so a new import without its declaration fails here. The tool
 * workspaces (`bench/`, `deploy/`: no `src/`, nothing of theirs runs in the product) declare what their
 * files import as `devDependencies`, so that `npm ci --omit=dev` installs the product without them; what
 * only they use is pinned there alone, and a package pinned in more than one place has one version
 * everywhere. And no file reaches into another workspace by path: what one package needs of another is in
 * its exports.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = new URL('..', import.meta.url).pathname;
type Manifest = {
  name: string;
  version: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

/**
 * The `.ts` files under a folder, tests excluded (they run from the repository root's dependencies); with
 * `mjs`, the `.mjs` files too (a tool's worker script is part of the tool; a product package's `.mjs` only loads
 * its sources under tsx when run from the repository).
 */
function sources(dir: string, mjs = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path, mjs);
    return name.endsWith('.ts') || (mjs && name.endsWith('.mjs')) ? [path] : [];
  });
}

/**
 * The package names a file imports: `from '…'`, `import('…')`, `import '…'` and `require('…')` of a bare
 * package specifier (not `node:`, not a relative path; SQL's `from "schema"` does not look like one).
 */
export function importedPackages(text: string): string[] {
  const specifier =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]((?:node:|@[a-z0-9-]+\/)?[a-z0-9][\w.-]*(?:\/[\w.-]+)*)['"](?!\.)/gm;
  // A module loaded by a computed name (`import(`kubernetes-models/${apiVersion}/${kind}`)`) names its package first.
  const computed = /\bimport\s*\(\s*`((?:@[a-z0-9-]+\/)?[a-z0-9][\w.-]*)\//g;
  return [...text.matchAll(specifier), ...text.matchAll(computed)]
    .map((m) => m[1] as string)
    .filter((s) => !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : (s.split('/')[0] as string)));
}

const workspaces = (rootManifest.workspaces ?? []).map((dir) => ({
  dir,
  manifest: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest,
}));
/**
 * A tool workspace: `bench/` and `deploy/` (no `src/`; their files are the tool) and `testkit/` (what tests,
 * benchmarks and deploy checks start the platform with; nothing of it runs in the product). Their
 * declarations are development ones, so `npm ci --omit=dev` leaves out what only they use (a browser, axe).
 */
const isTool = (dir: string) => dir === 'testkit' || !existsSync(join(root, dir, 'src'));
/** What a workspace declares: a product package its `dependencies`; a tool workspace its `devDependencies` as well. */
const declaredBy = (dir: string, manifest: Manifest) => ({ ...manifest.dependencies, ...(isTool(dir) ? manifest.devDependencies : {}) });
const versions = new Map<string, string>([
  ...Object.entries(rootManifest.dependencies ?? {}),
  ...Object.entries(rootManifest.devDependencies ?? {}),
  ...workspaces.map((w) => [w.manifest.name, w.manifest.version] as [string, string]),
]);
// What only tool workspaces use is pinned by them alone: the first pin found is the one the others must match.
for (const { dir, manifest } of workspaces)
  for (const [name, version] of Object.entries(declaredBy(dir, manifest))) if (!versions.has(name)) versions.set(name, version);
/** The peers a package asks its user to install (a client library it loads on the user's behalf), from its installed manifest. */
function peersOf(name: string): string[] {
  const file = join(root, 'node_modules', name, 'package.json');
  return existsSync(file) ? Object.keys((JSON.parse(readFileSync(file, 'utf8')) as Manifest).peerDependencies ?? {}) : [];
}

t.test('the import scanner reads every form of import', async (t) => {
  const text = [
    "import { a } from 'koa';",
    "import type { B } from '@scada/platform';",
    "import '@fastify/busboy';",
    "export * from 'jose/jwt';",
    "const m = await import('pg');",
    "const dist = require('swagger-ui-dist/absolute-path.js');",
    'const model = await import(`kubernetes-models/${apiVersion}/${kind}`);',
    'await tx.query(`create schema if not exists "${schema}"`); // select 1 from "auth".users',
    "import x from './local.ts';",
    "import { y } from 'node:fs';",
  ].join('\n');
  t.same(importedPackages(text).sort(), [
    '@fastify/busboy',
    '@scada/platform',
    'jose',
    'koa',
    'kubernetes-models',
    'pg',
    'swagger-ui-dist',
  ]);
});

for (const { dir, manifest } of workspaces) {
  t.test(`${manifest.name} (${dir}) declares what it imports, and only that`, async (t) => {
    const files = isTool(dir) ? sources(join(root, dir), true) : sources(join(root, dir, 'src'));
    const imported = new Set(files.flatMap((file) => importedPackages(readFileSync(file, 'utf8'))));
    imported.delete(manifest.name);
    const declared = declaredBy(dir, manifest);
    t.same([...imported].filter((p) => !(p in declared)).sort(), [], 'imported but not declared');
    // A peer a declared package loads on the workspace's behalf (the NATS client of a broker's transporter) is used.
    const peers = new Set([...imported].flatMap(peersOf));
    t.same(
      Object.keys(declared)
        .filter((p) => !imported.has(p) && !peers.has(p))
        .sort(),
      [],
      'declared but not imported',
    );
    if (isTool(dir)) t.same(Object.keys(manifest.dependencies ?? {}), [], 'a tool workspace has no production dependency');
    for (const [name, version] of Object.entries(declared)) {
      t.equal(version, versions.get(name), `${name} pinned as the repository pins it`);
    }
  });
}

/** Every `.ts`/`.mjs` file of the repository, outside dependencies and generated output. */
function everyFile(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name === 'data' || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return everyFile(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** The relative specifiers of a file's imports (`./x.ts`, `../../platform/src/y.ts`). */
export function relativeImports(text: string): string[] {
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+|^\s*export\s+\*\s+from\s*)['"](\.{1,2}\/[^'"]+)['"]/gm;
  return [...text.matchAll(specifier)].map((m) => m[1] as string);
}

t.test("no file imports another workspace's src/ or test/ by path", async (t) => {
  const dirs = workspaces.map((w) => join(root, w.dir));
  const workspaceOf = (file: string) => dirs.find((d) => file.startsWith(`${d}/`));
  const crossings: string[] = [];
  const self = fileURLToPath(import.meta.url);
  for (const file of everyFile(root)) {
    if (file === self) continue; // its examples below
    const from = workspaceOf(file);
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = join(file, '..', spec);
      const to = workspaceOf(target);
      if (to && to !== from && /^(src|test)\//.test(target.slice(to.length + 1))) crossings.push(`${file.slice(root.length)} → ${spec}`);
    }
  }
  t.same(crossings, [], 'each of these should import the package by its name');
});

t.test('the path check reads every form of relative import', async (t) => {
  const text = [
    "import { a } from '../platform/src/a.ts';",
    "import type { B } from './b.ts';",
    "export * from '../c/src/c.ts';",
    "const m = await import('../../d/test/d.ts');",
    "import '@scada/platform';",
  ].join('\n');
  t.same(relativeImports(text), ['../platform/src/a.ts', './b.ts', '../c/src/c.ts', '../../d/test/d.ts']);
});
