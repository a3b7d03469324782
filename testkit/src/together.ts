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
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';

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
