/**
 * Audit times travel as the text `Date.toISOString` writes (UTC, milliseconds), read so by the store
 * itself: the same text on every store and whatever time zone the store's session is in.
 */
import { randomUUID } from 'node:crypto';
import * as ops from '@scada/contracts';
import t from 'tap';
import { projects } from '../src/store/tables.ts';
import { freshSpace, startHarnesses } from './harness.ts';

const harnesses = await startHarnesses(t);
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

for (const h of harnesses) {
  t.test(`audit times (${h.name})`, async (t) => {
    t.test('a created entity carries its times as ISO 8601 in UTC with milliseconds', async (t) => {
      const c = h.as();
      const created = await c.call(ops.createProject, { body: { name: 'Dated', isActive: true } });
      t.match(created.creationDate, iso);
      t.equal(created.lastModifiedDate, created.creationDate);
      t.equal(new Date(created.creationDate).toISOString(), created.creationDate, 'what a Date writes for it');
      const [listed] = await c.call(ops.getProjects);
      t.equal(listed?.creationDate, created.creationDate, 'a list reads the same text');
    });

    t.test('the service clock reads back exactly, in a session of another time zone too', async (t) => {
      const space = freshSpace();
      const cases = ['2026-11-26T01:02:03.999Z', '2026-01-01T00:00:00.000Z', '2024-02-29T23:59:59.001Z', '1999-12-31T23:30:00.500Z'];
      await h.store.transaction(async (tx) => {
        // Chatham Islands: +13:45, so a date and an hour that are not UTC's would show.
        await tx.query(`set local time zone 'Pacific/Chatham'`);
        for (const [i, at] of cases.entries()) {
          const row = await projects.insert(
            tx,
            space,
            randomUUID(),
            { name: `p${i}`, isActive: true },
            { actor: 'clock', at: new Date(at) },
          );
          t.equal(row.creationDate, at, `${at} as inserted`);
          t.equal((await projects.get(tx, space, row.id))?.lastModifiedDate, at, `${at} as read`);
        }
        t.same(
          (await projects.list(tx, space)).map((p) => p.creationDate),
          cases,
          'every time of a list',
        );
      });
    });
  });
}
