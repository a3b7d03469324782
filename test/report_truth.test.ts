/**
 * Reports told truthfully, through the gateway against the simulator: attribution by block when blocks
 * share an RptID, a device that refuses a unique one, buffered blocks resuming after a reconnect and
 * reporting an overflow, last values with quality, device time, reason and sequence number, stale while
 * the device is away and dropped with their block, and data-set reads.
 */
import t from 'tap';
import { checkerOf, protocolEvents } from '@scada/contracts';
import { readFile } from 'node:fs/promises';
import { startSimulator, type Faults } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';

const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '500',
  MMS_REQUEST_TIMEOUT_MS: '2000',
});
t.teardown(() => p.stop());

const D = 'SIMLD0';
const URCB1 = `${D}/LLN0$RP$urcb01`;
const URCB2 = `${D}/LLN0$RP$urcb02`;
const BRCB = `${D}/LLN0$BR$brcb`;
type Value = {
  reference: string;
  value: unknown;
  quality: { validity: string } | null;
  timestamp: string | null;
  receivedAt: string;
  rcb: string;
  reason: string[] | null;
  seqNum: number | null;
  stale: boolean;
};
type Report = { connectionId: string; rcb: string; rptId: string; seqNum: number | null; entryId: string | null; values: Value[] };
const reports: Report[] = [];
// Each report read from its bytes, as a follower in another process reads it, and checked against the
// event's schema: the sessions publish reports without checking them on the way out.
const reportShape = checkerOf(protocolEvents.report.schema);
const unshaped: string[] = [];
p.proc.bus.subscribe('events.protocol.report', (m) => {
  const body: unknown = JSON.parse(new TextDecoder().decode(m.data));
  if (!reportShape.Check(body)) {
    const first = reportShape.Errors(body).First();
    unshaped.push(`${first?.path} ${first?.message}`);
  }
  reports.push(body as Report);
});
const toggle = (() => {
  let on = false;
  return () => sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: (on = !on) });
})();

