/**
 * A buffered report block across a takeover, as an operator sees it on `/api/live` and `…/values`: the
 * device reports ten entries a second while the replica holding the connection goes away (killed with
 * SIGKILL when the replicas run in processes of their own over NATS and PostgreSQL, stopped otherwise) and
 * another takes the connection over. The new holder answers the last values at once, stale, then resumes
 * the block after the last entry delivered: every entry once, in order, none lost, none old as new, and no
 * buffer_overflow warning.
 */
import t from 'tap';
import { startSimulator, type Faults } from '@scada/simulator';
import { FIXTURE_SCL, fixtureCounter, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { takeoverCluster, takeoverHow, takeoverSettings } from '@scada/testkit/takeover';
import { liveConnection, until } from '@scada/testkit/live';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const D = 'SIMLD0';
const BRCB = `${D}/LLN0$BR$brcb`;

const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const p = await startTestPlatform(takeoverSettings);
t.teardown(() => p.stop());

type LiveValue = { reference: string; value: { mag?: { f?: number } }; timestamp: string | null; rcb: string; stale?: boolean };

/** The counter each entry carries (AnIn1.mag.f), from a value of the measurement. */
const counterOf = (v: LiveValue) => v.value?.mag?.f;

t.test(`a buffered block across a takeover (${takeoverHow()}, ${p.mode})`, async (t) => {
  // The first holder: a process to kill, or this process's own replica to stop.
  const cluster = await takeoverCluster(t, p);

  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
  await c.connect();
  const first = (await c.session()).heldBy as string;
  t.equal(
    (await c.api('POST', '/reports', { rcb: BRCB, triggers: ['dchg'], optionalFields: ['sequence-number', 'entry-id', 'buffer-overflow'] }))
      .status,
    204,
  );
  const stream = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values,sessions`, c.editor.headers);
  t.teardown(() => stream.close());
  await stream.wait(isEvent('snapshot'));
  // What the bus itself carries, for the record: an entry delivered after the first holder's last save
  // is published again by the next one; the event log, which live streams follow, keeps it once.
  const published: number[] = [];
  const raw = p.proc.bus.subscribe('events.protocol.report', (m) => {
    const report = JSON.parse(new TextDecoder().decode(m.data)) as { connectionId: string; values: LiveValue[] };
    if (report.connectionId === c.id) for (const v of report.values) if (counterOf(v) !== undefined) published.push(counterOf(v)!);
  });
  t.teardown(() => raw.unsubscribe());
  const counters = () =>
    stream.events.flatMap((e: SseEvent) =>
      'event' in e && e.event === 'value' && counterOf(e.data as LiveValue) !== undefined ? [e.data as LiveValue] : [],
    );

  // Ten entries a second, each with the next number and the device's time of it, from now to the end.
  const counter = fixtureCounter(sim);
  const tick = () => counter.next();
  let timer = setInterval(tick, 100);
  t.teardown(() => clearInterval(timer));
  await until('entries delivered by the first holder', async () => counters().length >= 15);

  // The next holder is there before the first goes; the device refuses it for a moment, so that it
  // answers from what it took up.
  await cluster.startSuccessor();
  faults.refuseAssociation = true;
  const goneAt = Date.now();
  await cluster.holderGoes();

  await until('held by the successor', async () => (await c.session()).heldBy === 'successor', 15_000);
  // Nothing new flows while the device refuses the successor: what the stream has is what was delivered.
  await new Promise((r) => setTimeout(r, 200));
  const lastBefore = counterOf(counters().at(-1)!)!;
  const values = (await (await c.api('GET', '/values')).json()) as LiveValue[];
  const measurement = values.find((v) => counterOf(v) !== undefined);
  const taken = (measurement && counterOf(measurement)) ?? 0;
  t.ok(measurement?.stale, 'the new holder answers the last values at once, stale, before it reaches the device');
  t.ok(
    taken <= lastBefore && taken >= lastBefore - 10,
    `values the first holder delivered, saved less than a second behind (${taken} of ${lastBefore})`,
  );

  delete faults.refuseAssociation;
  const before = counters().length;
  await until('entries again', async () => counters().length > before, 10_000);
  const gapMs = Date.now() - goneAt;
  await new Promise((r) => setTimeout(r, 1000));
  clearInterval(timer);
  timer = setInterval(() => undefined, 1000);
  await until('the last entry', async () => counterOf(counters().at(-1)!) === counter.last, 5000);
  await new Promise((r) => setTimeout(r, 300));

  const seen = counters().map((v) => counterOf(v)!);
  const twice = seen.filter((x, i) => seen.indexOf(x) !== i);
  const outOfOrder = seen.filter((x, i) => i > 0 && x <= seen[i - 1]);
  t.same(twice, [], `no entry twice (${seen.length} entries, ${seen.filter((x) => x > lastBefore).length} after the takeover)`);
  t.same(outOfOrder, [], 'no old entry as new: every entry after the one before it');
  t.same(
    seen,
    Array.from({ length: counter.last }, (_, i) => i + 1),
    'and none lost: 1 to the last, each once',
  );
  const times = counters().map((v) => Date.parse(v.timestamp ?? ''));
  t.ok(
    times.every((x, i) => i === 0 || x > times[i - 1]),
    'device times only go forward',
  );
  t.ok(
    counters().every((v) => v.rcb === BRCB),
    'all from the buffered block',
  );
  const warnings = stream.events.flatMap((e: SseEvent) =>
    'event' in e && e.event === 'session' ? ((e.data as { warnings: { code: string }[] }).warnings ?? []) : [],
  );
  t.same(
    warnings.filter((w) => w.code === 'buffer_overflow'),
    [],
    'no buffer_overflow warning on the live stream',
  );
  t.same((await c.session()).warnings, [], 'nor on the session');
  t.not(first, 'successor');
  t.comment(`values again ${gapMs} ms after the first holder went (lease ${takeoverSettings.SESSION_LEASE_SECONDS} s)`);
  t.comment(`${published.length - new Set(published).size} entries published twice on the bus, ${seen.length} entries on the live stream`);
  clearInterval(timer);
  t.equal((await c.api('POST', '/stop')).status, 204);
});
