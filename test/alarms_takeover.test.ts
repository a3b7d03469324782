/**
 * Alarms across a takeover of the evaluator: the replica holding a connection (and so evaluating its
 * alarms) goes away — killed with SIGKILL when the replicas run in processes of their own over NATS and
 * PostgreSQL, stopped otherwise — while an alarm is active and another acknowledged, and the device
 * buffers value changes until the next holder reaches it. The next holder goes on from the states in the
 * store: no active alarm is lost, none is raised twice (entries the device sends again change nothing),
 * and the changes buffered meanwhile make their transitions once each, on the journal and on `/api/live`.
 */
import t from 'tap';
import { utcTimeFromMs } from '@scada/iec61850';
import { startSimulator, type Faults } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { takeoverCluster, takeoverHow, takeoverSettings } from '@scada/testkit/takeover';
import { liveConnection, until } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const D = 'SIMLD0';
const BRCB = `${D}/LLN0$BR$brcb`;

const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const p = await startTestPlatform(takeoverSettings);
t.teardown(() => p.stop());

t.test(`alarms across a takeover (${takeoverHow()}, ${p.mode})`, async (t) => {
  // The first holder: a process to kill, or this process's own replica to stop.
  const cluster = await takeoverCluster(t, p);

  const operator = await signIn(p, { role: 'operator' });
  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
  const json = { ...c.editor.headers, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown, headers = json) =>
    (await fetch(`${p.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<{
      id: string;
      state: string;
    }>;
  const projectId = ((await (await c.api('GET', '')).json()) as { projectId: string }).projectId;
  const group = await post('/api/alarm-groups', { name: 'Takeover', projectId, minPriority: 1, maxPriority: 9 });
  const common = { groupId: group.id, connectionId: c.id, priority: 3, message: 'm' };
  const breaker = (
    await post('/api/alarm-definitions', {
      ...common,
      name: 'Breaker',
      reference: `${D}/GGIO1.Ind1.stVal[ST]`,
      type: 'state',
      alarmWhen: true,
    })
  ).id;
  const load = (
    await post('/api/alarm-definitions', { ...common, name: 'Load', reference: `${D}/GGIO1.AnIn1.mag.f[MX]`, type: 'analog', h: 80 })
  ).id;

  const stream = await openSse(`${p.url}/api/live?connections=${c.id}&topics=alarms`, c.editor.headers);
  t.teardown(() => stream.close());
  await stream.wait(isEvent('snapshot'));
  await c.connect();
  const first = (await c.session()).heldBy as string;
  t.equal(
    (await c.api('POST', '/reports', { rcb: BRCB, triggers: ['dchg'], optionalFields: ['sequence-number', 'entry-id', 'buffer-overflow'] }))
      .status,
    204,
  );
  const transitions = (alarmId: string) =>
    stream.events.flatMap((e: SseEvent) => {
      const d = 'event' in e && e.event === 'alarm' ? (e.data as { alarmId: string; from: string; to: string }) : null;
      return d?.alarmId === alarmId ? [`${d.from}>${d.to}`] : [];
    });
  const setBreaker = (on: boolean) => sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: on });
  const q = sim.value(`${D}/GGIO1$MX$AnIn1$q`);
  const setLoad = (f: number) =>
    sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value: f, double: false }] },
        q,
        { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      ],
    });

  // Raised by the first holder; the load's alarm acknowledged.
  setBreaker(true);
  setLoad(85);
  await until('both raised', async () => transitions(breaker).length === 1 && transitions(load).length === 1);
  t.equal((await post(`/api/alarms/${load}/ack`, {}, { ...operator.headers, 'content-type': 'application/json' })).state, 'acknowledged');
  await until('the acknowledgement on the stream', async () => transitions(load).length === 2);
  // Let the first holder save where the block stands, as it does within a second.
  await new Promise((r) => setTimeout(r, 1500));

  await cluster.startSuccessor();
  faults.refuseAssociation = true;
  await cluster.holderGoes();
  await until('held by the successor', async () => (await c.session()).heldBy === 'successor', 15_000);

  // Nothing is lost while nobody holds the device: the alarms stand as they were.
  const standing = (await (await fetch(`${p.url}/api/alarms/active`, { headers: c.editor.headers })).json()) as {
    alarmId: string;
    state: string;
  }[];
  t.same(
    standing.map((a) => [a.alarmId, a.state]).sort(),
    [
      [breaker, 'unacknowledged'],
      [load, 'acknowledged'],
    ].sort(),
    'the active alarm and the acknowledged one stand while the successor cannot reach the device',
  );

  // The device buffers changes meanwhile; the successor gets them (and perhaps entries delivered before) when it connects.
  setBreaker(false);
  await new Promise((r) => setTimeout(r, 100));
  setBreaker(true);
  await new Promise((r) => setTimeout(r, 100));
  setLoad(50);
  delete faults.refuseAssociation;
  await until('the buffered changes evaluated', async () => transitions(breaker).length >= 3 && transitions(load).length >= 3, 15_000);
  await new Promise((r) => setTimeout(r, 1000));

  t.same(
    transitions(breaker),
    ['normal>unacknowledged', 'unacknowledged>rtn_unacknowledged', 'rtn_unacknowledged>unacknowledged'],
    'breaker: each transition once',
  );
  t.same(transitions(load), ['normal>unacknowledged', 'unacknowledged>acknowledged', 'acknowledged>normal'], 'load: each transition once');
  const journal = (await (await fetch(`${p.url}/api/alarms/journal`, { headers: c.editor.headers })).json()) as {
    rows: { alarmId: string; from: string; to: string }[];
  };
  t.same(
    journal.rows.filter((r) => r.alarmId === breaker).map((r) => `${r.from}>${r.to}`),
    transitions(breaker),
    'the journal has the same transitions, none twice',
  );
  t.same(
    journal.rows.filter((r) => r.alarmId === load).map((r) => `${r.from}>${r.to}`),
    transitions(load),
  );
  t.not(first, 'successor');
  t.equal((await c.api('POST', '/stop')).status, 204);
});
