/**
 * Every test file under this folder, run in this one test process.
 *
 * tap starts a process of its own for each file it runs, and each pays its start (Node, tap, the loader) before
 * its first test: about 0.35 CPU-s, as much as many of these files spend on their tests (docs/testing.md, sixth
 * pass). So tap runs this file instead of them (`package.json`, tap's `exclude`), and a file added here runs
 * with them. Each can still be run alone: `npx tap protocol-service/test/scl/answers.test.ts`.
 *
 * What a file here may not do, as all of them share tap's root: hooks on the root (`t.beforeEach`,
 * `t.afterEach`, `t.before`) would run around every other file's tests too.
 */
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import t from 'tap';

const here = new URL('./', import.meta.url);
const files = readdirSync(here, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && basename(file) !== 'all.test.ts')
  .sort();
// Loaded in a test of their own, which holds tap's root until the last file has queued its tests: a file's
// setup awaited at its top (a store, a simulator) would otherwise find the root ended by the files before it.
// A file that fails to load fails here, and the others still run.
t.test('the test files load', async (t) => {
  t.ok(files.length > 0, `${files.length} files`);
  for (const file of files) {
    const failed = await import(new URL(file, here).href).then(
      () => null,
      (error: unknown) => error,
    );
    t.error(failed, `${file} loads`);
  }
});
