/**
 * The suite's test files that start no platform and no process, run in this one test process.
 *
 * tap starts a process of its own for each file it runs, and each pays its start (Node, tap, the loader) before
 * its first test: about 0.35 CPU-s, as much as many of these files spend on their tests (docs/testing.md, sixth
 * pass). So tap runs this file instead of them: `package.json`'s tap `exclude` leaves out the files named here
 * (checked below, so that none is run twice or not at all). Each can still be run alone:
 * `npx tap test/smoke.test.ts`.
 *
 * What a file here may not do, as all of them share tap's root: hooks on the root (`t.beforeEach`,
 * `t.afterEach`, `t.before`) would run around every other file's tests too.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { loadTogether } from '@scada/testkit/together';

const names = ['events_registry', 'process_flags', 'settings_table', 'site_permissions', 'smoke', 'workspace_deps'];
const here = new URL('./', import.meta.url);
const files = names.map((name) => `${name}.test.ts`);

t.test("tap's own run leaves out exactly the files run here", async (t) => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { tap: { exclude: string[] } };
  t.ok(manifest.tap.exclude.includes(`test/@(${names.join('|')}).test.ts`), manifest.tap.exclude.join(' '));
});
loadTogether(t, here, files);
