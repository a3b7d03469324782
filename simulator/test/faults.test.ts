/**
 * The faults a simulator shows on demand (silence, a refused association, a connection dropped mid-answer,
 * rejects of unknown services), restart for reconnect tests, and connect/close cycles that leak nothing.
 */
import t from 'tap';
import {
  buildAssociationRequest,
  buildConnectionRequest,
  cons,
  encodeCotpData,
  encodeDataSpdu,
  encodeTpkt,
  encodeUserData,
  intTlv,
  MMS_CONTEXT_ID,
  nullTlv,
} from '@scada/iec61850/wire';
import { startSimulator, type Faults, type Simulator } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { eventually, RawClient } from './raw_client.ts';

async function withSimulator(faults: Faults, run: (sim: Simulator) => Promise<void>): Promise<void> {
  const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
  try {
    await run(sim);
  } finally {
    await sim.stop();
  }
}

/** A confirmed request for the Status service (tag 0), which the simulator does not know. */
function statusRequest(invokeId: number): Uint8Array {
  const pdu = cons('context', 0, intTlv('universal', 2, invokeId), nullTlv('context', 0));
  return encodeTpkt(encodeCotpData(encodeDataSpdu(encodeUserData({ contextId: MMS_CONTEXT_ID, data: pdu }))));
}

t.test('silent: the TCP connection is accepted and nothing is ever answered', async (t) => {
  await withSimulator({ silent: true }, async (sim) => {
    const c = await RawClient.open(sim.port);
    c.write(buildConnectionRequest());
    await t.rejects(c.take(() => true, 200));
    t.equal(sim.connections(), 1);
    await c.close();
  });
});

t.test('refuseAssociation: the CONNECT is answered with REFUSE carrying a rejecting AARE, then the connection closes', async (t) => {
  await withSimulator({ refuseAssociation: true }, async (sim) => {
    const c = await RawClient.open(sim.port);
    c.write(buildConnectionRequest());
    await c.take((r) => r.kind === 'cc');
    c.write(buildAssociationRequest());
    const answer = await c.take((r) => r.kind === 'tsdu');
    if (answer.kind !== 'tsdu') throw new Error('unreachable');
    t.equal(answer.peeled.session.kind, 'refuse');
    t.equal(answer.peeled.presentation?.kind, 'CPR');
    t.equal(answer.peeled.acse?.kind === 'AARE' && answer.peeled.acse.result, 1);
    await c.closed;
  });
});

t.test('closeAfterRequests: the n-th request gets half an answer and a closed connection', async (t) => {
  await withSimulator({ closeAfterRequests: 2 }, async (sim) => {
    const c = await RawClient.associated(sim.port);
    t.equal((await c.ok({ service: 'identify' })).service, 'identify');
    const pending = c.request({ service: 'identify' });
    await c.closed;
    await t.rejects(Promise.race([pending, new Promise((_, reject) => setTimeout(() => reject(new Error('no answer')), 200))]));
    t.same(
      c.received.filter((r) => r.kind === 'tsdu'),
      [],
      'no whole frame of the second answer arrived',
    );
  });
});

t.test('an unknown service gets a confirmed error, or a Reject with rejectUnknownServices', async (t) => {
  await withSimulator({}, async (sim) => {
    const c = await RawClient.associated(sim.port);
    c.write(statusRequest(5));
    const p = await c.mms((x) => x.pdu === 'confirmed-error');
    t.equal(p.pdu === 'confirmed-error' && p.invokeId, 5);
    t.equal((await c.ok({ service: 'identify' })).service, 'identify', 'the association stays open');
    await c.close();
  });
  await withSimulator({ rejectUnknownServices: true }, async (sim) => {
    const c = await RawClient.associated(sim.port);
    c.write(statusRequest(6));
    const p = await c.mms((x) => x.pdu === 'reject');
    t.same(p.pdu === 'reject' && [p.invokeId, p.reason.pduType, p.reason.code], [6, 'confirmed-request', 1]);
    await c.close();
  });
});

t.test('restart drops every association and listens again on the same port', async (t) => {
  await withSimulator({}, async (sim) => {
    const c = await RawClient.associated(sim.port);
    const port = sim.port;
    await sim.restart();
    await c.closed;
    t.equal(sim.port, port);
    const again = await RawClient.associated(port);
    t.equal((await again.ok({ service: 'identify' })).service, 'identify');
    await again.close();
  });
});

t.test('50 connect/associate/close cycles leave no connection behind', async (t) => {
  await withSimulator({}, async (sim) => {
    for (let i = 0; i < 50; i++) {
      const c = await RawClient.associated(sim.port);
      await c.close();
    }
    t.ok(await eventually(() => sim.connections() === 0), `${sim.connections()} connections left`);
  });
});

t.test('stop closes every association', async (t) => {
  const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
  const c = await RawClient.associated(sim.port);
  await sim.stop();
  await c.closed;
  t.equal(sim.connections(), 0);
});
