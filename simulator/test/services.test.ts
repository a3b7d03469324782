/**
 * The simulator answers the services an IEC 61850 client uses, over a real socket: association, Identify,
 * GetNameList paging, GetVariableAccessAttributes, reads at every level, data sets, type-checked writes,
 * and TCP framing of partial and coalesced segments.
 */
import t from 'tap';
import {
  buildAssociationRequest,
  buildConnectionRequest,
  buildMmsFrames,
  buildReleaseRequest,
  concat,
  dataToPlain,
  type ConfirmedResponse,
  type MmsData,
} from '@scada/iec61850/wire';
import { MmsClient } from '@scada/iec61850';
import { startSimulator, type Simulator } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { eventually, RawClient } from './raw_client.ts';

const D = 'SIMLD0';
const dom = (item: string) => ({ scope: 'domain' as const, domain: D, item });
const readOf = (...items: string[]) => ({
  service: 'read' as const,
  specificationWithResult: false,
  variables: { kind: 'variables' as const, names: items.map(dom) },
});
const writeOf = (item: string, data: MmsData) => ({
  service: 'write' as const,
  variables: { kind: 'variables' as const, names: [dom(item)] },
  data: [data],
});
const plain = (r: ConfirmedResponse) =>
  r.service === 'read'
    ? r.results.map((x) => (x.ok ? dataToPlain(x.data) : x.errorText))
    : r.service === 'write'
      ? r.results.map((x) => (x.ok ? 'ok' : x.errorText))
      : r;

let sim: Simulator;
t.before(async () => {
  sim = await startSimulator({ model: await fixtureModel(), port: 0, nameListPageSize: 20 });
});
t.teardown(() => sim.stop());

t.test('an association is accepted and Identify answers the IED manufacturer and type', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(await c.ok({ service: 'identify' }), { service: 'identify', vendor: 'ACME', model: 'SimIED', revision: '1.2' });
  await c.close();
});

t.test('GetNameList lists domains, pages variables with continueAfter and moreFollows, and lists data sets', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(await c.ok({ service: 'getNameList', objectClass: 'domain', scope: { scope: 'vmd' } }), {
    service: 'getNameList',
    identifiers: [D],
    moreFollows: false,
  });
  const names: string[] = [];
  let pages = 0;
  for (let more = true; more; pages++) {
    const r = await c.ok({
      service: 'getNameList',
      objectClass: 'namedVariable',
      scope: { scope: 'domain', domain: D },
      continueAfter: names.at(-1),
    });
    if (r.service !== 'getNameList') throw new Error('wrong service');
    t.ok(r.identifiers.length <= 20);
    names.push(...r.identifiers);
    more = r.moreFollows;
  }
  t.ok(pages > 5, `${pages} pages`);
  t.equal(new Set(names).size, names.length, 'no name twice');
  for (const n of ['LLN0', 'LLN0$RP$urcb01$RptEna', 'LLN0$BR$brcb$EntryID', 'GGIO1$MX$AnIn1$mag$f', 'GGIO1$CO$SPCSO1$Oper$ctlVal'])
    t.ok(names.includes(n), n);
  t.same(await c.ok({ service: 'getNameList', objectClass: 'namedVariableList', scope: { scope: 'domain', domain: D } }), {
    service: 'getNameList',
    identifiers: ['LLN0$Events'],
    moreFollows: false,
  });
  const unknown = await c.request({ service: 'getNameList', objectClass: 'namedVariable', scope: { scope: 'domain', domain: 'nope' } });
  t.equal(unknown.pdu, 'confirmed-error');
  await c.close();
});

