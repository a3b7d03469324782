/**
 * Controls by ctlModel: direct operate, select-before-operate by reading SBO, SBOw and CommandTermination
 * with enhanced security, Cancel, and refusals answered with a write error and LastApplError.
 */
import t from 'tap';
import { dataToPlain, utcTimeFromMs, type ConfirmedResponse, type MmsData } from '@scada/iec61850/wire';
import type { ControlNotice } from '../src/controls.ts';
import { startSimulator, type Simulator } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { RawClient } from './raw_client.ts';

const D = 'SIMLD0';
const dom = (item: string) => ({ scope: 'domain' as const, domain: D, item });
const writeOf = (item: string, data: MmsData) => ({
  service: 'write' as const,
  variables: { kind: 'variables' as const, names: [dom(item)] },
  data: [data],
});
const readOf = (item: string) => ({
  service: 'read' as const,
  specificationWithResult: false,
  variables: { kind: 'variables' as const, names: [dom(item)] },
});
const writeResults = (r: ConfirmedResponse) => (r.service === 'write' ? r.results.map((x) => (x.ok ? 'ok' : x.errorText)) : []);
const origin: MmsData = {
  type: 'structure',
  value: [
    { type: 'integer', value: 3 },
    { type: 'octet-string', value: new TextEncoder().encode('test') },
  ],
};

/** An SPCOperate value: ctlVal, origin, ctlNum, T, Test, Check. */
function oper(ctlVal: boolean, ctlNum = 1): MmsData {
  return {
    type: 'structure',
    value: [
      { type: 'boolean', value: ctlVal },
      origin,
      { type: 'unsigned', value: ctlNum },
      { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      { type: 'boolean', value: false },
      { type: 'bit-string', value: { bitLength: 2, bytes: Uint8Array.of(0) } },
    ],
  };
}

/** An SPCCancel value: the SPCOperate fields without Check. */
function cancel(): MmsData {
  const v = oper(false);
  return { type: 'structure', value: v.type === 'structure' ? v.value.slice(0, 5) : [] };
}

const stVal = (sim: Simulator, obj: string) => dataToPlain(sim.value(`${D}/GGIO1$ST$${obj}$stVal`));

let sim: Simulator;
let notices: ControlNotice[];
t.beforeEach(async () => {
  sim = await startSimulator({ model: await fixtureModel(), port: 0 });
  notices = [];
  sim.on('control', (n) => notices.push(n));
});
t.afterEach(() => sim.stop());

t.test('direct-with-normal-security: Oper sets stVal at once', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO1$Oper', oper(true)))), ['ok']);
  t.equal(stVal(sim, 'SPCSO1'), true);
  t.same(
    notices.map((n) => [n.action, n.accepted, n.reference]),
    [['operate', true, `${D}/GGIO1$CO$SPCSO1`]],
  );
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO1$Oper', { type: 'boolean', value: true }))), ['type-inconsistent']);
  await c.close();
});

t.test(
  'sbo-with-normal-security: reading SBO selects, Oper then operates once; without a selection it is refused with LastApplError',
  async (t) => {
    const c = await RawClient.associated(sim.port);
    t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO2$Oper', oper(true)))), ['object-access-denied']);
    const lae = await c.report('LastApplError');
    const [cntrlObj, error, or, ctlNum, addCause] = dataToPlain(
      lae.results[0].ok ? lae.results[0].data : { type: 'boolean', value: false },
    ) as unknown[];
    t.same([cntrlObj, error, ctlNum, addCause], [`${D}/GGIO1$CO$SPCSO2$Oper`, 1, 1, 18]);
    t.same(or, [3, '74657374']);
    const selected = await c.ok(readOf('GGIO1$CO$SPCSO2$SBO'));
    t.same(selected.service === 'read' && selected.results.map((r) => (r.ok ? dataToPlain(r.data) : r.errorText)), [
      `${D}/GGIO1$CO$SPCSO2`,
    ]);
    t.equal(dataToPlain(sim.value(`${D}/GGIO1$ST$SPCSO2$stSeld`)), true);
    const other = await RawClient.associated(sim.port);
    const refused = await other.ok(readOf('GGIO1$CO$SPCSO2$SBO'));
    t.same(
      refused.service === 'read' && refused.results.map((r) => (r.ok ? dataToPlain(r.data) : r.errorText)),
      [''],
      'a second client cannot select',
    );
    await other.close();
    t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO2$Oper', oper(true)))), ['ok']);
    t.equal(stVal(sim, 'SPCSO2'), true);
    t.equal(dataToPlain(sim.value(`${D}/GGIO1$ST$SPCSO2$stSeld`)), false, 'operate-once deselects');
    t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO2$Oper', oper(false)))), ['object-access-denied']);
    await c.close();
  },
);

