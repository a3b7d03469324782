import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { imagePackage, type Lockfile, type RootManifest } from './image_package.ts';
import { byRequire } from './by_require.ts';
import { packageOf, packagesRequiredBy } from './imports.ts';
import { runtimeFiles } from './runtime_files.ts';
import { freshStoreDump, writeStoreTemplate } from './store_template.ts';
import { readWorkspaces, resolveWorkspaceSpecifier, type Workspace } from './workspaces.ts';
import { buildConsole } from '@scada/console/build';

/** The repository's root folder. */
export const repoRoot = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

/**
 * What `npm run build` writes, one folder of `dist/` each: the all-in-one process (`main.ts`, the edge
 * image), the gateway alone and each service alone. Entries are named by package, so that a package's
 * files may move; a workspace package that is not an entry is bundled into whichever entry imports it.
 */
export const targets = {
  edge: './main.ts',
  gateway: '@scada/gateway/main',
  auth: '@scada/auth/main',
  config: '@scada/config/main',
  protocol: '@scada/protocol/main',
  history: '@scada/history/main',
} as const;

/** The name of one build target (and the image built from it). */
export type Target = keyof typeof targets;

/**
 * The oldest Node the bundles run on. Node 22 and 24 are the supported releases (README); the images run
 * 24, CI runs the bundles on this machine's Node 20, which still runs them.
 */
const nodeTarget = 'node20';

/** The bundle's file name in each target's folder; the images' command runs it. */
export const bundleFile = 'main.mjs';

/**
 * Each target's young generation: V8's largest semi-space, in MiB (`--max-semi-space-size`). A small one
 * keeps a process's memory down; a larger one collects less often, which is CPU a request or a value
 * saved. The build writes it into the target's `node.env` as `NODE_OPTIONS` (the images and the
 * all-in-one's unit start `node --env-file=node.env main.mjs`; an operator's own `NODE_OPTIONS` replaces
 * it). 16 MiB everywhere: a request costs a quarter to a third less CPU than with 2 MiB, and the
 * all-in-one's idle memory stays within its goal (bench/README.md, "One young generation a target"). An
 * edge site's protocol service keeps 2 MiB in its own unit, where every MiB of a 128 MiB box counts.
 */
export const youngGenerationMiB: Record<Target, number> = {
  edge: 16,
  gateway: 16,
  auth: 16,
  config: 16,
  protocol: 16,
  history: 16,
};

/** The Node flags a target's bundle runs with, as its `node.env` gives them. */
export function targetNodeFlags(target: Target): string[] {
  return [`--max-semi-space-size=${youngGenerationMiB[target]}`];
}

/** The file beside each bundle that the images' command reads its Node flags from (`--env-file`). */
export const nodeEnvFile = 'node.env';

/** A record of one build, to tell whether it still matches the sources. */
type BuildRecord = { inputs: string[]; hash: string };

/**
 * Packages that stay in node_modules, for the image to install: those that find their own files at run
 * time (PGlite its WebAssembly, the API reference page its assets, the log formatter its worker file) or
 * load optional native parts (pg), and the certificate generator that only a first start needs.
 * Every other package is bundled and minified with the code: parsed and kept in memory as one small
 * source, a gateway idles at some 4 MiB less than with the same packages loaded from node_modules.
 */
export const keptExternal = new Set(['@electric-sql/pglite', 'pg', 'pino', 'pino-pretty', 'swagger-ui-dist', 'selfsigned', 'tsx']);

/**
 * Resolves workspace packages through their package.json `exports`, leaves the packages above to
 * node_modules and lets esbuild bundle every other one.
 */
function workspacesInside(workspaces: Map<string, Workspace>): Plugin {
  return {
    name: 'workspaces-inside',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const file = resolveWorkspaceSpecifier(workspaces, args.path);
        if (file !== null) return { path: file };
        const name = packageOf(args.path);
        if (name === null) return args.path.startsWith('node:') ? { path: args.path, external: true } : undefined;
        return keptExternal.has(name) ? { path: args.path, external: true } : undefined;
      });
    },
  };
}

/**
 * The packages a bundle (with its chunks) loads: its external imports and requires, as esbuild records
 * them, and what the platform's own sources load through a `require` made with `createRequire`, which
 * esbuild does not see (read from the sources: the minified bundle no longer names `require`).
 */
