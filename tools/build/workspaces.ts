import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A workspace package of the repository. */
export type Workspace = { name: string; dir: string; exports: Record<string, string> };

/**
 * The repository's workspace packages by their package.json names, from the root package.json's
 * `workspaces` (folders, or `folder/*` for every package folder in it). Nothing here knows where a
 * package lives: a package that moves or a new one is found by its name.
 */
export function readWorkspaces(root: string): Map<string, Workspace> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const dirs = (manifest.workspaces ?? []).flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [join(root, pattern)];
    const parent = join(root, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(parent, d.name));
  });
  const out = new Map<string, Workspace>();
  for (const dir of dirs) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name: string; exports?: string | Record<string, string>; main?: string };
    const exports = typeof pkg.exports === 'string' ? { '.': pkg.exports } : (pkg.exports ?? { '.': pkg.main ?? './index.ts' });
    out.set(pkg.name, { name: pkg.name, dir, exports });
  }
  return out;
}

/**
 * The file a specifier names when its package is a workspace (`@scada/auth` → its `.` export,
 * `@scada/auth/main` → its `./main` export); null for any other specifier. Throws for a subpath the
 * package does not export, as Node would.
 */
export function resolveWorkspaceSpecifier(workspaces: Map<string, Workspace>, specifier: string): string | null {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const ws = workspaces.get(name);
  if (!ws) return null;
  const subpath = `.${specifier.slice(name.length)}`;
  const target = ws.exports[subpath];
  if (target === undefined) throw new Error(`${name} does not export ${subpath} (package.json "exports")`);
  return join(ws.dir, target);
}
