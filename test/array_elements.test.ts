/**
 * Array elements through the gateway against the simulator serving the platform's own harmonics file
 * (MHAI1.HA.phsAHar: 16 CMVs, as libiec61850's server_example_complex_array; GAPC1.Crv.crvPts: 8 settings):
 * reading an element and a part of one (`phsAHar(2)`, `phsAHar(2).cVal.mag.f`) through MMS alternate
 * access, equal to that element of the whole array; writing an element and a part of one; a data set of
 * five element members whose report gives five values under five names in `…/values` and on `/api/live`;
 * the arrays' sizes in both browse trees; and the refusals (index outside the array 404, the device's
 * refusal 502 with `deviceError`, a malformed index 400).
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { dataToPlain, parseScl, type MmsData } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const scl = await readFile(new URL('./fixtures/scl/harmonics.icd', import.meta.url), 'utf8');
const parsed = await parseScl(scl);
if (!parsed.ok) throw new Error(`harmonics.icd refused: ${JSON.stringify(parsed.report.errors)}`);
const D = 'HARMLD0';
const sim = await startSimulator({ model: parsed.model, port: 0, faults: { refuseWrites: { [`${D}/GAPC1$SP$Crv$crvPts(6)$yVal`]: 11 } } });
t.teardown(() => sim.stop());
const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', MMS_REQUEST_TIMEOUT_MS: '2000' });
t.teardown(() => p.stop());

const float = (value: number): MmsData => ({ type: 'float', value, double: false });
/** The device's harmonics: element i has magnitude 200 + i, angle i / 100, quality good. */
for (let i = 0; i < 16; i++) {
  sim.setValue(`${D}/MHAI1$MX$HA$phsAHar(${i})$cVal$mag$f`, float(200 + i));
  sim.setValue(`${D}/MHAI1$MX$HA$phsAHar(${i})$cVal$ang$f`, float(i / 100));
}
const f32 = (n: number) => Math.fround(n);
const RCB = `${D}/LLN0$RP$urcbHar01`;
const MEMBERS = [
  `${D}/MHAI1.HA.phsAHar(2)[MX]`,
  `${D}/MHAI1.HA.phsAHar(3).cVal[MX]`,
  `${D}/MHAI1.HA.phsAHar(4).cVal.mag[MX]`,
  `${D}/MHAI1.HA.phsAHar(5).cVal.mag.f[MX]`,
  `${D}/MHAI1.HA.phsAHar(6).cVal.mag.f[MX]`,
];
type Value = { reference: string; value: unknown; quality: { validity: string } | null; rcb: string; stale: boolean };
type Read = { reference: string; value?: unknown; error?: string; quality?: { validity: string } | null; members?: Read[] };
type Problem = { status: number; code: string; detail: string; deviceError?: { service: string; error: string } };