t.test('GetVariableAccessAttributes describes a data object as IEC 61850-8-1 maps it', async (t) => {
  const c = await RawClient.associated(sim.port);
  const r = await c.ok({ service: 'getVariableAccessAttributes', name: dom('GGIO1$MX$AnIn1') });
  t.same(r, {
    service: 'getVariableAccessAttributes',
    deletable: false,
    type: {
      type: 'structure',
      packed: false,
      components: [
        {
          name: 'mag',
          type: {
            type: 'structure',
            packed: false,
            components: [{ name: 'f', type: { type: 'float', formatWidth: 32, exponentWidth: 8 } }],
          },
        },
        { name: 'q', type: { type: 'bit-string', size: 13 } },
        { name: 't', type: { type: 'utc-time' } },
      ],
    },
  });
  const lln0 = await c.ok({ service: 'getVariableAccessAttributes', name: dom('LLN0') });
  t.same(lln0.service === 'getVariableAccessAttributes' && lln0.type.type === 'structure' && lln0.type.components.map((x) => x.name), [
    'ST',
    'CF',
    'DC',
    'RP',
    'BR',
  ]);
  t.equal((await c.request({ service: 'getVariableAccessAttributes', name: dom('GGIO1$MX$Nope') })).pdu, 'confirmed-error');
  await c.close();
});

t.test('Read answers a whole LN, an FC level, a DO and a DA, and object-non-existent for unknown names', async (t) => {
  const c = await RawClient.associated(sim.port);
  const r = plain(
    await c.ok(readOf('GGIO1$MX$AnIn1$mag$f', 'GGIO1$MX$AnIn1$mag', 'GGIO1$ST$Ind1', 'GGIO1$XX', 'LLN0$DC$NamPlt$vendor')),
  ) as unknown[];
  t.same(r.slice(0, 2), [1.5, [1.5]]);
  t.same(r[2], [false, '0000000000000', { seconds: 0, fraction: 0, quality: 0 }]);
  t.same(r.slice(3), ['object-non-existent', 'ACME']);
  const whole = plain(await c.ok(readOf('GGIO1'))) as unknown[][];
  t.equal(whole[0].length, 4, 'GGIO1 has ST, MX, CF and CO, no other FC');
  await c.close();
});

t.test('a data set reads as a named variable list and its attributes list the members', async (t) => {
  const c = await RawClient.associated(sim.port);
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
  const r = await c.ok({ service: 'read', specificationWithResult: false, variables: { kind: 'list', name: dom('LLN0$Events') } });
  t.same((plain(r) as unknown[]).slice(0, 2), [true, '0000000000000']);
  const attrs = await c.ok({ service: 'getNamedVariableListAttributes', name: dom('LLN0$Events') });
  t.same(attrs.service === 'getNamedVariableListAttributes' && attrs.variables.map((v) => (v.scope === 'domain' ? v.item : '')), [
    'GGIO1$ST$Ind1$stVal',
    'GGIO1$ST$Ind1$q',
    'GGIO1$MX$AnIn1',
    'GGIO1$ST$SPCSO1$stVal',
  ]);
  t.equal(
    (await c.request({ service: 'read', specificationWithResult: false, variables: { kind: 'list', name: dom('LLN0$Nope') } })).pdu,
    'confirmed-error',
  );
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: false });
  await c.close();
});

t.test('Write is type-checked and ruled by functional constraint', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(plain(await c.ok(writeOf('LLN0$DC$NamPlt$vendor', { type: 'visible-string', value: 'Other' }))), ['ok']);
  t.same(dataToPlain(sim.value(`${D}/LLN0$DC$NamPlt$vendor`)), 'Other');
  t.same(plain(await c.ok(writeOf('GGIO1$CF$AnIn1$db', { type: 'unsigned', value: 500 }))), ['ok']);
  t.same(plain(await c.ok(writeOf('GGIO1$CF$AnIn1$db', { type: 'boolean', value: true }))), ['type-inconsistent']);
  t.same(
    plain(await c.ok(writeOf('GGIO1$CF$AnIn1$db', { type: 'integer', value: -1 }))),
    ['type-inconsistent'],
    'a negative value does not fit INT32U',
  );
  t.same(plain(await c.ok(writeOf('GGIO1$ST$Ind1$stVal', { type: 'boolean', value: true }))), ['object-access-denied']);
  t.same(plain(await c.ok(writeOf('GGIO1$MX$AnIn1$mag$f', { type: 'float', value: 2, double: false }))), ['object-access-denied']);
  t.same(plain(await c.ok(writeOf('GGIO1$CF$Nope', { type: 'boolean', value: true }))), ['object-non-existent']);
  t.same(dataToPlain(sim.value(`${D}/GGIO1$CF$AnIn1$db`)), 500);
  await c.close();
});

