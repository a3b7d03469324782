/**
 * The IEC 61850 layer against a fake device: the captured answers where the capture has them (reads, writes,
 * report enabling, the reports after GI), a model of the same device for types, names and data sets.
 */
import t from 'tap';
import { Iec61850Device } from '../../src/client/device.ts';
import type { Report } from '../../src/client/reports.ts';
import { bitStringFromBits, utcTimeFromMs } from '../../src/mms/ber_values.ts';
import type { MmsData } from '../../src/mms/mms_data.ts';
import { haveCaptures } from '../mms/helpers.ts';
import { captureReplay, requestKey, startFakeServer, until, type Exchange, type FakeServerOptions } from './fake_server.ts';
import { EVENTS, LD, typeAt } from './model.ts';
import {
  confirmedError,
  listAttributesResponse,
  mmsFrame,
  nameListResponse,
  readResponse,
  reportPdu,
  typeResponse,
  withInvokeId,
  writeResponse,
} from './pdus.ts';

const skipCaptures = haveCaptures ? false : 'the shared captures are absent';
type Teardown = { teardown(fn: () => unknown): void };

/** Captured answers first, then the model; writes succeed unless `writes` says otherwise. */
function deviceHandler(extra: (x: Exchange) => Uint8Array[] | Uint8Array | void | 'next' = () => 'next') {
  const replay = haveCaptures ? captureReplay() : [];
  return (x: Exchange): Uint8Array[] | Uint8Array | void => {
    const own = extra(x);
    if (own !== 'next') return own;
    const entry = replay.find((e) => e.request === requestKey(x.request));
    if (entry) return void x.conn.sendFrames(mmsFrame(withInvokeId(entry.response, x.invokeId)), ...entry.then);
    const r = x.request;
    if (r.service === 'getNameList') {
      const names =
        r.objectClass === 'domain'
          ? [LD]
          : r.objectClass === 'namedVariableList'
            ? ['LLN0$Events']
            : ['GGIO1', 'GGIO1$MX', 'LLN0', 'LLN0$RP'];
      return nameListResponse(x.invokeId, names, false);
    }
    if (r.service === 'getVariableAccessAttributes') {
      const type = r.name.scope === 'domain' ? typeAt(r.name.item) : undefined;
      return type ? typeResponse(x.invokeId, type) : confirmedError(x.invokeId, 7, 2);
    }
    if (r.service === 'getNamedVariableListAttributes')
      return r.name.scope === 'domain' && r.name.item === 'LLN0$Events'
        ? listAttributesResponse(x.invokeId, EVENTS)
        : confirmedError(x.invokeId, 7, 2);
    if (r.service === 'write')
      return writeResponse(
        x.invokeId,
        r.data.map(() => true),
      );
    if (r.service === 'read' && r.variables.kind === 'variables')
      return readResponse(
        x.invokeId,
        r.variables.names.map(() => ({ error: 10 })),
      );
    return confirmedError(x.invokeId, 7, 2);
  };
}

async function deviceFor(t: Teardown, o: FakeServerOptions = {}) {
  const server = await startFakeServer({ handle: deviceHandler(), ...o });
  const device = await Iec61850Device.connect({ host: '127.0.0.1', port: server.port, connectTimeoutMs: 1000, requestTimeoutMs: 1000 });
  t.teardown(async () => {
    device.close();
    await server.close();
  });
  return { server, device };
}

t.test('browse builds LD → LN → DO → DA with types, report blocks and data sets', async (t) => {
  const { device } = await deviceFor(t);
  const model = await device.browse();
  const ld = model.logicalDevices[0];
  t.equal(ld.name, LD);
  t.same(ld.dataSets, [`${LD}/LLN0$Events`]);
  t.same(
    ld.logicalNodes.map((n) => n.name),
    ['GGIO1', 'LLN0'],
  );
  const ggio = ld.logicalNodes[0];
  const spc = ggio.dataObjects.find((d) => d.name === 'SPCSO1');
  t.same(spc?.fcs, ['ST', 'CO', 'CF']);
  t.match(
    spc?.attributes.find((a) => a.name === 'q'),
    { fc: 'ST', type: 'Quality', ref: `${LD}/GGIO1.SPCSO1.q[ST]`, mmsRef: `${LD}/GGIO1$ST$SPCSO1$q` },
  );
  const anIn = ggio.dataObjects.find((d) => d.name === 'AnIn1');
  t.match(anIn?.attributes[0], {
    name: 'mag',
    type: 'Struct',
    children: [{ name: 'f', type: 'FLOAT32', ref: `${LD}/GGIO1.AnIn1.mag.f[MX]` }],
  });
  t.same(ld.logicalNodes[1].reportControls, [{ name: 'EventsRCB01', buffered: false, ref: `${LD}/LLN0$RP$EventsRCB01` }]);
});

