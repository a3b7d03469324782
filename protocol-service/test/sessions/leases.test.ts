/**
 * The leases of device sessions on both stores: a renewal that comes after the lease's time ran out still
 * keeps it while no other replica has taken it over (a replica slow to renew on a busy machine does not
 * lose its sessions to its own lateness), and never once another replica holds it; a lease taken over is
 * the new holder's alone.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '@scada/platform/testing';
import { storeTargets } from '@scada/testkit/stores';
import { protocolService } from '../../src/service.ts';
import { saveConnection } from '../../src/store/connections.ts';
import { acquireLease, connectionHolder, renewLeases, setStarted } from '../../src/store/sessions.ts';

for (const target of storeTargets()) {
  t.test(`a late renewal keeps a lease nobody took over, and only then (${target.name})`, async (t) => {
    const made = await target.make();
    t.teardown(() => made.cleanup());
    const store = made.store;
    await migrate(store, protocolService.schema, await protocolService.migrations());
    const space = 'leases';
    const [late, taken] = [randomUUID(), randomUUID()];
    for (const id of [late, taken]) {
      const connection = { projectId: randomUUID(), name: `feeder-${id}`, ip: '127.0.0.1', port: 102, protocol: 'IEC 61850' as const };
      await saveConnection(store, space, id, connection, 'tester', true);
      await setStarted(store, space, id, true);
      t.ok(await acquireLease(store, space, id, 'replica-1', 60_000), 'replica-1 holds it');
    }
    t.notOk(await acquireLease(store, space, late, 'replica-2', 60_000), 'a live lease is not taken over');

    // Both leases run out (as if replica-1's renewals had waited past their time); replica-2 takes one over.
    await store.query('update protocol.session_leases set expires_at = now() - interval $$1 second$$ where space = $1', [space]);
    t.equal((await connectionHolder(store, space, late))?.owner, null, 'a lease whose time ran out is held by nobody');
    t.ok(await acquireLease(store, space, taken, 'replica-2', 60_000), 'replica-2 takes over the one');

    const held = await renewLeases(store.first(), 'replica-1', 60_000);
    t.same([...held], [`${space}/${late}`], "replica-1's late renewal keeps the lease nobody took, not the one taken over");
    t.equal((await connectionHolder(store, space, late))?.owner, 'replica-1', 'and it is live again');
    t.equal((await connectionHolder(store, space, taken))?.owner, 'replica-2', 'the one taken over stays with its new holder');
    t.notOk(await acquireLease(store, space, late, 'replica-2', 60_000), 'which cannot take the renewed one');
    t.same([...(await renewLeases(store.first(), 'replica-2', 60_000))], [`${space}/${taken}`], 'replica-2 renews what it holds');
  });
}
