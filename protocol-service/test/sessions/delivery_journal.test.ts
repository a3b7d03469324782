/**
 * The journal of delivered reports: however many blocks report how often, a replica writes at most one
 * statement per save interval; only the connections whose lease it holds are written; and what it forgets
 * is gone from the store.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '@scada/platform';
import { pino } from 'pino';
import t from 'tap';
import { migrate } from '@scada/platform/testing';
import { storeTargets } from '@scada/testkit/stores';
import { protocolService } from '../../src/service.ts';
import { DeliveryJournal } from '../../src/sessions/delivery_journal.ts';
import { saveConnection } from '../../src/store/connections.ts';
import { readDeliveries } from '../../src/store/deliveries.ts';
import { acquireLease, setStarted } from '../../src/store/sessions.ts';

/** The store, counting the statements that write deliveries. */
function counting(store: Store) {
  const counted = { saves: 0 };
  const wrapped: Store = Object.create(store, {
    query: {
      value: (sql: string, params?: unknown[]) => {
        if (sql.includes('insert into protocol.report_positions')) counted.saves++;
        return store.query(sql, params);
      },
    },
  });
  return { store: wrapped, counted };
}

for (const target of storeTargets()) {
  t.test(`the journal of delivered reports (${target.name})`, async (t) => {
    const made = await target.make();
    t.teardown(() => made.cleanup());
    await migrate(made.store, protocolService.schema, await protocolService.migrations());
    const space = 'journal';
    const [held, other] = [randomUUID(), randomUUID()];
    for (const id of [held, other]) {
      const connection = { projectId: randomUUID(), name: `feeder-${id}`, ip: '127.0.0.1', port: 102, protocol: 'IEC 61850' as const };
      await saveConnection(made.store, space, id, connection, 'tester', true);
      await setStarted(made.store, space, id, true);
    }
    t.ok(await acquireLease(made.store, space, held, 'replica-1', 60_000));
    t.ok(await acquireLease(made.store, space, other, 'replica-2', 60_000));
    const { store, counted } = counting(made.store);
    const journal = new DeliveryJournal({ store, owner: 'replica-1', log: pino({ level: 'silent' }), intervalMs: 100 });
    const value = (rcb: string, n: number) => ({ reference: `LD0/GGIO1.AnIn${rcb.at(-1)}[MX]`, rcb, value: n, stale: false });

    // Eight blocks of each connection, an entry every 10 ms each, for a second.
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 1000) {
      n++;
      for (const id of [held, other])
        for (let b = 1; b <= 8; b++) {
          const rcb = `LD0/LLN0$BR$brcb${b}`;
          journal.keep(space, id, 'device-1', [value(rcb, n)], [rcb, n.toString(16).padStart(16, '0')]);
        }
      await new Promise((r) => setTimeout(r, 10));
    }
    await journal.flush();
    const elapsed = Date.now() - started;
    t.ok(counted.saves <= Math.ceil(elapsed / 100) + 1, `${counted.saves} statements for ${n * 16} entries in ${elapsed} ms`);

    const kept = await readDeliveries(made.store, space, held);
    t.equal(kept.positions.size, 8, 'a place for every block of the held connection');
    t.equal(kept.positions.get('LD0/LLN0$BR$brcb3'), n.toString(16).padStart(16, '0'), 'the last entry of each');
    t.equal(kept.values.length, 8);
    t.equal(kept.device, 'device-1');
    const elsewhere = await readDeliveries(made.store, space, other);
    t.same([elsewhere.positions.size, elsewhere.values.length], [0, 0], 'nothing of a connection another replica holds');

    await journal.forget(space, held, 'LD0/LLN0$BR$brcb3');
    const after = await readDeliveries(made.store, space, held);
    t.notOk(after.positions.has('LD0/LLN0$BR$brcb3'), 'a forgotten block has no place');
    t.notOk(
      after.values.some((v) => v.rcb === 'LD0/LLN0$BR$brcb3'),
      'nor values',
    );
    await journal.forget(space, held, null);
    t.same((await readDeliveries(made.store, space, held)).positions.size, 0, 'another device: nothing is left');
  });
}
