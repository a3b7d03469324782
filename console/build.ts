/**
 * Builds the engineer's console into static files: `console/dist/index.html` and hashed scripts and styles
 * under `console/dist/assets/`, which the gateway serves at `/console/`, each file also compressed beside
 * itself (`.br`, `.gz`) for the gateway to answer by the client's `Accept-Encoding`. Run by `npm start`
 * (prestart), `deno task start`, `npm run build` and the browser test; prints the initial bundle's sizes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';

/** The console's folder. */
const consoleRoot = new URL('.', import.meta.url).pathname.replace(/\/$/, '');

/** Where the gateway finds the built console (gateway/src/routes/console.ts reads the same folder). */
export const consoleDist = join(consoleRoot, 'dist');

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** The most the files a first visit loads may weigh, gzipped (issue 29). */
export const initialBudgetBytes = 25 * 1024;

/** What a build wrote. */
export type ConsoleBuild = {
  /** The files under `assets/`, by name. */
  assets: string[];
  /** The gzipped bytes of what the first page loads: its entry script, the chunks it imports and its styles. */
  initialGzipBytes: number;
  /** The same files compressed with Brotli, as the gateway sends them to a browser that takes `br`. */
  initialBrotliBytes: number;
  /** The gzipped bytes of each file that loads only when a page needs it. */
  lazyGzipBytes: Record<string, number>;
};

/**
 * Bundles `src/main.ts` (code split: a page's heavy parts are chunks imported when it opens) and the
 * styles, each named by its content's hash, then writes the page that loads them. The page holds no
 * inline script or style, so the gateway's CSP needs neither `unsafe-inline` nor `unsafe-eval`.
 * The new build is written beside the old one and put in place at once.
 */
