/**
 * The package.json and package-lock.json of one image: exactly the production packages its bundle imports,
 * at the versions the repository's lock file pins, and everything those need at run time. `npm ci` on the
 * pair installs nothing else.
 */

/** An entry of a lock file's `packages` (lockfileVersion 3), as far as this module reads it. */
export type LockEntry = {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  [key: string]: unknown;
};

/** A package-lock.json of version 2 or 3. */
export type Lockfile = { name: string; version: string; lockfileVersion: number; requires?: boolean; packages: Record<string, LockEntry> };

/** The parts of the repository's package.json an image's manifest is made from. */
export type RootManifest = {
  version: string;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  overrides?: Record<string, unknown>;
};

/** The manifest an image installs from. */
export type ImageManifest = {
  name: string;
  version: string;
  private: true;
  type: 'module';
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  overrides?: Record<string, unknown>;
};

/**
 * Where Node finds package `name` from the package at lock path `from` ('' for the root): the nearest
 * `node_modules/<name>` up the folder tree, as the lock file records it.
 */
function locate(lock: Lockfile, name: string, from: string): string | null {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (base === '') return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/**
 * The lock paths of the packages `roots` names and of everything they need at run time: dependencies,
 * optional dependencies the lock holds, and peers (an optional peer only when present). Throws when a
 * needed package is missing from the lock.
 */
export function closureOf(lock: Lockfile, roots: string[]): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string, optional: boolean) => {
    const path = locate(lock, name, from);
    if (path === null) {
      if (optional) return;
      throw new Error(`${name} (needed by ${from || 'the bundle'}) is not in package-lock.json`);
    }
    if (seen.has(path)) return;
    seen.add(path);
    const entry = lock.packages[path];
    if (entry.link) throw new Error(`${name} is a workspace package: it belongs in the bundle, not in node_modules`);
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(dep, path, false);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(dep, path, true);
    for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(dep, path, entry.peerDependenciesMeta?.[dep]?.optional === true);
  };
  for (const name of roots) visit(name, '', false);
  return [...seen].sort();
}

/**
 * The manifest and lock file for an image named `name` whose bundle imports `packages`: each must be a
 * production dependency of the repository (a development one in an image is a mistake, and so is one
 * nobody declared), pinned as the repository pins it.
 */
export function imagePackage(
  name: string,
  root: RootManifest,
  lock: Lockfile,
  packages: string[],
): { manifest: ImageManifest; lock: Lockfile } {
  const dependencies: Record<string, string> = {};
  for (const p of [...packages].sort()) {
    const version = root.dependencies?.[p];
    if (version === undefined) throw new Error(`the bundle imports ${p}, which package.json does not list under dependencies`);
    dependencies[p] = version;
  }
  const paths = closureOf(lock, Object.keys(dependencies));
  const installed = new Set(paths.map((p) => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length)));
  const overrides = Object.fromEntries(Object.entries(root.overrides ?? {}).filter(([p]) => installed.has(p)));
  const manifest: ImageManifest = {
    name,
    version: root.version,
    private: true,
    type: 'module',
    ...(root.engines ? { engines: root.engines } : {}),
    dependencies,
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
  };
  const packagesOut: Record<string, LockEntry> = { '': { name, version: root.version, dependencies } };
  for (const path of paths) {
    // Everything here is reached from a production dependency: no entry is development-only in this tree.
    const { dev: _dev, devOptional: _devOptional, ...entry } = lock.packages[path];
    packagesOut[path] = entry;
  }
  return { manifest, lock: { name, version: root.version, lockfileVersion: lock.lockfileVersion, requires: true, packages: packagesOut } };
}