t.test(`array elements (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port, { scl });
  await c.connect();
  const read = async (references: string[], dataSets?: string[]) => {
    const res = await c.api('POST', '/read', { references, ...(dataSets ? { dataSets } : {}) });
    return { status: res.status, body: (await res.json()) as Read[] & Problem };
  };
  const write = async (reference: string, value: unknown) => {
    const res = await c.api('POST', '/write', { reference, value });
    return { status: res.status, body: res.status === 204 ? undefined : ((await res.json()) as Problem) };
  };

  t.test('an element and its parts read as that element of the whole array, with the element’s quality', async (t) => {
    const { status, body } = await read([
      `${D}/MHAI1.HA.phsAHar[MX]`,
      `${D}/MHAI1.HA.phsAHar(2)[MX]`,
      `${D}/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`,
      `${D}/MHAI1$MX$HA$phsAHar(15)$cVal$ang$f`,
    ]);
    t.equal(status, 200);
    const whole = body[0].value as { cVal: { mag: { f: number } } }[];
    t.equal(whole.length, 16, 'the whole array: 16 harmonics');
    t.same(body[1].value, whole[2], 'phsAHar(2) is element 2 of the whole array');
    t.match(body[1], { reference: `${D}/MHAI1.HA.phsAHar(2)[MX]`, value: { cVal: { mag: { f: 202 }, ang: { f: f32(0.02) } } } });
    t.match(body[2], { value: 202, quality: { validity: 'good' } }, 'phsAHar(2).cVal.mag.f, with phsAHar(2).q of the same read');
    t.match(body[3], { reference: `${D}/MHAI1$MX$HA$phsAHar(15)$cVal$ang$f`, value: f32(0.15) }, 'the MMS notation too');
  });

  t.test('an element and a part of one are written, and read back', async (t) => {
    t.equal((await write(`${D}/GAPC1.Crv.crvPts(2)[SP]`, { xVal: 1.5, yVal: 2.5 })).status, 204);
    t.equal((await write(`${D}/GAPC1.Crv.crvPts(3).yVal[SP]`, 7.25)).status, 204);
    t.same((dataToPlain(sim.value(`${D}/GAPC1$SP$Crv$crvPts`)) as unknown[]).slice(1, 5), [
      [0, 0],
      [1.5, 2.5],
      [0, 7.25],
      [0, 0],
    ]);
    const { body } = await read([`${D}/GAPC1.Crv.crvPts(2)[SP]`, `${D}/GAPC1.Crv.crvPts(3).yVal[SP]`]);
    t.match(body, [{ value: { xVal: 1.5, yVal: 2.5 } }, { value: 7.25 }]);
    const log = (await (await c.api('GET', '/control-log?size=2')).json()) as { content: { reference: string; outcome: string }[] };
    t.match(log.content, [
      { reference: `${D}/GAPC1.Crv.crvPts(3).yVal[SP]`, outcome: 'ok' },
      { reference: `${D}/GAPC1.Crv.crvPts(2)[SP]`, outcome: 'ok' },
    ]);
  });

  t.test('what the model rules out is answered before the device is asked; the device’s refusal is 502', async (t) => {
    const outside = await read([`${D}/MHAI1.HA.phsAHar(1)[MX]`, `${D}/MHAI1.HA.phsAHar(16)[MX]`]);
    t.match(outside, { status: 404, body: { code: 'not_found', detail: /phsAHar has 16 elements \(0 to 15\), not element 16/ } });
    t.match(await write(`${D}/GAPC1.Crv.crvPts(8).xVal[SP]`, 1), { status: 404, body: { detail: /crvPts has 8 elements/ } });
    t.match(await write(`${D}/GAPC1.Crv.crvPts(2).zVal[SP]`, 1), { status: 404 }, 'a component the element does not have');
    t.match(await write(`${D}/GAPC1.Crv.numPts(0)[SP]`, 1), { status: 404, body: { detail: /numPts is not an array/ } });
    t.match(await write(`${D}/GAPC1.Crv.crvPts(2).xVal[SP]`, 'high'), { status: 400, body: { detail: /expected a number/ } });
    t.match(await write(`${D}/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`, 1), {
      status: 400,
      body: { detail: /MX, which a client cannot write/ },
    });
    t.match(await write(`${D}/GAPC1.Crv.crvPts(6).yVal[SP]`, 1), {
      status: 502,
      body: { code: 'device_refused', deviceError: { service: 'write', error: 'object-value-invalid' } },
    });
    for (const malformed of ['phsAHar(x)', 'phsAHar(01)', 'phsAHar()', 'phsAHar(2', 'phsAHar(2)(3)', 'phsAHar(4294967296)'])
      t.equal((await read([`${D}/MHAI1.HA.${malformed}[MX]`])).status, 400, malformed);
    t.equal((await read([`${D}/MHAI1.HA.phsAHar(-1)[MX]`])).status, 400, 'a negative index');
  });

  t.test('a data set of element members reads each under its own name', async (t) => {
    const { status, body } = await read([], [`${D}/LLN0.Harmonics`]);
    t.equal(status, 200);
    const members = body[0].members ?? [];
    t.same(
      members.map((m) => m.reference),
      MEMBERS,
    );
    t.match(members, [
      { value: { cVal: { mag: { f: 202 } } }, quality: { validity: 'good' } },
      { value: { mag: { f: 203 } } },
      { value: { f: 204 } },
      { value: 205 },
      { value: 206 },
    ]);
  });

  t.test('a report of five element members gives five values under five names, in /values and on /api/live', async (t) => {
    const live = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values`, c.editor.headers);
    t.teardown(() => live.close());
    await live.wait(isEvent('snapshot'));
    const enabled = await c.api('POST', '/reports', {
      rcb: RCB,
      triggers: ['dchg', 'qchg', 'gi'],
      generalInterrogation: true,
      optionalFields: ['sequence-number', 'report-time-stamp', 'reason-for-inclusion'],
    });
    t.equal(enabled.status, 204);
    const values = async () => (await (await c.api('GET', '/values')).json()) as Value[];
    const all = await until('the general interrogation', async () => {
      const got = await values();
      return got.length === 5 ? got : undefined;
    });
    t.same(all.map((v) => v.reference).sort(), [...MEMBERS].sort(), 'five references, each with its index');
    const byRef = new Map(all.map((v) => [v.reference, v]));
    t.match(byRef.get(MEMBERS[0]), { value: { cVal: { mag: { f: 202 } } }, quality: { validity: 'good' }, rcb: RCB, stale: false });
    t.match(byRef.get(MEMBERS[2]), { value: { f: 204 } });
    t.equal(byRef.get(MEMBERS[3])?.value, 205);
    t.equal(byRef.get(MEMBERS[4])?.value, 206);
    for (const reference of MEMBERS) await live.wait(isEvent('value', (d) => d.reference === reference));
    t.pass('a value event for each of the five on /api/live');

    const before = live.events.length;
    sim.setValue(`${D}/MHAI1$MX$HA$phsAHar(5)$cVal$mag$f`, float(55.5));
    const event = (await live.wait(
      isEvent('value', (d) => d.reference === MEMBERS[3] && d.value === 55.5),
      10_000,
      before,
    )) as SseEvent & { data: Value };
    t.match(event.data, { connectionId: c.id, rcb: RCB });
    const after = await until('the change in /values', async () => {
      const got = await values();
      return got.find((v) => v.reference === MEMBERS[3])?.value === 55.5 ? got : undefined;
    });
    t.equal(after.length, 5, 'still five values');
    t.equal(after.find((v) => v.reference === MEMBERS[4])?.value, 206, "element 6's value stays its own");
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(RCB)}`)).status, 204);
  });

  t.test("both browse trees give the arrays' sizes", async (t) => {
    type DaNode = { name: string; ref: string; type: string; count?: number; children?: DaNode[] };
    type DeviceTree = {
      source: string;
      logicalDevices: { logicalNodes: { name: string; dataObjects: { name: string; attributes: DaNode[] }[] }[] }[];
    };
    const device = (await (await c.api('GET', '/browse')).json()) as DeviceTree;
    t.equal(device.source, 'device');
    const lns = device.logicalDevices[0].logicalNodes;
    const har = lns
      .find((l) => l.name === 'MHAI1')
      ?.dataObjects.find((d) => d.name === 'HA')
      ?.attributes.find((a) => a.name === 'phsAHar');
    t.match(har, { type: 'Array[16]', count: 16, ref: `${D}/MHAI1.HA.phsAHar[MX]` });
    t.same(
      har?.children?.map((x) => x.ref),
      [`${D}/MHAI1.HA.phsAHar(0).cVal[MX]`, `${D}/MHAI1.HA.phsAHar(0).q[MX]`, `${D}/MHAI1.HA.phsAHar(0).t[MX]`],
      'the parts of an element, with the references of the first',
    );
    const pts = lns
      .find((l) => l.name === 'GAPC1')
      ?.dataObjects.find((d) => d.name === 'Crv')
      ?.attributes.find((a) => a.name === 'crvPts');
    t.match(pts, { count: 8, ref: `${D}/GAPC1.Crv.crvPts[SP]` });

    type SclTree = {
      source: string;
      ieds: { logicalDevices: { logicalNodes: { name: string; dataObjects: { name: string; arrays?: unknown }[] }[] }[] }[];
    };
    const file = (await (await c.api('GET', '/browse?ied=HARM')).json()) as SclTree;
    t.equal(file.source, 'scl');
    const objects = file.ieds[0].logicalDevices[0].logicalNodes.flatMap((l) => l.dataObjects);
    t.same(objects.find((d) => d.name === 'HA')?.arrays, [{ name: 'phsAHar', count: 16 }]);
    t.same(objects.find((d) => d.name === 'Crv')?.arrays, [{ name: 'crvPts', count: 8 }]);
  });
});
