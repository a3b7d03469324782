/**
 * A flood of values into the history costs a device nothing: while the store records 60,000 values that
 * arrived at once (reports of 1,500 values each, published on the bus as the protocol service publishes
 * them), the replica holding a connection keeps renewing its lease (a lease of 2 s, renewed every 0.5 s:
 * no "lease lost", the session stays connected with the same holder) and a sign-in is answered. On the
 * embedded store the history's batches wait in its bulk lane and are recorded 2,000 values a transaction,
 * so a renewal waits for one of them at most; before, the flood was one transaction of every value, which
 * held the process longer than the lease. On PostgreSQL and NATS as well when they are set.
 */
import t from 'tap';
import { protocolEvents } from '@scada/contracts';
import { publishEvent } from '@scada/platform';
import { startSimulator } from '@scada/simulator';
import { liveConnection, until } from '@scada/testkit/live';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { takeoverSettings } from '@scada/testkit/takeover';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform(takeoverSettings);
t.teardown(() => p.stop());

t.test(`a flood of history keeps the lease and answers a sign-in (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
  await c.connect();
  const holder = (await c.session()).heldBy;
  t.ok(holder, 'the connection is held');

  const events = 40;
  const perEvent = 1500;
  const reference = 'SIMLD0/GGIO1.AnIn1.mag.f[MX]';
  const base = Date.now() - 3_600_000;
  for (let e = 0; e < events; e++) {
    const values = Array.from({ length: perEvent }, (_, i) => {
      const at = new Date(base + (e * perEvent + i) * 10).toISOString();
      return {
        connectionId: c.id,
        reference,
        value: e * perEvent + i,
        quality: null,
        timestamp: null,
        timestampSource: null,
        receivedAt: at,
        rcb: 'SIMLD0/LLN0$RP$flood',
        reason: ['data-change' as const],
        seqNum: e % 256,
      };
    });
    publishEvent(
      p.proc.bus,
      protocolEvents.report,
      {
        space: 'default',
        connectionId: c.id,
        rcb: 'SIMLD0/LLN0$RP$flood',
        rptId: 'flood',
        seqNum: e % 256,
        entryId: null,
        values,
        at: new Date().toISOString(),
      },
      { requestId: `flood-${e}` },
    );
    // Reports arrive over time, not in one synchronous loop of this process (which is the platform's too).
    await new Promise((resolve) => setImmediate(resolve));
  }
  const signIn = await fetch(`${p.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: testAdminPassword }),
  });
  t.equal(signIn.status, 200, 'a sign-in during the flood is answered');
  await signIn.body?.cancel();

  // The flood is in once the history counts every value (the summary is read from the hour rollups).
  const recorded = async () => {
    const res = await c.api('GET', '/history/summary');
    if (res.status !== 200) return 0;
    const body = (await res.json()) as unknown;
    const rows = (Array.isArray(body) ? body : ((body as { items?: unknown[] }).items ?? [])) as { reference: string; count: number }[];
    return rows.find((r) => r.reference === reference)?.count ?? 0;
  };
  let seen = 0;
  await until('every value of the flood is recorded', async () => (seen = await recorded()) >= events * perEvent, 120_000);
  t.equal(seen, events * perEvent, 'every value recorded once');

  const session = await c.session();
  t.equal(session.state, 'connected', 'the session stayed connected');
  t.equal(session.heldBy, holder, 'held by the same replica');
  t.notOk(
    p.logs.some((l) => String(l.msg).includes('lease lost')),
    'no lease was lost',
  );
});