export async function buildConsole(out = consoleDist): Promise<ConsoleBuild> {
  const key = await sourcesKey();
  // Loaded here, so that a start without the development packages can say what is missing (see `main`).
  const { build } = await import('esbuild');
  const staging = `${out}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: { main: join(consoleRoot, 'src', 'main.ts'), styles: join(consoleRoot, 'src', 'styles.css') },
    outdir: join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: consoleRoot,
    // As a string: an object given to `define` becomes a chunk of its own that the first page loads too.
    define: { REQUEST_FIELDS: JSON.stringify(JSON.stringify(await requestFields())) },
  });
  const outputs = result.metafile.outputs;
  const nameOf = (path: string) => basename(path);
  const entry = Object.keys(outputs).find((p) => outputs[p]?.entryPoint?.endsWith('main.ts'));
  const styles = Object.keys(outputs).find((p) => p.endsWith('.css'));
  if (!entry || !styles) throw new Error('the console build wrote no entry script or no styles');
  // What the first page loads: the entry, the chunks it imports statically (not dynamically), the styles.
  const initial = new Set<string>([entry, styles]);
  const walk = (path: string) => {
    for (const imp of outputs[path]?.imports ?? []) {
      if (imp.kind === 'import-statement' && !initial.has(imp.path)) {
        initial.add(imp.path);
        walk(imp.path);
      }
    }
  };
  walk(entry);
  const html = page(nameOf(entry), nameOf(styles));
  await writeFile(join(staging, 'index.html'), html);
  const compressed = await compressAll(staging);
  const size = (path: string, coding: 'gzip' | 'br') => compressed.get(`${nameOf(path)}.${coding === 'br' ? 'br' : 'gz'}`) ?? 0;
  let initialGzipBytes = 0;
  let initialBrotliBytes = 0;
  for (const path of initial) {
    initialGzipBytes += size(path, 'gzip');
    initialBrotliBytes += size(path, 'br');
  }
  const lazyGzipBytes: Record<string, number> = {};
  for (const path of Object.keys(outputs))
    if (!initial.has(path) && !path.endsWith('.map')) lazyGzipBytes[nameOf(path)] = size(path, 'gzip');
  await putInPlace(staging, out, html);
  const built = { assets: Object.keys(outputs).map(nameOf), initialGzipBytes, initialBrotliBytes, lazyGzipBytes };
  await writeStamp(key, { html, built });
  return built;
}

/** What a build of a given set of sources wrote: its page (which names every file by its hash) and sizes. */
type Stamp = { html: string; built: ConsoleBuild };

/**
 * The console as built from its current sources: the build in `out` when a build of the very same sources
 * (same key, below) wrote it and it is still whole there, else a new build. The browser tests start from
 * this, so a suite run builds the console once (about 2 CPU-s: esbuild, then Brotli at its best quality)
 * instead of once a file; the sizes answered are those the real build measured.
 */
export async function consoleBuiltOnce(out = consoleDist): Promise<ConsoleBuild> {
  const key = await sourcesKey();
  const stamp = await readStamp(key);
  if (stamp && (await holds(out, stamp))) return stamp.built;
  return buildConsole(out);
}

/**
 * A hash of what a build depends on: the console's sources and this file, the contracts (the request
 * fields are read from them) and the lock file (the versions of esbuild and of every bundled package).
 */
async function sourcesKey(): Promise<string> {
  const hash = createHash('sha256');
  const add = async (path: string) => {
    const entries = await readdir(path, { withFileTypes: true }).catch(() => null);
    if (!entries) {
      const body = await readFile(path).catch(() => null);
      if (body) hash.update(`${relative(consoleRoot, path)}\0${body.length}\0`).update(body);
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) await add(join(path, entry.name));
  };
  // Everything the build reads: the sources, the build itself, its compiler and package settings.
  for (const path of [
    join(consoleRoot, 'src'),
    join(consoleRoot, 'build.ts'),
    join(consoleRoot, 'tsconfig.json'),
    join(consoleRoot, 'package.json'),
    join(consoleRoot, '..', 'contracts', 'src'),
  ])
    await add(path);
  await add(join(consoleRoot, '..', 'package-lock.json'));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Where the stamp of the build of `key` is kept, shared by test files and runs: the checkout's own cache folder
 * (beside Node's compile cache the tests keep), not the system's temporary folder, where another user could write
 * a stamp first and have a start take an older build in `dist` for the current one.
 */
const stampFolder = join(consoleRoot, '..', 'node_modules', '.cache', 'scada-console');
const stampPath = (key: string) => join(stampFolder, `${key}.json`);

async function readStamp(key: string): Promise<Stamp | null> {
  try {
    return JSON.parse(await readFile(stampPath(key), 'utf8')) as Stamp;
  } catch {
    return null;
  }
}

/** Written to a temporary name and renamed, so a test file starting at the same time never reads half of it. */
async function writeStamp(key: string, stamp: Stamp): Promise<void> {
  const partial = `${stampPath(key)}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(stampFolder, { recursive: true });
    await writeFile(partial, JSON.stringify(stamp));
    await rename(partial, stampPath(key));
  } catch {
    // A stamp is only a shortcut: without one the next caller builds again.
    await rm(partial, { force: true });
  }
}

/** Whether `out` holds the build of `stamp`: the same page, and each of its files with both compressed copies. */
async function holds(out: string, stamp: Stamp): Promise<boolean> {
  const page = await readFile(join(out, 'index.html'), 'utf8').catch(() => null);
  if (page !== stamp.html) return false;
  const files = [join(out, 'index.html'), ...stamp.built.assets.map((name) => join(out, 'assets', name))];
  return files.every((file) => existsSync(file) && existsSync(`${file}.br`) && existsSync(`${file}.gz`));
}

/**
 * Writes `<file>.br` (Brotli, best quality) and `<file>.gz` (gzip level 9) beside the page and each asset
 * of the build in `dir`, so that the gateway sends them without compressing anything while it answers.
 * Answers the size of each compressed file, by name.
 */
async function compressAll(dir: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const files = [join(dir, 'index.html'), ...(await readdir(join(dir, 'assets'))).map((name) => join(dir, 'assets', name))];
  const write = async (file: string, suffix: string, compressed: Promise<Buffer>) => {
    const bytes = await compressed;
    await writeFile(`${file}.${suffix}`, bytes);
    sizes.set(`${basename(file)}.${suffix}`, bytes.length);
  };
  // In zlib's thread pool, all at once: the code editor's chunk alone takes Brotli most of a second.
  await Promise.all(
    files.map(async (file) => {
      const body = await readFile(file);
      const params = { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length };
      await Promise.all([write(file, 'br', brotli(body, { params })), write(file, 'gz', gzipped(body, { level: 9 }))]);
    }),
  );
  return sizes;
}