t.test('setValue refuses unknown references and values of the wrong type', async (t) => {
  t.throws(() => sim.setValue(`${D}/GGIO1$ST$Nope`, { type: 'boolean', value: true }));
  t.throws(() => sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'integer', value: 1 }));
  t.throws(() => sim.value('no-slash'));
});

t.test('frames split byte by byte and frames coalesced in one segment are both read', async (t) => {
  const c = await RawClient.open(sim.port);
  const opening = concat(buildConnectionRequest(), buildAssociationRequest());
  for (const b of opening) {
    c.write(Uint8Array.of(b));
    await new Promise((r) => setImmediate(r));
  }
  await c.take((r) => r.kind === 'cc');
  await c.take((r) => r.kind === 'tsdu' && r.peeled.acse?.kind === 'AARE');
  const two = concat(
    ...buildMmsFrames({ pdu: 'confirmed-request', invokeId: 7, request: { service: 'identify' } }),
    ...buildMmsFrames({ pdu: 'confirmed-request', invokeId: 8, request: readOf('GGIO1$MX$AnIn1$mag$f') }),
  );
  c.write(two);
  t.equal((await c.mms((p) => p.pdu === 'confirmed-response' && p.invokeId === 7)).pdu, 'confirmed-response');
  t.equal((await c.mms((p) => p.pdu === 'confirmed-response' && p.invokeId === 8)).pdu, 'confirmed-response');
  await c.close();
});

t.test('a malformed frame closes that association only; the simulator keeps serving', async (t) => {
  const errors: string[] = [];
  const onError = (e: { message: string }) => errors.push(e.message);
  sim.on('protocolError', onError);
  const bad = await RawClient.associated(sim.port);
  bad.write(Uint8Array.of(3, 0, 0, 9, 2, 0xf0, 0x80, 0xff, 0xff));
  await bad.closed;
  const badHeader = await RawClient.open(sim.port);
  badHeader.write(Uint8Array.of(9, 9, 9, 9));
  await badHeader.closed;
  t.equal(errors.length, 2);
  const good = await RawClient.associated(sim.port);
  t.equal((await good.ok({ service: 'identify' })).service, 'identify');
  await good.close();
  sim.off('protocolError', onError);
});

t.test('conclude is answered, release answers DISCONNECT with an RLRE and closes', async (t) => {
  const c = await RawClient.associated(sim.port);
  for (const f of buildMmsFrames({ pdu: 'conclude-request' })) c.write(f);
  t.equal((await c.mms((p) => p.pdu === 'conclude-response')).pdu, 'conclude-response');
  c.write(buildReleaseRequest());
  const rlre = await c.take((r) => r.kind === 'tsdu');
  t.equal(rlre.kind === 'tsdu' && rlre.peeled.acse?.kind, 'RLRE');
  await c.closed;
  t.ok(await eventually(() => sim.connections() === 0));
});

t.test(
  "the platform's client reads one reference again and again: the same request but for its invoke id, and the value of the moment",
  async (t) => {
    const client = await MmsClient.connect({ host: '127.0.0.1', port: sim.port });
    t.teardown(() => client.conclude());
    const seen: { invokeId: number; request: unknown }[] = [];
    const record = (e: { invokeId: number; request: unknown }) => void seen.push(e);
    sim.on('request', record);
    const ref = `${D}/GGIO1$ST$Ind1$stVal`;
    const values: unknown[] = [];
    for (const value of [true, false, true]) {
      sim.setValue(ref, { type: 'boolean', value });
      const [result] = await client.read([ref]);
      values.push(result.ok && result.data.value);
    }
    sim.off('request', record);
    t.same(values, [true, false, true], 'each read answers the value it finds');
    t.same(
      seen.map((s) => s.request),
      [1, 2, 3].map(() => readOf('GGIO1$ST$Ind1$stVal')),
    );
    t.equal(new Set(seen.map((s) => s.invokeId)).size, 3, 'each with an invoke id of its own');
  },
);
