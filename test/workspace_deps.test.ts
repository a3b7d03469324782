/**
 * Each workspace declares what it imports: every package its sources import (type-only imports too: the
 * types come from the package) is in its `dependencies`, pinned as the root pins it, and nothing declared
 * there goes unused. Read from the sources, so a new import without its declaration fails here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';

const root = new URL('..', import.meta.url).pathname;
type Manifest = { name: string; version: string; workspaces?: string[]; dependencies?: Record<string, string> };
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

/** The `.ts` files under a folder, tests excluded (they run from the repository root's dependencies). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The package names a file imports: `from '…'`, `import('…')`, `import '…'` and `require('…')` of a bare
 * package specifier (not `node:`, not a relative path; SQL's `from "schema"` does not look like one).
 */
export function importedPackages(text: string): string[] {
  const specifier =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]((?:node:|@[a-z0-9-]+\/)?[a-z0-9][\w.-]*(?:\/[\w.-]+)*)['"](?!\.)/gm;
  return [...text.matchAll(specifier)]
    .map((m) => m[1] as string)
    .filter((s) => !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : (s.split('/')[0] as string)));
}

const workspaces = (rootManifest.workspaces ?? []).map((dir) => ({
  dir,
  manifest: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest,
}));
const versions = new Map<string, string>([
  ...Object.entries(rootManifest.dependencies ?? {}),
  ...workspaces.map((w) => [w.manifest.name, w.manifest.version] as [string, string]),
]);

t.test('the import scanner reads every form of import', async (t) => {
  const text = [
    "import { a } from 'koa';",
    "import type { B } from '@scada/platform';",
    "import '@fastify/busboy';",
    "export * from 'jose/jwt';",
    "const m = await import('pg');",
    "const dist = require('swagger-ui-dist/absolute-path.js');",
    'await tx.query(`create schema if not exists "${schema}"`); // select 1 from "auth".users',
    "import x from './local.ts';",
    "import { y } from 'node:fs';",
  ].join('\n');
  t.same(importedPackages(text).sort(), ['@fastify/busboy', '@scada/platform', 'jose', 'koa', 'pg', 'swagger-ui-dist']);
});

for (const { dir, manifest } of workspaces) {
  t.test(`${manifest.name} (${dir}) declares what it imports, and only that`, async (t) => {
    const imported = new Set(sources(join(root, dir, 'src')).flatMap((file) => importedPackages(readFileSync(file, 'utf8'))));
    imported.delete(manifest.name);
    const declared = manifest.dependencies ?? {};
    t.same([...imported].filter((p) => !(p in declared)).sort(), [], 'imported but not declared');
    t.same(
      Object.keys(declared)
        .filter((p) => !imported.has(p))
        .sort(),
      [],
      'declared but not imported',
    );
    for (const [name, version] of Object.entries(declared)) {
      t.equal(version, versions.get(name), `${name} pinned as the repository pins it`);
    }
  });
}
