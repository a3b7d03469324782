/**
 * Arrays on the simulated device, over a real socket: an SDO with `count` (MHAI1.HA.phsAHar, 16 CMVs) and an
 * attribute with `count` (GAPC1.Crv.crvPts, 8 points) are MMS arrays; reads and writes with an alternate
 * access reach one element or a part of one, as libiec61850's server answers them (object-non-existent
 * outside the array); a data set of elements lists each member with its alternate access and reports each
 * member's own value.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { dataToPlain, parseScl, type AccessResult, type AlternateAccess, type ConfirmedResponse, type MmsData } from '@scada/iec61850/wire';
import { startSimulator, type Simulator } from '../src/server.ts';
import { RawClient } from './raw_client.ts';

const D = 'HARMLD0';
const HAR = 'MHAI1$MX$HA$phsAHar';
const PTS = 'GAPC1$SP$Crv$crvPts';
const at = (item: string, ...alternateAccess: AlternateAccess) => ({
  scope: 'domain' as const,
  domain: D,
  item,
  ...(alternateAccess.length ? { alternateAccess } : {}),
});
type Variable = ReturnType<typeof at>;
const readOf = (...names: Variable[]) => ({
  service: 'read' as const,
  specificationWithResult: false,
  variables: { kind: 'variables' as const, names },
});
const writeOf = (name: Variable, data: MmsData) => ({
  service: 'write' as const,
  variables: { kind: 'variables' as const, names: [name] },
  data: [data],
});
const plain = (r: ConfirmedResponse) =>
  r.service === 'read'
    ? r.results.map((x) => (x.ok ? dataToPlain(x.data) : x.errorText))
    : r.service === 'write'
      ? r.results.map((x) => (x.ok ? 'ok' : x.errorText))
      : r;
const float = (value: number): MmsData => ({ type: 'float', value, double: false });
const yes: MmsData = { type: 'boolean', value: true };

const parsed = await parseScl(await readFile(new URL('../../test/fixtures/scl/harmonics.icd', import.meta.url), 'utf8'));
if (!parsed.ok) throw new Error(`harmonics.icd refused: ${JSON.stringify(parsed.report.errors)}`);
const model = parsed.model;

let sim: Simulator;
t.beforeEach(async () => {
  sim = await startSimulator({ model, port: 0 });
  for (let i = 0; i < 16; i++) sim.setValue(`${D}/${HAR}(${i})$cVal$mag$f`, float(100 + i));
});
t.afterEach(() => sim.stop());

t.test('an SDO and an attribute with count are described as arrays of their element type', async (t) => {
  const c = await RawClient.associated(sim.port);
  const har = await c.ok({ service: 'getVariableAccessAttributes', name: at(HAR) });
  t.match(har, { service: 'getVariableAccessAttributes', type: { type: 'array', elements: 16, element: { type: 'structure' } } });
  if (har.service === 'getVariableAccessAttributes' && har.type.type === 'array' && har.type.element.type === 'structure')
    t.same(
      har.type.element.components.map((x) => x.name),
      ['cVal', 'q', 't'],
    );
  t.match(await c.ok({ service: 'getVariableAccessAttributes', name: at(PTS) }), { type: { type: 'array', elements: 8 } });
  await c.close();
});

t.test('a read with an alternate access answers the element, or its component, with the value the whole array has there', async (t) => {
  const c = await RawClient.associated(sim.port);
  const cVal = (index: number) => [{ index }, { component: 'cVal' }] as AlternateAccess;
  const read = await c.ok(
    readOf(
      at(HAR),
      at(HAR, { index: 2 }),
      at(HAR, ...cVal(2), { component: 'mag' }),
      at(HAR, ...cVal(2), { component: 'mag' }, { component: 'f' }),
    ),
  );
  const [whole, element, mag, f] = plain(read) as unknown[];
  t.equal((whole as unknown[]).length, 16);
  t.same(element, (whole as unknown[])[2], 'element 2 is the third of the whole array');
  t.same(mag, [102]);
  t.equal(f, 102);
  await c.close();
});

t.test('outside the array, or past a leaf, or an element by a plain name: object-non-existent, as libiec61850 answers', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(
    plain(
      await c.ok(
        readOf(
          at(HAR, { index: 16 }),
          at(HAR, { index: 2 }, { component: 'nope' }),
          at(`${HAR}$2`),
          at(`${HAR}$2$cVal`),
          at('MHAI1$CF$HA$numHar', { index: 0 }),
        ),
      ),
    ),
    ['object-non-existent', 'object-non-existent', 'object-non-existent', 'object-non-existent', 'object-non-existent'],
  );
  await c.close();
});

t.test('a write with an alternate access stores the element or its component; an MX element is not writable', async (t) => {
  const c = await RawClient.associated(sim.port);
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 3 }, { component: 'xVal' }), float(12.5)))), ['ok']);
  t.same(dataToPlain(sim.value(`${D}/${PTS}(3)$xVal`)), 12.5);
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 4 }), { type: 'structure', value: [float(1), float(2)] }))), ['ok']);
  t.same(dataToPlain(sim.value(`${D}/${PTS}(4)`)), [1, 2]);
  t.same(dataToPlain(sim.value(`${D}/${PTS}(5)`)), [0, 0], 'the next element is untouched');
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 8 }, { component: 'xVal' }), float(1)))), ['object-non-existent']);
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 3 }, { component: 'xVal' }), { type: 'boolean', value: true }))), ['type-inconsistent']);
  t.same(plain(await c.ok(writeOf(at(HAR, { index: 2 }, { component: 'cVal' }, { component: 'mag' }, { component: 'f' }), float(1)))), [
    'object-access-denied',
  ]);
  await c.close();
});

t.test('a refused write of an element is keyed by its reference with the index', async (t) => {
  await sim.stop();
  sim = await startSimulator({ model, port: 0, faults: { refuseWrites: { [`${D}/${PTS}(2)$yVal`]: 11 } } });
  const c = await RawClient.associated(sim.port);
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 2 }, { component: 'yVal' }), float(1)))), ['object-value-invalid']);
  t.same(plain(await c.ok(writeOf(at(PTS, { index: 2 }, { component: 'xVal' }), float(1)))), ['ok']);
  await c.close();
});

t.test('a data set of array elements lists each member with its alternate access, reads and reports their own values', async (t) => {
  const c = await RawClient.associated(sim.port);
  const attrs = await c.ok({ service: 'getNamedVariableListAttributes', name: at('LLN0$Harmonics') });
  t.same(attrs.service === 'getNamedVariableListAttributes' && attrs.variables, [
    at(HAR, { index: 2 }),
    at(HAR, { index: 3 }, { component: 'cVal' }),
    at(HAR, { index: 4 }, { component: 'cVal' }, { component: 'mag' }),
    at(HAR, { index: 5 }, { component: 'cVal' }, { component: 'mag' }, { component: 'f' }),
    at(HAR, { index: 6 }, { component: 'cVal' }, { component: 'mag' }, { component: 'f' }),
  ]);
  const read = await c.ok({ service: 'read', specificationWithResult: true, variables: { kind: 'list', name: at('LLN0$Harmonics') } });
  const members = plain(read) as unknown[];
  t.same(members.slice(1), [[[103], [0]], [104], 105, 106]);
  t.same((members[0] as unknown[])[0], [[102], [0]], "element 2's cVal");

  await c.ok(writeOf(at('LLN0$RP$urcbHar01$RptEna'), yes));
  await c.ok(writeOf(at('LLN0$RP$urcbHar01$GI'), yes));
  const gi = (await c.report('RPT')).results as AccessResult[];
  // RptID, OptFlds, SqNum, TimeOfEntry, inclusion, five values, five reasons
  t.same(
    gi
      .slice(5, 10)
      .map((r) => (r.ok ? dataToPlain(r.data) : 'error'))
      .slice(1),
    [[[103], [0]], [104], 105, 106],
  );
  sim.setValue(`${D}/${HAR}(5)$cVal$mag$f`, float(55.5));
  const change = (await c.report('RPT')).results as AccessResult[];
  t.same(
    change.slice(4).map((r) => (r.ok ? dataToPlain(r.data) : 'error')),
    ['00010', 55.5, '010000'],
    'a change of element 5 reports that member alone',
  );
  await c.close();
});
