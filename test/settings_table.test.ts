/**
 * The README's settings table names every variable the configuration readers of the process read, and
 * nothing they do not: read by running every reader (the gateway's and each service's, through
 * `readProcessConfig`) on an environment that records the names asked for.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { readProcessConfig } from '../launch.ts';

/** The variables named in the first column of the README's configuration table. */
function documented(): Set<string> {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const names = new Set<string>();
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    for (const m of (row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1] as string);
  }
  return names;
}

/** Every variable the configuration readers ask for. */
function read(): Set<string> {
  const asked = new Set<string>();
  const source = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name === 'string') asked.add(name);
      return undefined;
    },
  });
  readProcessConfig(source);
  return asked;
}

t.test('every setting the code reads is in the README table, and the table names no other', async (t) => {
  const table = documented();
  const code = read();
  t.ok(code.size > 20, `the readers were run (${code.size} variables)`);
  t.same([...code].filter((n) => !table.has(n)).sort(), [], 'read but not documented');
  t.same([...table].filter((n) => !code.has(n)).sort(), [], 'documented but never read');
});

t.test("the README stays a newcomer's page: how to run, configure, deploy and change the platform in at most 350 lines", async (t) => {
  const lines = readFileSync(new URL('../README.md', import.meta.url), 'utf8').split('\n').length;
  t.ok(lines <= 350, `${lines} lines (the depth is in each package's README, bench/README.md and deploy/README.md)`);
});
