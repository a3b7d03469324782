/**
 * Reporting: enabling a report control block, a general interrogation, data and quality changes, the
 * fields of `RPT` in the order OptFlds selects, reservation by one association, integrity periods,
 * buffered blocks and their EntryID.
 */
import t from 'tap';
import { bitsOf, dataToPlain, type ConfirmedResponse, type MmsData } from '@scada/iec61850/wire';
import { startSimulator, type Simulator } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { eventually, RawClient } from './raw_client.ts';

const D = 'SIMLD0';
const dom = (item: string) => ({ scope: 'domain' as const, domain: D, item });
const writeOf = (item: string, data: MmsData) => ({
  service: 'write' as const,
  variables: { kind: 'variables' as const, names: [dom(item)] },
  data: [data],
});
const yes: MmsData = { type: 'boolean', value: true };
const no: MmsData = { type: 'boolean', value: false };
const writeResults = (r: ConfirmedResponse) => (r.service === 'write' ? r.results.map((x) => (x.ok ? 'ok' : x.errorText)) : []);
const values = (results: { ok: boolean; data?: MmsData }[]) => results.map((r) => (r.ok && r.data ? dataToPlain(r.data) : 'error'));

let sim: Simulator;
t.beforeEach(async () => {
  sim = await startSimulator({ model: await fixtureModel(), port: 0 });
});
t.afterEach(() => sim.stop());

t.test('enabling an URCB and setting GI sends a general-interrogation report with every member', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$RptEna', yes))), ['ok']);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$GI', yes))), ['ok']);
  const rpt = await c.report('RPT');
  const v = values(rpt.results as { ok: boolean; data?: MmsData }[]);
  // RptID, OptFlds, SqNum, TimeOfEntry, DatSet, ConfRev, inclusion, 4 references, 4 values, 4 reasons
  t.equal(v[0], 'EventsRpt');
  t.equal(v[1], '0111110010', 'URCB reports leave out buffer-overflow and entryID');
  t.equal(v[2], 0);
  t.equal(typeof (v[3] as { msOfDay: number }).msOfDay, 'number');
  t.equal(v[4], `${D}/LLN0$Events`);
  t.equal(v[5], 1);
  t.equal(v[6], '1111');
  t.same(v.slice(7, 11), [`${D}/GGIO1$ST$Ind1$stVal`, `${D}/GGIO1$ST$Ind1$q`, `${D}/GGIO1$MX$AnIn1`, `${D}/GGIO1$ST$SPCSO1$stVal`]);
  t.same(v.slice(11, 15), [false, '0000000000000', [[1.5], '0000000000000', { seconds: 0, fraction: 0, quality: 0 }], false]);
  t.same(v.slice(15), ['000001', '000001', '000001', '000001']);
  t.equal(dataToPlain(sim.value(`${D}/LLN0$RP$urcb01$SqNum`)), 1);
  await c.close();
});

t.test('a data change and a quality change each send a report of the member with its reason', async (t) => {
  const c = await RawClient.associated(sim.port);
  await c.ok(writeOf('LLN0$RP$urcb01$RptEna', yes));
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, yes);
  let v = values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]);
  t.same(v.slice(6), ['1000', `${D}/GGIO1$ST$Ind1$stVal`, true, '010000']);
  sim.setValue(`${D}/GGIO1$ST$Ind1$q`, { type: 'bit-string', value: { bitLength: 13, bytes: Uint8Array.of(0x40, 0) } });
  v = values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]);
  t.same(v.slice(6), ['0100', `${D}/GGIO1$ST$Ind1$q`, '0100000000000', '001000']);
  sim.setValue(`${D}/GGIO1$MX$AnIn1$mag$f`, { type: 'float', value: 3.25, double: false });
  v = values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]);
  t.same(v.slice(6, 8), ['0010', `${D}/GGIO1$MX$AnIn1`], 'a change below a DO member includes the whole member');
  t.equal(v[2], 2, 'SqNum counts reports');
  await c.close();
});

