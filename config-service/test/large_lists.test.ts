/**
 * Lists with 10,000 rows in their tables: answered in the documented order, and read in that order from an
 * index rather than sorted after reading (the plan the store makes says so: how fast that is on a given
 * machine is a bench's question, not a test's). One list answer travels as one bus message (1 MiB), so each
 * list here holds 2,000 of the rows.
 */
import { randomUUID } from 'node:crypto';
import * as ops from '@scada/contracts';
import type { Store } from '@scada/platform';
import t from 'tap';
import { bodies, startHarnesses } from './harness.ts';

const harnesses = await startHarnesses(t);

/** Code point order, as the store's "C" collation sorts: UTF-8 bytes compared. */
function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Names that sort differently by locale, by case and by UTF-16 unit. */
function nameOf(i: number): string {
  const stems = ['b', 'B', 'ä', 'a', 'Z', 'é', '😀', '\uFF21', '_', '10'];
  return `${stems[i % stems.length]}-${((i * 7919) % 10007).toString(36)}`;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - started) };
}

/**
 * The plan the store makes for a query, one line a node, with sorting after reading priced out of reach
 * (`enable_sort` off for the one transaction): a plan that still sorts has no index that keeps the order
 * asked for. Priced normally, the choice depends on the statistics of the moment: for a space of one row the
 * planner may as well sort that row (PostgreSQL does, after another harness has filled the table), which
 * says nothing about the index.
 */
async function planOf(store: Store, sql: string, params: unknown[]): Promise<string> {
  return store.transaction(async (tx) => {
    await tx.query('set local enable_sort = off');
    const { rows } = await tx.query(`explain ${sql}`, params);
    return rows.map((r) => Object.values(r)[0]).join('\n');
  });
}

for (const h of harnesses) {
  t.test(`10,000-row tables (${h.name})`, async (t) => {
    t.test("getProjects answers its space's 2,000 of 10,000 projects by name, in code point order, read from the name index", async (t) => {
      const c = h.as();
      const names = Array.from({ length: 10000 }, (_, i) => nameOf(i));
      await h.store.query(
        `insert into config.projects (space, id, name, is_active, created_by, creation_date, last_modified_by, last_modified_date)
         select case when n % 5 = 0 then $1 else $1 || '-other-' || (n % 5) end, gen_random_uuid(), name, n % 2 = 0,
                'seed', now(), 'seed', now()
         from unnest($2::text[]) with ordinality as u(name, n)`,
        [c.space, names],
      );
      await h.store.query('analyze config.projects');
      const { value: list, ms } = await timed(() => c.call(ops.getProjects));
      t.comment(`getProjects: ${list.length} projects in ${ms} ms`);
      t.equal(list.length, 2000);
      t.same(
        list.map((p) => p.name),
        list.map((p) => p.name).sort(byCodePoint),
        'ordered by code point',
      );
      const plan = await planOf(h.store, `select id, name from config.projects where space = $1 order by name collate "C"`, [
        `${c.space}-small`,
      ]);
      t.match(plan, /Index Scan using projects_name/, 'a small space is listed from the name index');
      t.notMatch(plan, /Sort/, 'in the order the index keeps, with no sort after reading');
    });

    t.test('getFaceplatePlaceholders orders 2,000 of 10,000 placeholders by order, then name, from the order index', async (t) => {
      const c = h.as();
      const project = await c.call(ops.createProject, { body: bodies.project('P') });
      const faceplates = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => c.call(ops.createFaceplate, { body: bodies.faceplate(`F${i}`, project.id) })),
      );
      const names = Array.from({ length: 10000 }, (_, i) => nameOf(i));
      await h.store.query(
        `insert into config.placeholders (space, id, faceplate_id, name, type, sort_order, created_by, creation_date, last_modified_by, last_modified_date)
         select $1, gen_random_uuid(), ($2::uuid[])[1 + n % 5], name, 'text', case when n % 7 = 0 then null else (n * 31) % 50 - 25 end,
                'seed', now(), 'seed', now()
         from unnest($3::text[]) with ordinality as u(name, n)`,
        [c.space, faceplates.map((f) => f.id), names],
      );
      await h.store.query('analyze config.placeholders');
      const { value: list, ms } = await timed(() => c.call(ops.getFaceplatePlaceholders, { params: { faceplateId: faceplates[0]!.id } }));
      t.comment(`getFaceplatePlaceholders: ${list.length} placeholders in ${ms} ms`);
      t.equal(list.length, 2000);
      const expected = [...list].sort((a, b) => {
        if (a.order !== b.order) return a.order === undefined ? 1 : b.order === undefined ? -1 : a.order - b.order;
        return byCodePoint(a.name, b.name);
      });
      t.same(
        list.map((p) => p.id),
        expected.map((p) => p.id),
        'by order (unset last), then name',
      );
      const plan = await planOf(
        h.store,
        `select id, name from config.placeholders where space = $1 and faceplate_id = $2 order by sort_order nulls last, name collate "C"`,
        [`${c.space}-small`, randomUUID()],
      );
      t.match(plan, /Index Scan using placeholders_order/, 'a small faceplate is listed from the order index');
      t.notMatch(plan, /Sort/, 'in the order the index keeps, with no sort after reading');
    });
  });
}