t.test('readValues takes both notations and answers JSON or the access error', { skip: skipCaptures }, async (t) => {
  const { device } = await deviceFor(t);
  const [f] = await device.readValues([`${LD}/GGIO1.AnIn1.mag.f[MX]`]);
  t.equal(f.ref, `${LD}/GGIO1.AnIn1.mag.f[MX]`);
  t.ok(typeof f.value === 'number' && Math.abs(f.value + 0.6391589) < 1e-6);
  const [same] = await device.readValues([`${LD}/GGIO1$MX$AnIn1$mag$f`]);
  t.equal(same.value, f.value);
  t.same(await device.readValues([`${LD}/GGIO1.Nothing.x[ST]`]), [
    { ref: `${LD}/GGIO1.Nothing.x[ST]`, value: null, error: 'object-non-existent' },
  ]);
  await t.rejects(device.readValues(['no-slash']), { code: 'bad_reference' });
});

t.test('a structured read comes back keyed by component with quality and time decoded', async (t) => {
  const ms = Date.UTC(2024, 1, 2, 3, 4, 5);
  const mv: MmsData = {
    type: 'structure',
    value: [
      { type: 'structure', value: [{ type: 'float', value: 7.5, double: false }] },
      { type: 'bit-string', value: bitStringFromBits([false, true, ...new Array(11).fill(false)]) },
      { type: 'utc-time', value: utcTimeFromMs(ms, 0x0a) },
    ],
  };
  const { device } = await deviceFor(t, {
    handle: deviceHandler((x) => (x.request.service === 'read' ? readResponse(x.invokeId, [mv]) : 'next')),
  });
  const [v] = await device.readValues([`${LD}/GGIO1.AnIn1[MX]`]);
  t.same(v.value, {
    mag: { f: 7.5 },
    q: { validity: 'invalid', flags: [], source: 'process' },
    t: { time: '2024-02-02T03:04:05.000Z', flags: [], accuracy: 10 },
  });
});

t.test('write converts JSON by the variable type; a wrong type fails before anything is sent', { skip: skipCaptures }, async (t) => {
  const { device, server } = await deviceFor(t);
  await device.write(`${LD}/GGIO1.NamPlt.vendor[DC]`, 'libiec61850.com');
  await device.typeOf(`${LD}/GGIO1.AnIn1.mag.f[MX]`);
  const sentBefore = server.connections[0].received.length;
  await t.rejects(device.write(`${LD}/GGIO1.NamPlt.vendor[DC]`, 42), {
    code: 'bad_value',
    message: /NamPlt\.vendor\[DC\]: expected a string/,
  });
  await t.rejects(
    device.write(`${LD}/GGIO1.AnIn1.mag.f[MX]`, 2),
    { code: 'read_only', message: /MX, which a client cannot write/ },
    'a measurement is read-only by its functional constraint',
  );
  t.equal(server.connections[0].received.length, sentBefore, 'the refused values were never sent');
  await t.rejects(device.write(`${LD}/GGIO1.Nothing.x[SP]`, 1), { name: 'MmsError', message: /access: object-non-existent/ });
});

t.test('readDataSet gives the members with their values', { skip: skipCaptures }, async (t) => {
  const { device } = await deviceFor(t);
  const ds = await device.readDataSet(`${LD}/LLN0.Events`);
  t.same(ds, {
    ref: `${LD}/LLN0$Events`,
    members: [
      { ref: `${LD}/GGIO1.SPCSO1.stVal[ST]`, value: true },
      { ref: `${LD}/GGIO1.SPCSO2.stVal[ST]`, value: false },
      { ref: `${LD}/GGIO1.SPCSO3.stVal[ST]`, value: true },
      { ref: `${LD}/GGIO1.SPCSO4.stVal[ST]`, value: false },
    ],
  });
});