/**
 * The operations whose body the console copies from an answer it read (`src/request_fields.ts`), each with
 * the fields of its request body as the contracts define them: the schema stays the one source of them.
 */
async function requestFields(): Promise<Record<string, string[]>> {
  const copied = ['createScript', 'updateScript'];
  const { operations } = await import('@scada/contracts');
  const fields: Record<string, string[]> = {};
  for (const id of copied) {
    const body = operations.find((op) => op.operationId === id)?.request.properties.body as { properties?: object } | undefined;
    if (!body?.properties) throw new Error(`the contracts have no operation ${id} with an object body`);
    fields[id] = Object.keys(body.properties);
  }
  return fields;
}

/**
 * Replaces the build in `out` with the one in `staging`, unless `out` already holds the same (the page names
 * every file by its content's hash, so the same page means the same files): builds running at once (test
 * files, a start) then leave a served build alone. A build put in place by another at the same time wins.
 */
async function putInPlace(staging: string, out: string, html: string): Promise<void> {
  const current = await readFile(join(out, 'index.html'), 'utf8').catch(() => null);
  // A build from before the compressed files were written has the same page: it is replaced.
  if (current === html && existsSync(join(out, 'index.html.br'))) return void (await rm(staging, { recursive: true, force: true }));
  await mkdir(dirname(out), { recursive: true });
  const old = `${out}.old-${process.pid}`;
  await rename(out, old).catch(() => undefined);
  try {
    await rename(staging, out);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    await rm(staging, { recursive: true, force: true });
  }
  await rm(old, { recursive: true, force: true });
}

/** The console's one page: its styles and its entry module, both from the gateway. */
function page(script: string, styles: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>SCADA console</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/console/assets/${styles}">
  <script type="module" src="/console/assets/${script}"></script>
</head>
<body>
  <div id="app"><p>Loading the console…</p></div>
  <noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;
}

/**
 * `node --import tsx console/build.ts`: builds and prints the sizes; exits 1 over the budget. With `--if-changed`
 * (`npm start`'s `prestart`), a build of the same sources still whole in `dist` is kept (`consoleBuiltOnce`):
 * a start after a start builds nothing (about 1.7 CPU-s less), and prints the sizes the build measured.
 */
async function main(): Promise<void> {
  const started = Date.now();
  let built: ConsoleBuild;
  try {
    built = process.argv.includes('--if-changed') ? await consoleBuiltOnce() : await buildConsole();
  } catch (err) {
    // An install without the development packages (`npm install --omit=dev`) has no esbuild: the platform
    // still starts, without its console (`/` then leads to `/docs`).
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String(err).includes('esbuild')) throw err;
    console.warn('esbuild is not installed (an install without development packages): the console is not built, /console/ answers 404');
    return;
  }
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const lazy = Object.entries(built.lazyGzipBytes)
    .map(([name, bytes]) => `${name} ${kb(bytes)}`)
    .join(', ');
  console.log(
    `console built into ${relative(process.cwd(), consoleDist) || '.'} in ${Date.now() - started} ms: initial ${kb(built.initialGzipBytes)} gzip, ${kb(built.initialBrotliBytes)} brotli (budget ${kb(initialBudgetBytes)} gzip)${lazy ? `; on demand: ${lazy}` : ''}`,
  );
  if (built.initialGzipBytes > initialBudgetBytes) {
    console.error("the console's initial bundle is over its budget");
    process.exitCode = 1;
  }
}

/** Whether this file is the one node was asked to run: its real path, as node loads it through a link. */
const runAsMain = (): boolean => {
  const entry = process.argv[1];
  return entry !== undefined && existsSync(entry) && import.meta.url === pathToFileURL(realpathSync(entry)).href;
};

if (runAsMain() || (globalThis as { Deno?: { mainModule: string } }).Deno?.mainModule === import.meta.url) {
  await main();
}