t.test('an unchanged value sends no report', async (t) => {
  const c = await RawClient.associated(sim.port);
  await c.ok(writeOf('LLN0$RP$urcb01$RptEna', yes));
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, no);
  await t.rejects(c.report('RPT', 150));
  await c.close();
});

t.test('an enabled URCB belongs to its association: others are refused until it closes', async (t) => {
  const a = await RawClient.associated(sim.port);
  const b = await RawClient.associated(sim.port);
  await a.ok(writeOf('LLN0$RP$urcb01$RptEna', yes));
  t.same(writeResults(await b.ok(writeOf('LLN0$RP$urcb01$RptEna', yes))), ['temporarily-unavailable']);
  t.same(
    writeResults(await a.ok(writeOf('LLN0$RP$urcb01$IntgPd', { type: 'unsigned', value: 50 }))),
    ['temporarily-unavailable'],
    'no change while enabled',
  );
  t.same(writeResults(await a.ok(writeOf('LLN0$RP$urcb01$ConfRev', { type: 'unsigned', value: 5 }))), ['object-access-denied']);
  t.same(writeResults(await b.ok(writeOf('LLN0$RP$urcb02$RptEna', yes))), ['ok'], 'the second instance is free');
  await a.close();
  t.ok(await eventually(() => dataToPlain(sim.value(`${D}/LLN0$RP$urcb01$RptEna`)) === false));
  t.same(writeResults(await b.ok(writeOf('LLN0$RP$urcb01$Resv', yes))), ['ok']);
  await b.close();
});

t.test('IntgPd with the integrity trigger sends integrity reports periodically', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$IntgPd', { type: 'unsigned', value: 40 }))), ['ok']);
  await c.ok(writeOf('LLN0$RP$urcb01$RptEna', yes));
  for (let i = 0; i < 2; i++) {
    const v = values((await c.report('RPT', 1000)).results as { ok: boolean; data?: MmsData }[]);
    t.equal(v[6], '1111');
    t.same(v.slice(15), ['000010', '000010', '000010', '000010']);
  }
  await c.ok(writeOf('LLN0$RP$urcb01$RptEna', no));
  await c.close();
});

t.test('a bad DatSet is refused and a good one raises ConfRev', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$DatSet', { type: 'visible-string', value: `${D}/LLN0$Nope` }))), [
    'object-value-invalid',
  ]);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$DatSet', { type: 'visible-string', value: `${D}/LLN0$Events` }))), ['ok']);
  t.equal(dataToPlain(sim.value(`${D}/LLN0$RP$urcb01$ConfRev`)), 2);
  t.same(writeResults(await c.ok(writeOf('LLN0$RP$urcb01$GI', { type: 'integer', value: 1 }))), ['type-inconsistent']);
  await c.close();
});

t.test('a BRCB keeps changes while disabled and sends them with EntryIDs once enabled', async (t) => {
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, yes);
  const c = await RawClient.associated(sim.port);
  await c.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  const v = values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]);
  t.equal(v[0], `${D}/LLN0$BR$brcb`, 'RptID defaults to the block reference');
  t.equal(v[1], '0100001100', 'sequence-number, buffer-overflow (an edition 2 default) and entryID');
  t.same(v.slice(2, 7), [0, true, '0000000000000001', '0001', true], 'enabled without an EntryID: from the oldest entry, BufOvfl set');
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, no);
  const next = values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]);
  t.same(next.slice(2, 5), [1, false, '0000000000000002']);
  t.equal(dataToPlain(sim.value(`${D}/LLN0$BR$brcb$EntryID`)), '0000000000000002');
  await c.close();
});