t.test(
  'enableReport reserves, sets TrgOps/IntgPd with RptEna, asks GI, and the captured reports decode',
  { skip: skipCaptures },
  async (t) => {
    const { device, server } = await deviceFor(t);
    const reports: Report[] = [];
    const errors: Error[] = [];
    device.on('report', (r) => reports.push(r));
    device.on('reportError', (e) => errors.push(e));
    const sub = await device.enableReport(`${LD}/LLN0.EventsRCB01[RP]`, {
      trgOps: { dataUpdate: true, integrity: true, gi: true },
      intgPd: 5000,
      gi: true,
    });
    t.match(sub, { rcb: `${LD}/LLN0$RP$EventsRCB01`, rptId: 'Events1', buffered: false, dataSet: `${LD}/LLN0$Events` });
    t.equal(sub.members.length, 4);
    const writes = server.connections[0].received.flatMap((p) =>
      p.pdu === 'confirmed-request' && p.request.service === 'write'
        ? [p.request.variables.kind === 'variables' ? p.request.variables.names.map((n) => n.item.split('$').at(-1)) : []]
        : [],
    );
    t.same(writes, [['Resv'], ['TrgOps', 'IntgPd', 'RptEna'], ['GI']]);
    await until(() => reports.length === 2);
    t.same(errors, []);
    t.match(reports[0], { rcb: `${LD}/LLN0$RP$EventsRCB01`, rptId: 'Events1', seqNum: 0, dataSet: `${LD}/LLN0$Events`, confRev: 1 });
    t.match(reports[0].timeOfEntry, /^\d{4}-\d\d-\d\dT/);
    t.same(reports[0].values, [
      { ref: `${LD}/GGIO1.SPCSO1.stVal[ST]`, value: true, reason: ['gi'] },
      { ref: `${LD}/GGIO1.SPCSO2.stVal[ST]`, value: false, reason: ['gi'] },
      { ref: `${LD}/GGIO1.SPCSO3.stVal[ST]`, value: true, reason: ['gi'] },
      { ref: `${LD}/GGIO1.SPCSO4.stVal[ST]`, value: false, reason: ['gi'] },
    ]);
    t.same(
      reports[1].values.map((v) => v.reason),
      [['integrity'], ['integrity'], ['integrity'], ['integrity']],
    );
    t.equal(reports[1].seqNum, 1);
    await device.disableReport(`${LD}/LLN0$RP$EventsRCB01`);
    t.same(device.subscriptions, []);
  },
);

t.test('a report nobody enabled, or for another data set, is a reportError event, not a crash', { skip: skipCaptures }, async (t) => {
  const { device, server } = await deviceFor(t);
  const errors: Error[] = [];
  device.on('reportError', (e) => errors.push(e));
  await device.enableReport(`${LD}/LLN0$RP$EventsRCB01`);
  const vis = (value: string): MmsData => ({ type: 'visible-string', value });
  const optFlds: MmsData = {
    type: 'bit-string',
    value: bitStringFromBits([false, false, false, false, true, false, false, false, false, false]),
  };
  const incl: MmsData = { type: 'bit-string', value: bitStringFromBits([true]) };
  const rpt = { scope: 'vmd' as const, item: 'RPT' };
  server.connections[0].send(reportPdu(rpt, [vis('Unknown1'), optFlds, vis(`${LD}/LLN0$Other`), incl, { type: 'boolean', value: true }]));
  server.connections[0].send(reportPdu(rpt, [vis('Events1'), optFlds, vis(`${LD}/LLN0$Other`), incl, { type: 'boolean', value: true }]));
  server.connections[0].send(reportPdu(rpt, [vis('Events1'), optFlds, vis(`${LD}/LLN0$Events`), incl]));
  await until(() => errors.length === 3);
  t.match(errors[0], { code: 'unknown_report', message: /'Unknown1' belongs to no report control block/ });
  t.match(errors[1], { code: 'unknown_report', message: /LLN0\$Other, not the announced/ });
  t.match(errors[2], { code: 'bad_report', message: /inclusion has 1 bits, data set .* has 4 members/ });
  t.same((await device.readValues([`${LD}/GGIO1.AnIn1.mag.f[MX]`])).length, 1, 'the association is still fine');
});
