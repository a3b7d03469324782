/**
 * Controls against a fake device whose four SPCs use the four control models: direct and SBO with normal
 * security, direct and SBO with enhanced security (CommandTermination), and refusals explained by
 * LastApplError.
 */
import t from 'tap';
import { Iec61850Device } from '../../src/client/device.ts';
import type { MmsData } from '../../src/mms/mms_data.ts';
import type { ConfirmedRequest } from '../../src/mms/mms_services.ts';
import { startFakeServer, type Exchange } from './fake_server.ts';
import { EVENTS, LD, typeAt } from './model.ts';
import { confirmedError, listAttributesResponse, readResponse, typeResponse, variablesReportPdu, writeResponse } from './pdus.ts';

type Teardown = { teardown(fn: () => unknown): void };
const MODELS: Record<string, number> = { SPCSO1: 1, SPCSO2: 2, SPCSO3: 3, SPCSO4: 4 };

const lastApplError = (obj: string, addCause: number, ctlNum: number): MmsData => ({
  type: 'structure',
  value: [
    { type: 'visible-string', value: obj },
    { type: 'integer', value: 1 },
    {
      type: 'structure',
      value: [
        { type: 'integer', value: 3 },
        { type: 'octet-string', value: new Uint8Array(0) },
      ],
    },
    { type: 'unsigned', value: ctlNum },
    { type: 'integer', value: addCause },
  ],
});

type Behaviour = {
  refuseOper?: number;
  negativeTermination?: number;
  noTermination?: boolean;
  /** Each Oper is answered with the CommandTermination of the Oper before it (the first with none). */
  staleTermination?: boolean;
};

function controlHandler(b: Behaviour) {
  let previousOper: { name: ConfirmedRequest & { service: 'write' } } | undefined;
  return (x: Exchange) => {
    const r: ConfirmedRequest = x.request;
    if (r.service === 'getVariableAccessAttributes' && r.name.scope === 'domain') {
      const type = typeAt(r.name.item);
      return type ? typeResponse(x.invokeId, type) : confirmedError(x.invokeId, 7, 2);
    }
    if (r.service === 'getNamedVariableListAttributes') return listAttributesResponse(x.invokeId, EVENTS);
    if (r.service === 'read' && r.variables.kind === 'variables') {
      const item = r.variables.names[0].scope === 'domain' ? r.variables.names[0].item : '';
      const [, , dobj, attr] = item.split('$');
      if (attr === 'ctlModel') return readResponse(x.invokeId, [{ type: 'integer', value: MODELS[dobj] }]);
      if (attr === 'SBO') return readResponse(x.invokeId, [{ type: 'visible-string', value: `${LD}/GGIO1$CO$${dobj}` }]);
    }
    if (r.service !== 'write' || r.variables.kind !== 'variables') return confirmedError(x.invokeId, 7, 2);
    const name = r.variables.names[0];
    const item = name.scope === 'domain' ? name.item : '';
    const obj = `${LD}/${item.split('$').slice(0, 3).join('$')}`;
    const ctlNum = r.data[0].type === 'structure' ? Number(r.data[0].value[2].value) : 0;
    if (b.refuseOper !== undefined && item.endsWith('$Oper')) {
      return [
        variablesReportPdu([{ scope: 'vmd', item: 'LastApplError' }], [lastApplError(obj, b.refuseOper, ctlNum)]),
        writeResponse(x.invokeId, [3]),
      ];
    }
    const answer = [writeResponse(x.invokeId, [true])];
    if (item.endsWith('$Oper') && b.staleTermination) {
      const before = previousOper?.name;
      previousOper = { name: r };
      if (before?.variables.kind === 'variables') answer.push(variablesReportPdu([before.variables.names[0]], [before.data[0]]));
      return answer;
    }
    if (item.endsWith('$Oper') && MODELS[item.split('$')[2]] >= 3 && !b.noTermination) {
      if (b.negativeTermination !== undefined)
        answer.push(
          variablesReportPdu(
            [{ scope: 'vmd', item: 'LastApplError' }, name],
            [lastApplError(obj, b.negativeTermination, ctlNum), r.data[0]],
          ),
        );
      else answer.push(variablesReportPdu([name], [r.data[0]]));
    }
    return answer;
  };
}

async function deviceFor(t: Teardown, b: Behaviour = {}) {
  const server = await startFakeServer({ handle: controlHandler(b) });
  const device = await Iec61850Device.connect({
    host: '127.0.0.1',
    port: server.port,
    requestTimeoutMs: 1000,
    origin: { orCat: 'station-control', orIdent: 'scada-1' },
  });
  t.teardown(async () => {
    device.close();
    await server.close();
  });
  const writes = () =>
    server.connections[0].received.flatMap((p) =>
      p.pdu === 'confirmed-request' &&
      p.request.service === 'write' &&
      p.request.variables.kind === 'variables' &&
      p.request.variables.names[0].scope === 'domain'
        ? [{ item: p.request.variables.names[0].item, data: p.request.data[0] }]
        : [],
    );
  return { server, device, writes };
}

const fields = (d: MmsData) =>
  d.type === 'structure' ? d.value.map((v) => (v.type === 'structure' ? v.value.map((w) => w.value) : v.value)) : [];