t.test(`reports and values (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
  await c.connect();
  const values = async () => (await (await c.api('GET', '/values')).json()) as Value[];
  const mine = () => reports.filter((r) => r.connectionId === c.id);

  t.test('the device matches the SCL file: no warnings', async (t) => {
    t.same((await c.session()).warnings, []);
  });

  t.test('two blocks sending one RptID: each report is attributed to its block, and disabling one leaves the other', async (t) => {
    t.equal(String(sim.value(`${URCB1}$RptID`).value), sim.value(`${URCB2}$RptID`).value, 'the device gives both blocks one RptID');
    t.equal(
      (
        await c.api('POST', '/reports', {
          rcb: URCB1,
          triggers: ['dchg'],
          optionalFields: ['sequence-number', 'reason-for-inclusion', 'data-set-name'],
        })
      ).status,
      204,
    );
    t.equal(
      (await c.api('POST', '/reports', { rcb: URCB2, triggers: ['dchg'], optionalFields: ['sequence-number', 'reason-for-inclusion'] }))
        .status,
      204,
    );
    t.not(sim.value(`${URCB2}$RptID`).value, sim.value(`${URCB1}$RptID`).value, 'enabling the second wrote a unique RptID into it');
    let before = mine().length;
    toggle();
    await until(
      'both blocks report',
      async () =>
        new Set(
          mine()
            .slice(before)
            .map((r) => r.rcb),
        ).size === 2,
    );
    t.same(
      new Set(
        mine()
          .slice(before)
          .map((r) => r.rcb),
      ),
      new Set([URCB1, URCB2]),
      'each report names the block that sent it',
    );
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(URCB1)}`)).status, 204);
    t.notOk(
      (await values()).some((v) => v.rcb === URCB1),
      "the disabled block's values are dropped",
    );
    before = mine().length;
    toggle();
    await until('the other block reports on', async () =>
      mine()
        .slice(before)
        .some((r) => r.rcb === URCB2),
    );
    await new Promise((r) => setTimeout(r, 200));
    t.notOk(
      mine()
        .slice(before)
        .some((r) => r.rcb === URCB1),
      'the disabled block sends no more',
    );
    t.ok(
      (await values()).some((v) => v.rcb === URCB2 && v.reference === `${D}/GGIO1.Ind1.stVal[ST]`),
      'and /values follows the block still enabled',
    );
  });

  t.test('a device that refuses a unique RptID: 409 rptid_conflict naming the other block, nothing changes', async (t) => {
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(URCB2)}`)).status, 204);
    sim.setValue(`${URCB2}$RptID`, { type: 'visible-string', value: 'EventsRpt' });
    faults.fixedRptIds = true;
    t.equal((await c.api('POST', '/reports', { rcb: URCB1, triggers: ['dchg'] })).status, 204);
    const refused = await c.api('POST', '/reports', { rcb: URCB2, triggers: ['dchg'] });
    t.equal(refused.status, 409);
    t.match(await refused.json(), { code: 'rptid_conflict', rptIdOf: URCB1 });
    delete faults.fixedRptIds;
    t.same(
      ((await (await c.api('GET', '/reports')).json()) as { rcb: string }[]).map((r) => r.rcb),
      [URCB1],
      'the refused block is not kept',
    );
    t.equal(sim.value(`${URCB2}$RptEna`).value, false, 'nor enabled on the device');
    const before = mine().length;
    toggle();
    await until('the first block still reports', async () =>
      mine()
        .slice(before)
        .some((r) => r.rcb === URCB1),
    );
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(URCB1)}`)).status, 204);
  });

  t.test('values carry quality, device time, reason and sequence number', async (t) => {
    const before = mine().length;
    t.equal(
      (
        await c.api('POST', '/reports', {
          rcb: URCB1,
          triggers: ['dchg', 'qchg', 'gi'],
          generalInterrogation: true,
          optionalFields: ['sequence-number', 'reason-for-inclusion'],
        })
      ).status,
      204,
    );
    await until('the general interrogation', async () =>
      mine()
        .slice(before)
        .some((r) => r.rcb === URCB1),
    );
    const stVal = (await values()).find((v) => v.reference === `${D}/GGIO1.Ind1.stVal[ST]`);
    t.match(
      stVal,
      { rcb: URCB1, stale: false, reason: ['general-interrogation'], seqNum: Number, quality: { validity: 'good' } },
      'with the quality of its data object in the same report',
    );
    const analog = (await values()).find((v) => v.reference === `${D}/GGIO1.AnIn1[MX]`);
    t.ok(analog && analog.quality !== null, 'a data object reported whole carries its own quality');
    const next = mine().length;
    toggle();
    await until('a change report', async () =>
      mine()
        .slice(next)
        .some((r) => r.rcb === URCB1),
    );
    const changed = (await values()).find((v) => v.reference === `${D}/GGIO1.Ind1.stVal[ST]`);
    t.match(changed, { reason: ['data-change'], quality: null }, 'a report without the quality of the data object carries none');
    t.ok(changed!.seqNum! > stVal!.seqNum!, 'and the next sequence number');
  });

  t.test('the data set read: its members with values', async (t) => {
    const res = await c.api('POST', '/read', { dataSets: [`${D}/LLN0.Events`], references: [`${D}/GGIO1.AnIn1.mag.f[MX]`] });
    t.equal(res.status, 200);
    const body = (await res.json()) as { reference: string; value?: unknown; members?: { reference: string; value?: unknown }[] }[];
    t.equal(body[0].value, 1.5, 'the reference first');
    t.equal(body[1].reference, `${D}/LLN0.Events`);
    t.equal(body[1].members?.length, 4, "then the data set's four members");
    t.equal(body[1].members?.[0].reference, `${D}/GGIO1.Ind1.stVal[ST]`);
    t.equal((await c.api('POST', '/read', {})).status, 400, 'nothing to read');
    t.equal((await c.api('POST', '/read', { dataSets: [`${D}/LLN0.Nothing`] })).status, 404, 'a data set the device does not have');
  });

  t.test('a buffered block resumes after a reconnect from the last EntryID: nothing lost, nothing repeated', async (t) => {
    t.equal(
      (
        await c.api('POST', '/reports', {
          rcb: BRCB,
          triggers: ['dchg'],
          optionalFields: ['sequence-number', 'entry-id', 'buffer-overflow'],
        })
      ).status,
      204,
    );
    let before = mine().length;
    toggle();
    const first = await until('a buffered report', async () =>
      mine()
        .slice(before)
        .find((r) => r.rcb === BRCB),
    );
    t.ok(first.entryId, 'it carries its EntryID');
    faults.refuseAssociation = true;
    await sim.restart();
    await until('the session notices', async () => (await c.session()).state !== 'connected');
    t.ok(
      (await values()).every((v) => v.stale),
      'while the device is away the last values answer, stale',
    );
    before = mine().length;
    for (let i = 0; i < 3; i++) toggle();
    delete faults.refuseAssociation;
    await until('connected again', async () => (await c.session()).state === 'connected');
    const resumed = await until('the three buffered entries', async () => {
      const got = mine()
        .slice(before)
        .filter((r) => r.rcb === BRCB);
      return got.length >= 3 ? got : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const all = mine()
      .slice(before)
      .filter((r) => r.rcb === BRCB);
    t.equal(all.length, 3, 'each buffered entry once');
    t.equal(new Set(all.map((r) => r.entryId)).size, 3, 'three distinct entries');
    t.not(resumed[0].entryId, first.entryId, 'none repeated from before the outage');
    t.notOk((await values()).find((v) => v.rcb === BRCB)?.stale, 'fresh values are not stale');
  });

  t.test('a buffer overflow the device reports is a session warning', async (t) => {
    faults.bufferEntries = 2;
    faults.refuseAssociation = true;
    await sim.restart();
    await until('the session notices', async () => (await c.session()).state !== 'connected');
    for (let i = 0; i < 5; i++) toggle();
    delete faults.refuseAssociation;
    await until('the overflow warning', async () =>
      (await c.session()).warnings?.some((w) => w.code === 'buffer_overflow' && w.detail.includes(BRCB)),
    );
    delete faults.bufferEntries;
    t.pass('warned');
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(BRCB)}`)).status, 204);
    t.notOk(
      (await c.session()).warnings?.some((w) => w.code === 'buffer_overflow'),
      'disabling the block clears its warning',
    );
    t.equal(sim.value(`${BRCB}$ResvTms`).value, 0, 'and gives its reservation up');
  });

  t.test('stopped', async (t) => {
    t.equal((await c.api('POST', '/stop')).status, 204);
    await until('the association ended', async () => sim.connections() === 0);
  });
});

t.test(`a device that is not the SCL file's IED (${p.mode})`, async (t) => {
  const other = await readFile(new URL('./fixtures/scl/feeder_relay.icd', import.meta.url), 'utf8');
  const c = await liveConnection(p, sim.port, { scl: other });
  await c.connect();
  const s = await c.session();
  t.match(s.warnings, [{ code: 'model_mismatch' }]);
  t.match(s.warnings?.[0].detail, /FDR1/, 'naming the IED of the file');
  t.equal((await c.api('POST', '/stop')).status, 204);
});

t.test(`another device behind the same address: the values go (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  await c.connect();
  t.equal((await c.api('POST', '/reports', { rcb: URCB1, triggers: ['dchg'] })).status, 204);
  toggle();
  await until('a value', async () => ((await (await c.api('GET', '/values')).json()) as unknown[]).length > 0);
  const port = sim.port;
  await sim.stop();
  const swapped = await startSimulator({ model: await fixtureModel(), port, identity: { vendor: 'Other Vendor' } });
  t.teardown(() => swapped.stop());
  await until(
    'connected to the other device',
    async () => ((await c.session()).identity as { vendor?: string } | null)?.vendor === 'Other Vendor',
  );
  const kept = (await (await c.api('GET', '/values')).json()) as Value[];
  t.notOk(
    kept.some((v) => v.stale),
    'no value of the previous device is served',
  );
  t.equal((await c.api('POST', '/stop')).status, 204);
});

t.test('every report the sessions published is of its schema, read from its bytes', async (t) => {
  t.ok(reports.length > 0, 'reports were published');
  t.same(unshaped, [], 'none is refused by the schema');
});
