/**
 * The settings table (`docs/configuration.md`, linked from the README) names every variable the
 * configuration readers of the process read, and nothing they do not: read by running every reader (the
 * gateway's and each service's, through `readProcessConfig`) on an environment that records the names
 * asked for. And the README stays a newcomer's page: a quick start first, short, the depth linked.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { readProcessConfig } from '../launch.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The variables named in the first column of the configuration table. */
function documented(): Set<string> {
  const table = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  const names = new Set<string>();
  for (const row of table.split('\n').filter((l) => l.startsWith('| `'))) {
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

t.test('every setting the code reads is in the configuration table, and the table names no other', async (t) => {
  const table = documented();
  const code = read();
  t.ok(code.size > 20, `the readers were run (${code.size} variables)`);
  t.same([...code].filter((n) => !table.has(n)).sort(), [], 'read but not documented');
  t.same([...table].filter((n) => !code.has(n)).sort(), [], 'documented but never read');
});

t.test("the README stays a newcomer's page: how to run, configure, deploy and change the platform in at most 350 lines", async (t) => {
  const lines = readme.split('\n').length;
  t.ok(lines <= 350, `${lines} lines (the depth is in each package's README, bench/README.md, deploy/README.md and docs/)`);
});

t.test('the README opens with a quick start of at most 40 lines, and links the configuration and the design reasons', async (t) => {
  const headings = readme.split('\n').filter((l) => l.startsWith('## '));
  t.equal(headings[0], '## Quick start', 'the first section is the quick start');
  const start = readme.indexOf('## Quick start');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const lines = section.trimEnd().split('\n').length;
  t.ok(lines <= 40, `${lines} lines`);
  t.ok(section.includes('npm install && npm start'), 'it starts with the two commands');
  t.ok(readme.includes('(docs/configuration.md)'), 'the configuration table is linked');
  t.ok(readme.includes('(docs/design.md)'), 'the design reasons are linked');
});