t.test('direct with normal security writes Oper with ctlVal, origin, ctlNum, T, Test and Check', async (t) => {
  const { device, writes } = await deviceFor(t);
  await device.operate(`${LD}/GGIO1.SPCSO1`, true, { model: 'direct-with-normal-security', check: { interlockCheck: true } });
  const [w] = writes();
  t.equal(w.item, 'GGIO1$CO$SPCSO1$Oper');
  const [ctlVal, origin, ctlNum, , test, check] = fields(w.data);
  t.equal(ctlVal, true);
  t.same(origin, [2, Buffer.from('scada-1')]);
  t.equal(ctlNum, 0);
  t.equal(test, false);
  t.same(check, { bitLength: 2, bytes: Uint8Array.of(0x40) });
});

t.test('without a model the ctlModel is read; ctlNum increments per control', async (t) => {
  const { device, writes } = await deviceFor(t);
  await device.operate(`${LD}/GGIO1.SPCSO1[CO]`, true);
  await device.operate(`${LD}/GGIO1$CO$SPCSO1`, false, { test: true, origin: { orCat: 7, orIdent: 'x' } });
  const [a, b] = writes().map((w) => fields(w.data));
  t.equal(a[2], 0);
  t.equal(b[2], 1);
  t.equal(b[4], true);
  t.same(b[1], [7, Buffer.from('x')]);
});

t.test('SBO with normal security reads SBO, then writes Oper', async (t) => {
  const { device, server, writes } = await deviceFor(t);
  await device.operate(`${LD}/GGIO1.SPCSO2`, true);
  const reads = server.connections[0].received.flatMap((p) =>
    p.pdu === 'confirmed-request' && p.request.service === 'read' && p.request.variables.kind === 'variables'
      ? p.request.variables.names.map((n) => n.item)
      : [],
  );
  t.same(reads, ['GGIO1$CF$SPCSO2$ctlModel', 'GGIO1$CO$SPCSO2$SBO']);
  t.same(
    writes().map((w) => w.item),
    ['GGIO1$CO$SPCSO2$Oper'],
  );
});

t.test('direct with enhanced security waits for the CommandTermination', async (t) => {
  const { device, writes } = await deviceFor(t);
  await device.operate(`${LD}/GGIO1.SPCSO3`, true);
  t.same(
    writes().map((w) => w.item),
    ['GGIO1$CO$SPCSO3$Oper'],
  );
});

t.test('SBO with enhanced security writes SBOw then Oper with the same ctlNum', async (t) => {
  const { device, writes } = await deviceFor(t);
  await device.operate(`${LD}/GGIO1.SPCSO4`, false);
  const w = writes();
  t.same(
    w.map((x) => x.item),
    ['GGIO1$CO$SPCSO4$SBOw', 'GGIO1$CO$SPCSO4$Oper'],
  );
  t.equal(fields(w[0].data)[2], fields(w[1].data)[2]);
});

t.test('a negative CommandTermination rejects with the AddCause in words', async (t) => {
  const { device } = await deviceFor(t, { negativeTermination: 16 });
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO3`, true), {
    code: 'control_failed',
    message: `operate of ${LD}/GGIO1$CO$SPCSO3 ended by a negative CommandTermination: Time-limit-over (Unknown)`,
  });
});

t.test('a refused Oper is explained by the LastApplError sent before the write response', async (t) => {
  const { device } = await deviceFor(t, { refuseOper: 10 });
  const error = await device.operate(`${LD}/GGIO1.SPCSO1`, true).catch((e: unknown) => e);
  t.match(error, {
    code: 'control_failed',
    message: /Blocked-by-interlocking/,
    details: { lastApplError: { addCause: 10, cntrlObj: `${LD}/GGIO1$CO$SPCSO1` } },
  });
});

t.test('no CommandTermination within the wait is a termination_timeout', async (t) => {
  const { device } = await deviceFor(t, { noTermination: true });
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO3`, true, { terminationTimeoutMs: 50 }), { code: 'termination_timeout' });
});

t.test('a late CommandTermination of an earlier control is not taken by the next control of the same object', async (t) => {
  const { device } = await deviceFor(t, { staleTermination: true });
  // the first gets no termination in time; the second's Oper is answered with the first's termination
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO3`, true, { terminationTimeoutMs: 50 }), { code: 'termination_timeout' });
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO3`, false, { terminationTimeoutMs: 200 }), { code: 'termination_timeout' });
  // nor does the third take the second's
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO3`, true, { terminationTimeoutMs: 200 }), { code: 'termination_timeout' });
});

t.test('a ctlVal of the wrong type is refused before anything is written; cancel writes Cancel', async (t) => {
  const { device, writes } = await deviceFor(t);
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO1`, 'on', { model: 'direct-with-normal-security' }), {
    code: 'bad_value',
    message: /Oper\.ctlVal: expected true or false/,
  });
  await t.rejects(device.operate(`${LD}/GGIO1.SPCSO1`, true, { model: 'status-only' }), { code: 'unsupported' });
  t.same(writes(), []);
  await device.cancel(`${LD}/GGIO1.SPCSO4`, true);
  t.same(
    writes().map((w) => w.item),
    ['GGIO1$CO$SPCSO4$Cancel'],
  );
});
