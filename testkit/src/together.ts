/**
 * Test files run together in one test process (`<package>/test/all.test.ts`, the `together.test.ts` files).
 *
 * tap starts a process of its own for each file it runs, and each pays its start (Node, tap, the loader) before
 * its first test: about 0.35 CPU-s, as much as many small files spend on their tests (docs/testing.md, sixth
 * pass). So tap runs one file that loads them instead (`package.json`'s tap `exclude` leaves them out of its own
 * list), and each can still be run alone by naming it. What a file run together may not do, as all of them share
 * tap's root: hooks on the root (`t.beforeEach`, `t.afterEach`, `t.before`) would run around every other file's
 * tests too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What this module needs of a tap test (the testkit does not depend on tap). */
type Test = {
  test(name: string, fn: (t: Test) => Promise<void>): unknown;
  ok(value: unknown, message: string): unknown;
  error(error: unknown, message: string): unknown;
};

/**
 * The test files under `folder` (its subfolders included, but not `fixtures` or `dist`), as paths relative
 * to it, sorted; the loading file itself (`all.test.ts`) and those `leave` names are left out.
 */
export function testFilesIn(folder: URL, leave: (name: string) => boolean = () => false): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !/(^|\/)(fixtures|dist)\//.test(file))
    .filter((file) => basename(file) !== 'all.test.ts' && !leave(basename(file)))
    .sort();
}

/**
 * Loads `files` (relative to `folder`) in a test of their own, which holds tap's root until the last file has
 * queued its tests: a file's setup awaited at its top (a store, a simulator) would otherwise find the root
 * ended by the files before it. A file that fails to load fails here, and the others still run.
 */
export function loadTogether(t: Test, folder: URL, files: readonly string[]): void {
  t.test('the test files load', async (t) => {
    t.ok(files.length > 0, `${files.length} files`);
    for (const file of files) {
      const failed = await import(new URL(file, folder).href).then(
        () => null,
        (error: unknown) => error,
      );
      t.error(failed, `${file} loads`);
    }
  });
}

/** What `loadInTurn` needs of tap's root: `teardown` and `after` are set on it for the time of a file's load. */
type Root = Test & {
  teardown(fn: () => unknown): unknown;
  after(fn: () => unknown): unknown;
  setTimeout(ms: number): unknown;
};

/**
 * Runs test files that each start a platform (or another costly fixture) in this one process, one file at a
 * time: a file is loaded (its top awaits its platform and queues its tests on tap's root), its tests run, then
 * what it set to run at the root's end (`t.teardown`, `t.after` at its top: its platform's stop) runs before the
 * next file loads. So one platform is up at a time, as when each file had a process of its own, and the process
 * start, tap and the platform's modules are paid once for all of them.
 *
 * Each step is a test of its own on the root, queued by the step before once that step's file has queued its
 * tests, so that the order is: load the first, its tests, stop it and load the second, its tests, and so on. A
 * file that fails to load or to stop fails its step, and the others still run. What a file run this way may not
 * do, besides hooks on the root: leave anything running past its teardowns (a timer, a connection), as the
 * files after it share the process; set the root's time limit (`options.fileTimeoutMs` gives each file a limit
 * of its own instead of tap's).
 */
export function loadInTurn(t: Test, folder: URL, files: readonly string[], options: { fileTimeoutMs?: number } = {}): void {
  const root = t as Root;
  // tap's time limit is for one file's process (its `timeout`, given to the process as TAP_TIMEOUT in
  // seconds), or the one the files set for themselves alone (`fileTimeoutMs`, the browser files'): each file
  // run here keeps the one it had alone, as these run one after the other.
  root.setTimeout(files.length * (options.fileTimeoutMs ?? Number(process.env.TAP_TIMEOUT ?? 30) * 1000));
  let stops: Array<() => unknown> = [];
  // A process that ends early (an uncaught error, a timer of a file before that fires later, a test that
  // never ends) is reported by tap against whatever test ran then, and the files after it do not run: the
  // last words say which file's tests were running, which one ran before it, and how to run each alone.
  let running: { file: string; previous: string | undefined } | null = null;
  process.once('exit', (code) => {
    if (running === null) return;
    const alone = (file: string) => `npx tap ${fileURLToPath(new URL(file, folder))}`;
    const before = running.previous === undefined ? '' : `, after ${running.previous} (\`${alone(running.previous)}\`)`;
    process.stderr.write(
      `# these files ran in one process, which ended (code ${code}) before every file had run, while ${running.file}'s tests ran${before}; ` +
        `files after it did not run. Run it alone: \`${alone(running.file)}\`\n`,
    );
  });
  const step = (i: number): void => {
    const previous = files[i - 1];
    const file = files[i];
    const name = [previous && `${previous} stops`, file && `${file} loads`].filter(Boolean).join(', ');
    root.test(i === 0 ? `the test files load in turn: ${name}` : name, async (t) => {
      if (i === 0) t.ok(files.length > 0, `${files.length} files`);
      if (previous) {
        let failed: unknown = null;
        // In the reverse order of their setting, as tap runs them.
        for (const stop of stops.reverse()) {
          try {
            await stop();
          } catch (error) {
            failed ??= error;
          }
        }
        stops = [];
        t.error(failed, `${previous} stops`);
      }
      if (!file) {
        running = null;
        return;
      }
      const keep = (fn: () => unknown) => void stops.push(fn);
      for (const key of ['teardown', 'after']) Object.defineProperty(root, key, { value: keep, configurable: true, writable: true });
      const failed = await import(new URL(file, folder).href).then(
        () => null,
        (error: unknown) => error,
      );
      for (const key of ['teardown', 'after']) delete (root as unknown as Record<string, unknown>)[key];
      running = { file, previous };
      t.error(failed, `${file} loads`);
      step(i + 1);
    });
  };
  step(0);
}

/**
 * Checks that tap's own run (`package.json`'s tap `exclude`) and the PostgreSQL + NATS pass of `.ci/run` (its
 * `--exclude` list, which replaces that one) both leave out `pattern`, the files a group file runs, so that
 * none of them runs twice or not at all.
 */
export function leftOutOfTapRuns(t: Test, checkout: URL, pattern: string): void {
  t.test("tap's own runs leave out exactly the files run here", async (t) => {
    const manifest = JSON.parse(readFileSync(new URL('package.json', checkout), 'utf8')) as { tap: { exclude: string[] } };
    t.ok(manifest.tap.exclude.includes(pattern), `package.json's tap exclude names ${pattern}`);
    t.ok(
      readFileSync(new URL('.ci/run', checkout), 'utf8').includes(`'${pattern}'`),
      `.ci/run's PostgreSQL + NATS pass leaves out ${pattern}`,
    );
  });
}