t.test('sbo-with-normal-security: Cancel drops the selection', async (t) => {
  const c = await RawClient.associated(sim.port);
  await c.ok(readOf('GGIO1$CO$SPCSO2$SBO'));
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO2$Cancel', cancel()))), ['ok']);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO2$Oper', oper(true)))), ['object-access-denied']);
  t.same(
    notices.map((n) => n.action),
    ['select', 'cancel', 'operate'],
  );
  await c.close();
});

t.test('direct-with-enhanced-security: Oper is answered, then a CommandTermination carries the Oper value', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO3$Oper', oper(true, 9)))), ['ok']);
  const term = await c.report('GGIO1$CO$SPCSO3$Oper');
  t.equal(term.results.length, 1);
  t.equal((dataToPlain(term.results[0].ok ? term.results[0].data : { type: 'boolean', value: false }) as unknown[])[2], 9);
  t.equal(stVal(sim, 'SPCSO3'), true);
  await c.close();
});

t.test('sbo-with-enhanced-security: SBOw selects, Oper operates and terminates; Oper without SBOw is refused', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO4$Oper', oper(true)))), ['object-access-denied']);
  await c.report('LastApplError');
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO4$SBOw', oper(true)))), ['ok']);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO4$Oper', oper(true)))), ['ok']);
  await c.report('GGIO1$CO$SPCSO4$Oper');
  t.equal(stVal(sim, 'SPCSO4'), true);
  t.same(
    notices.map((n) => [n.action, n.accepted]),
    [
      ['operate', false],
      ['select-with-value', true],
      ['operate', true],
    ],
  );
  await c.close();
});

t.test('status-only refuses every operate', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO5$Oper', oper(true)))), ['object-access-denied']);
  const lae = await c.report('LastApplError');
  t.equal(
    (dataToPlain(lae.results[0].ok ? lae.results[0].data : { type: 'boolean', value: false }) as unknown[])[4],
    1,
    'AddCause not-supported',
  );
  t.equal(stVal(sim, 'SPCSO5'), false);
  await c.close();
});

t.test('faults.refuseControls refuses even a direct control, with LastApplError blocked-by-process', async (t) => {
  await sim.stop();
  sim = await startSimulator({ model: await fixtureModel(), port: 0, faults: { refuseControls: true } });
  const c = await RawClient.associated(sim.port);
  t.same(writeResults(await c.ok(writeOf('GGIO1$CO$SPCSO1$Oper', oper(true)))), ['object-access-denied']);
  const lae = await c.report('LastApplError');
  t.equal((dataToPlain(lae.results[0].ok ? lae.results[0].data : { type: 'boolean', value: false }) as unknown[])[4], 9);
  t.equal(stVal(sim, 'SPCSO1'), false);
  await c.close();
});

t.test('an operate reports the new stVal through an enabled report control block', async (t) => {
  const c = await RawClient.associated(sim.port);
  await c.ok(writeOf('LLN0$RP$urcb01$RptEna', { type: 'boolean', value: true }));
  await c.ok(writeOf('GGIO1$CO$SPCSO1$Oper', oper(true)));
  const rpt = await c.report('RPT');
  const v = rpt.results.map((r) => (r.ok ? dataToPlain(r.data) : r.errorText));
  t.same(v.slice(6, 9), ['0001', `${D}/GGIO1$ST$SPCSO1$stVal`, true]);
  await c.close();
});