t.test('a client that writes the EntryID it last received resumes after it, with the values of each entry as they were', async (t) => {
  const entry = (n: number): MmsData => ({ type: 'octet-string', value: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, n) });
  const next = async (c: RawClient) => values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]).slice(3, 7);
  const first = await RawClient.associated(sim.port);
  await first.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, yes);
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, no);
  t.same(await next(first), [true, '0000000000000001', '0001', true]);
  t.same(await next(first), [false, '0000000000000002', '0001', false]);
  await first.close();
  await eventually(() => sim.connections() === 0);
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, yes);
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, no);

  const resumed = await RawClient.associated(sim.port);
  t.same(writeResults(await resumed.ok(writeOf('LLN0$BR$brcb$EntryID', entry(2)))), ['ok'], 'entry 2 is in the buffer');
  await resumed.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  t.same(await next(resumed), [false, '0000000000000003', '0001', true], 'entry 3, with its value then, no overflow');
  t.same(await next(resumed), [false, '0000000000000004', '0001', false]);
  await t.rejects(resumed.report('RPT', 150), 'and nothing else');
  t.same(writeResults(await resumed.ok(writeOf('LLN0$BR$brcb$EntryID', entry(1)))), ['temporarily-unavailable'], 'not while enabled');
  await resumed.ok(writeOf('LLN0$BR$brcb$RptEna', no));
  t.same(writeResults(await resumed.ok(writeOf('LLN0$BR$brcb$EntryID', entry(9)))), ['object-value-invalid'], 'an entry it never had');
  await resumed.close();
  await eventually(() => sim.connections() === 0);

  const lost = await RawClient.associated(sim.port);
  await lost.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  t.same(await next(lost), [true, '0000000000000001', '0001', true], 'without an EntryID everything comes again, flagged');
  for (const n of [2, 3, 4]) t.same((await next(lost))[1], `000000000000000${n}`);
  await lost.close();
});

t.test('a BRCB past its capacity drops its oldest entries and says so once', async (t) => {
  const small = await startSimulator({ model: await fixtureModel(), port: 0, faults: { bufferEntries: 2 } });
  t.teardown(() => small.stop());
  for (const v of [yes, no, yes]) small.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, v);
  const c = await RawClient.associated(small.port);
  t.same(
    writeResults(await c.ok(writeOf('LLN0$BR$brcb$EntryID', { type: 'octet-string', value: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 1) }))),
    ['object-value-invalid'],
    'entry 1 is gone',
  );
  await c.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  const next = async () => values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]).slice(3, 5);
  t.same(await next(), [true, '0000000000000002'], 'the oldest kept, BufOvfl set');
  t.same(await next(), [false, '0000000000000003'], 'then clear');
  await c.close();
});

t.test('a BRCB keeps its newest entries and resumes after one of them however many went before', async (t) => {
  const small = await startSimulator({ model: await fixtureModel(), port: 0, faults: { bufferEntries: 3 } });
  t.teardown(() => small.stop());
  // Thousands of changes into a buffer of three: the oldest keep going, the last three stay.
  for (let n = 0; n < 2500; n++) small.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, n % 2 === 0 ? yes : no);
  const entryOf = (n: number) => ({ type: 'octet-string', value: Uint8Array.of(0, 0, 0, 0, 0, 0, n >> 8, n & 255) }) as const;
  const hex = (n: number) => n.toString(16).padStart(16, '0');
  const c = await RawClient.associated(small.port);
  t.same(writeResults(await c.ok(writeOf('LLN0$BR$brcb$EntryID', entryOf(2497)))), ['object-value-invalid'], 'entry 2497 is gone');
  t.same(writeResults(await c.ok(writeOf('LLN0$BR$brcb$EntryID', entryOf(2501)))), ['object-value-invalid'], 'entry 2501 never was');
  await c.ok(writeOf('LLN0$BR$brcb$EntryID', entryOf(2498)));
  await c.ok(writeOf('LLN0$BR$brcb$RptEna', yes));
  const next = async () => values((await c.report('RPT')).results as { ok: boolean; data?: MmsData }[]).slice(3, 5);
  t.same(await next(), [false, hex(2499)], 'resumed after 2498, no overflow');
  t.same(await next(), [false, hex(2500)], 'then the newest');
  await t.rejects(c.report('RPT', 150), 'and nothing else');
  small.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, yes);
  t.same(await next(), [false, hex(2501)], 'a new change is sent at once');
  await c.close();
});

t.test('OptFlds bits follow IEC 61850-8-1 numbering', async (t) => {
  const optFlds = sim.value(`${D}/LLN0$RP$urcb01$OptFlds`);
  t.equal(optFlds.type === 'bit-string' && bitsOf(optFlds.value).length, 10);
});