function externalPackages(meta: Metafile, files: string[], ownSources: string): string[] {
  const names = new Set(packagesRequiredBy(ownSources).filter((name) => !name.startsWith('@scada/')));
  for (const file of files) {
    for (const i of meta.outputs[file].imports) {
      const name = i.external ? packageOf(i.path) : null;
      if (name !== null) names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * The output files the bundle loads, itself first; the others are removed. esbuild writes a chunk for
 * every dynamic import of a module it reached, even one whose code it then left out (the store drivers
 * in the gateway's bundle): such a chunk is never loaded and must not bring its packages into the image.
 */
async function keepReachable(meta: Metafile, entry: string): Promise<string[]> {
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const i of meta.outputs[file]?.imports ?? []) if (!i.external) visit(i.path);
  };
  visit(entry);
  for (const file of Object.keys(meta.outputs)) {
    if (!reached.has(file) && !reached.has(file.replace(/\.map$/, ''))) await rm(join(repoRoot, file));
  }
  return [...reached];
}

/**
 * The repository's package.json with the production dependencies its workspace packages declare added to
 * its own, so a package that names what it imports (as a workspace should) is pinned as it says.
 */
async function manifestWithWorkspaces(workspaces: Map<string, Workspace>): Promise<RootManifest> {
  const root = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as RootManifest;
  const dependencies = { ...root.dependencies };
  for (const ws of workspaces.values()) {
    const pkg = JSON.parse(await readFile(join(ws.dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const [name, version] of Object.entries(pkg.dependencies ?? {})) {
      if (workspaces.has(name)) continue;
      if (dependencies[name] !== undefined && dependencies[name] !== version) {
        throw new Error(`${name} is pinned as ${dependencies[name]} and as ${version} (${ws.name}): pin it once`);
      }
      dependencies[name] = version;
    }
  }
  return { ...root, dependencies };
}

/** Bundles one target into `out`: the bundle, the files it reads at run time, its package.json and lock. */
async function buildTarget(target: Target, out: string, workspaces: Map<string, Workspace>): Promise<string[]> {
  const entry = targets[target].startsWith('./')
    ? join(repoRoot, targets[target])
    : resolveWorkspaceSpecifier(workspaces, targets[target])!;
  const files = new Map<string, string>();
  const result = await build({
    entryPoints: { [bundleFile.replace(/\.mjs$/, '')]: entry },
    outdir: out,
    outExtension: { '.js': '.mjs' },
    // What the code loads only when needed (the store driver in use) is a chunk beside the bundle, loaded
    // then; every chunk sits in the bundle's folder, so `import.meta.url` means the same folder in each.
    splitting: true,
    chunkNames: '[name]-[hash]',
    absWorkingDir: repoRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: nodeTarget,
    // Class and function names stay as written: errors and logs name them; the linked source map has the rest.
    // Kept by not renaming identifiers rather than by `keepNames`, which wraps every function and class in a
    // call that sets its name when it is made: each closure made per request paid a property definition
    // (4.6 % of the gateway's CPU under echo and create, its descriptors adding to garbage collection).
    minifyIdentifiers: false,
    minifySyntax: true,
    minifyWhitespace: true,
    // Packages' CommonJS builds where they ship both: a gateway built from them idles at 77 MiB on Node 24,
    // from their ES builds at 84 (bench/footprint.bench.ts).
    conditions: ['require'],
    mainFields: ['main', 'module'],
    // The packages bundled in are partly CommonJS: their `require` of Node's modules and of the packages
    // kept outside needs a `require` in each output file.
    banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    plugins: [byRequire(), workspacesInside(workspaces), runtimeFiles(repoRoot, files)],
  });
  for (const [inRepo, source] of files) {
    if (existsSync(source)) await cp(source, join(out, inRepo), { recursive: true });
  }
  const code = await keepReachable(result.metafile, relative(repoRoot, join(out, bundleFile)));
  const own = Object.keys(result.metafile.inputs).filter((p) => !p.includes('node_modules/') && !p.includes(':'));
  const ownSources = (await Promise.all(own.map((f) => readFile(join(repoRoot, f), 'utf8')))).join('\n');
  const root = await manifestWithWorkspaces(workspaces);
  const lock = JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile;
  const image = imagePackage(`scada-platform-${target}`, root, lock, externalPackages(result.metafile, code, ownSources));
  await writeFile(join(out, nodeEnvFile), `NODE_OPTIONS="${targetNodeFlags(target).join(' ')}"\n`);
  await writeFile(join(out, 'package.json'), `${JSON.stringify(image.manifest, null, 2)}\n`);
  await writeFile(join(out, 'package-lock.json'), `${JSON.stringify(image.lock, null, 2)}\n`);
  await writeFile(`${out}.meta.json`, JSON.stringify(result.metafile));
  return [...Object.keys(result.metafile.inputs).map((p) => join(repoRoot, p)), ...files.values()];
}

/** Every file under a path (the path itself when it is a file), sorted. */
function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** One hash over the names and contents of the inputs (folders by every file in them). */
function hashInputs(inputs: string[]): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(filesUnder)) {
    hash.update(relative(repoRoot, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** What a build reads besides the bundled sources: the manifests and this tool. */
function toolInputs(): string[] {
  return ['package.json', 'package-lock.json', join('tools', 'build'), join('console', 'src')].map((p) => join(repoRoot, p));
}

/**
 * Builds every target into `dist/` (or `distDir`). Each target is written to a fresh folder first and
 * then put in place, so a process starting a bundle never sees half of one.
 */
export async function buildAll(distDir = join(repoRoot, 'dist')): Promise<void> {
  const workspaces = readWorkspaces(repoRoot);
  const staging = join(distDir, `.staging-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  const inputs = new Set<string>(toolInputs());
  // The console's static files, which each gateway bundle carries beside it (gateway/src/routes/console.ts).
  await buildConsole();
  try {
    const base = await freshStoreDump();
    for (const target of Object.keys(targets) as Target[]) {
      for (const file of await buildTarget(target, join(staging, target), workspaces)) inputs.add(file);
      await writeStoreTemplate(target, join(staging, target), base);
    }
    for (const target of Object.keys(targets)) {
      await putInPlace(join(staging, target), join(distDir, target));
      // What went into the bundle, for esbuild's analyzer (https://esbuild.github.io/analyze/); not in the image.
      await rename(join(staging, `${target}.meta.json`), join(distDir, `${target}.meta.json`));
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const sorted = [...inputs].sort();
  const record: BuildRecord = { inputs: sorted.map((p) => relative(repoRoot, p).split(sep).join('/')), hash: hashInputs(sorted) };
  await writeFile(join(distDir, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
}

/** Replaces a target's folder with a fresh one; a build running at the same time may have put one there first. */
async function putInPlace(fresh: string, dest: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await rm(dest, { recursive: true, force: true });
    try {
      return await rename(fresh, dest);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt > 3 || (code !== 'ENOTEMPTY' && code !== 'EEXIST')) throw err;
    }
  }
}

/** Whether `dist/` holds a build of the sources as they are now. */
export function isBuilt(distDir = join(repoRoot, 'dist')): boolean {
  const recordFile = join(distDir, 'build.json');
  if (!existsSync(recordFile)) return false;
  const record = JSON.parse(readFileSync(recordFile, 'utf8')) as BuildRecord;
  if (!(Object.keys(targets) as Target[]).every((t) => existsSync(join(distDir, t, bundleFile)))) return false;
  return hashInputs(record.inputs.map((p) => join(repoRoot, p))) === record.hash;
}

/** Builds unless `dist/` already holds a build of the current sources (what a benchmark or the fault suite runs). */
export async function ensureBuilt(distDir = join(repoRoot, 'dist')): Promise<void> {
  if (!isBuilt(distDir)) await buildAll(distDir);
}

/**
 * The command line that runs a target's bundle as its image does: this Node, the image command's Node
 * flags (from deploy/Dockerfile's CMD) with the target's own in place of its `node.env`, then the bundle.
 */
export function bundleCommand(target: Target, distDir = join(repoRoot, 'dist')): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(join(repoRoot, 'deploy', 'Dockerfile'), 'utf8'));
  const words = cmd ? (JSON.parse(cmd[1]) as string[]) : ['node', bundleFile];
  const flags = words.slice(1).filter((w) => w.startsWith('-'));
  const own = flags.flatMap((f) => (f === `--env-file=${nodeEnvFile}` ? targetNodeFlags(target) : [f]));
  return [...own, join(distDir, target, bundleFile)];
}
