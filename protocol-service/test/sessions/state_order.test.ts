/**
 * A session's state reaches the store in the order it changed: a save of an older state that is slow
 * never lands after the save of a newer one, and the disabling of a report block answers only once the
 * state without the block's warning is stored.
 */
import { randomUUID } from 'node:crypto';
import { MemoryBus, type Store } from '@scada/platform';
import { pino } from 'pino';
import t from 'tap';
import { migrate } from '@scada/platform/testing';
import { storeTargets } from '@scada/testkit/stores';
import { protocolService } from '../../src/service.ts';
import { Session } from '../../src/sessions/session.ts';
import { saveConnection } from '../../src/store/connections.ts';
import { readSession } from '../../src/store/sessions.ts';

/** The store, where `hold()` holds back the next save of a session's state until its `release` is called. */
function holdingSaves(store: Store) {
  let next: { reached: () => void; gate: Promise<void> } | null = null;
  const wrapped: Store = Object.create(store, {
    query: {
      value: async (sql: string, params?: unknown[]) => {
        const hold = next;
        if (hold && sql.includes('insert into protocol.session_states')) {
          next = null;
          hold.reached();
          await hold.gate;
        }
        return store.query(sql, params);
      },
    },
  });
  return {
    store: wrapped,
    hold(): { held: Promise<void>; release: () => void } {
      let release = () => {};
      const gate = new Promise<void>((r) => (release = r));
      let reached = () => {};
      const held = new Promise<void>((r) => (reached = r));
      next = { reached, gate };
      return { held, release };
    },
  };
}

for (const target of storeTargets()) {
  t.test(`session state saved in order (${target.name})`, async (t) => {
    const made = await target.make();
    t.teardown(() => made.cleanup());
    await migrate(made.store, protocolService.schema, await protocolService.migrations());
    const bus = new MemoryBus();
    t.teardown(() => bus.close());
    const space = 'order';
    const id = randomUUID();
    const connection = { space, id, ip: '127.0.0.1', port: 102, name: 'feeder' };
    await saveConnection(
      made.store,
      space,
      id,
      { projectId: randomUUID(), name: 'feeder', ip: '127.0.0.1', port: 102, protocol: 'IEC 61850' },
      'tester',
      true,
    );
    const saves = holdingSaves(made.store);
    const session = new Session(connection, {
      store: saves.store,
      bus,
      log: pino({ level: 'silent' }),
      owner: 'replica-1',
      // A device that never answers: the session stays connecting until it is stopped.
      connector: (_target, signal) =>
        new Promise((_resolve, reject) => {
          if (signal.aborted) reject(new Error('stopped'));
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        }),
    });
    session.start();
    for (let i = 0; i < 100 && (await readSession(made.store, space, id))?.state !== 'connecting'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    t.equal((await readSession(made.store, space, id))?.state, 'connecting');

    // A block is forgotten (its state's save held back), then the session stops: the stopped state must
    // not be overwritten by the older one when that save goes through.
    const forgetting = saves.hold();
    let forgotten = false;
    const forget = session.forgetBlock('LD0/LLN0$BR$brcb01').then(() => (forgotten = true));
    await forgetting.held;
    const stopping = session.stop();
    await new Promise((r) => setTimeout(r, 100));
    t.notOk(forgotten, 'forgetting a block has not resolved while its save is on its way');
    forgetting.release();
    await Promise.all([stopping, forget]);
    t.ok(forgotten, 'and resolves once it is stored');
    t.equal(session.state.state, 'stopped');
    t.equal((await readSession(made.store, space, id))?.state, 'stopped', 'the store holds the newer state');
  });
}
