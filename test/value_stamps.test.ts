/**
 * Quality and time belong to the data object, through the gateway against the simulator: with data sets
 * whose members are the attributes beside their data object's `q` and `t` (MV, CMV, WYE and DEL phases,
 * SPS, DPS, and basic_io's Measurements with no `t`), `…/values`, `/api/live` and `…/read` give each
 * attribute the quality and device time of its own data object in the same report or read; without that
 * `t`, the report's TimeOfEntry (`timestampSource: entry`); device times to the millisecond as written.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { fromJson, parseScl, utcTimeFromMs, type MmsData } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const scl = await readFile(new URL('./fixtures/scl/measurements.icd', import.meta.url), 'utf8');
const parsed = await parseScl(scl);
if (!parsed.ok) throw new Error(`measurements.icd refused: ${JSON.stringify(parsed.report.errors)}`);
const sim = await startSimulator({ model: parsed.model, port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', MMS_REQUEST_TIMEOUT_MS: '2000' });
t.teardown(() => p.stop());

const D = 'MEASLD0';
const LAYOUTS = `${D}/LLN0$RP$urcbLayouts01`;
const MEAS = `${D}/LLN0$RP$urcbMeas01`;
type Quality = { validity: string; detail: string[]; source: string; test: boolean; operatorBlocked: boolean };
type Value = {
  reference: string;
  value: unknown;
  quality: Quality | null;
  timestamp: string | null;
  timestampSource: 'attribute' | 'entry' | null;
  rcb: string;
  stale: boolean;
};

const float = (value: number): MmsData => ({ type: 'float', value, double: false });
const quality = (q: { validity: string; flags?: string[]; source?: string }): MmsData => fromJson(q, { type: 'bit-string', size: 13 }, 'q');
const time = (iso: string): MmsData => ({ type: 'utc-time', value: utcTimeFromMs(Date.parse(iso), 0x0a) });
const struct = (...value: MmsData[]): MmsData => ({ type: 'structure', value });
const cVal = (mag: number): MmsData => struct(struct(float(mag)), struct(float(0)));
/** Sets attributes one by one (no block is enabled yet, so nothing is reported). */
const set = (values: Record<string, MmsData>) => {
  for (const [ref, value] of Object.entries(values)) sim.setValue(`${D}/${ref}`, value);
};

/** The device's process before any block is enabled: every layout with its own quality and time. */
set({
  MMXU1$MX$TotW$mag$f: float(1000.5),
  MMXU1$MX$TotW$q: quality({ validity: 'good' }),
  MMXU1$MX$TotW$t: time('2026-11-20T10:00:00.257Z'),
  GGIO1$MX$CmvIn1$cVal: cVal(49.98),
  GGIO1$MX$CmvIn1$q: quality({ validity: 'questionable', flags: ['oldData'] }),
  GGIO1$MX$CmvIn1$t: time('2026-11-20T10:00:01.999Z'),
  MMXU1$MX$PhV$phsA$cVal: cVal(230.1),
  MMXU1$MX$PhV$phsA$q: quality({ validity: 'good', flags: ['test'] }),
  MMXU1$MX$PhV$phsA$t: time('2026-11-20T10:00:02.001Z'),
  MMXU1$MX$PhV$phsB$cVal: cVal(229.9),
  MMXU1$MX$PhV$phsB$q: quality({ validity: 'invalid', flags: ['failure'] }),
  MMXU1$MX$PhV$phsB$t: time('2026-11-20T10:00:02.500Z'),
  MMXU1$MX$PPV$phsAB$cVal: cVal(398.7),
  MMXU1$MX$PPV$phsAB$q: quality({ validity: 'good', source: 'substituted' }),
  MMXU1$MX$PPV$phsAB$t: time('2026-11-20T10:00:03.123Z'),
  GGIO1$ST$Ind1$stVal: { type: 'boolean', value: true },
  GGIO1$ST$Ind1$q: quality({ validity: 'good', flags: ['operatorBlocked'] }),
  GGIO1$ST$Ind1$t: time('2026-11-20T10:00:04.004Z'),
  XCBR1$ST$Pos$stVal: { type: 'bit-string', value: { bitLength: 2, bytes: new Uint8Array([0x80]) } },
  XCBR1$ST$Pos$q: quality({ validity: 'good' }),
  XCBR1$ST$Pos$t: time('2026-11-20T10:00:05.678Z'),
  GGIO1$MX$AnIn1$mag$f: float(12.5),
  GGIO1$MX$AnIn1$q: quality({ validity: 'questionable', flags: ['inaccurate'] }),
  GGIO1$MX$AnIn1$t: time('2026-11-20T10:00:06.000Z'),
});

const good = { validity: 'good', detail: [], source: 'process', test: false, operatorBlocked: false };
/** What each layout's attribute takes from its data object. */
const expected: [string, string, Partial<Value>][] = [
  ['MV: mag.f takes TotW.q and TotW.t', 'MMXU1.TotW.mag.f[MX]', { value: 1000.5, quality: good, timestamp: '2026-11-20T10:00:00.257Z' }],
  [
    'CMV: cVal.mag.f takes CmvIn1.q and CmvIn1.t',
    'GGIO1.CmvIn1.cVal.mag.f[MX]',
    { quality: { ...good, validity: 'questionable', detail: ['oldData'] }, timestamp: '2026-11-20T10:00:01.999Z' },
  ],
  [
    'WYE: phsA.cVal.mag.f takes PhV.phsA.q and PhV.phsA.t',
    'MMXU1.PhV.phsA.cVal.mag.f[MX]',
    { quality: { ...good, test: true }, timestamp: '2026-11-20T10:00:02.001Z' },
  ],
  [
    'DEL: phsAB.cVal.mag.f takes PPV.phsAB.q and PPV.phsAB.t',
    'MMXU1.PPV.phsAB.cVal.mag.f[MX]',
    { quality: { ...good, source: 'substituted' }, timestamp: '2026-11-20T10:00:03.123Z' },
  ],
  [
    'SPS: stVal takes Ind1.q and Ind1.t',
    'GGIO1.Ind1.stVal[ST]',
    { value: true, quality: { ...good, operatorBlocked: true }, timestamp: '2026-11-20T10:00:04.004Z' },
  ],
  ['DPS: stVal takes Pos.q and Pos.t', 'XCBR1.Pos.stVal[ST]', { value: 'on', quality: good, timestamp: '2026-11-20T10:00:05.678Z' }],
];

t.test(`quality and time of the data object (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port, { scl });
  await c.connect();
  const values = async () => (await (await c.api('GET', '/values')).json()) as Value[];
  const live = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values`, c.editor.headers);
  t.teardown(() => live.close());
  await live.wait(isEvent('snapshot'));

  t.test(
    "a general interrogation of the layouts: each attribute with its own data object's quality and time, in /values and on /api/live",
    async (t) => {
      t.equal(
        (
          await c.api('POST', '/reports', {
            rcb: LAYOUTS,
            triggers: ['dchg', 'qchg', 'gi'],
            generalInterrogation: true,
            optionalFields: ['sequence-number', 'report-time-stamp', 'reason-for-inclusion'],
          })
        ).status,
        204,
      );
      const all = await until('the general interrogation', async () => {
        const got = await values();
        return got.length === 20 ? got : undefined;
      });
      for (const [what, reference, want] of expected) {
        t.match(
          all.find((v) => v.reference === `${D}/${reference}`),
          { ...want, timestampSource: 'attribute', rcb: LAYOUTS, stale: false },
          what,
        );
      }
      const phsB = all.find((v) => v.reference === `${D}/MMXU1.PhV.phsB.cVal.mag.f[MX]`)!;
      t.match(phsB.quality, { validity: 'invalid', detail: ['failure'] }, "WYE: phsB's value takes phsB.q, not phsA's");
      t.equal(phsB.timestampSource, 'entry', 'and, the data set carrying no phsB.t, the time of the entry');
      t.match(
        all.find((v) => v.reference === `${D}/MMXU1.TotW.q[MX]`),
        { quality: good, timestamp: '2026-11-20T10:00:00.257Z', timestampSource: 'attribute' },
        'q and t themselves belong to their data object too',
      );
      const event = (await live.wait(isEvent('value', (d) => d.reference === `${D}/MMXU1.PhV.phsA.cVal.mag.f[MX]`))) as SseEvent & {
        data: Value;
      };
      t.match(
        event.data,
        {
          connectionId: c.id,
          quality: { validity: 'good', test: true },
          timestamp: '2026-11-20T10:00:02.001Z',
          timestampSource: 'attribute',
        },
        'the value event on /api/live carries the same',
      );
    },
  );

  t.test('a change of a whole data object reports its attributes with its new quality and time', async (t) => {
    const before = live.events.length;
    sim.setValue(
      `${D}/MMXU1$MX$PhV$phsA`,
      struct(cVal(231.5), quality({ validity: 'questionable', flags: ['oscillatory'] }), time('2026-11-20T11:00:00.999Z')),
    );
    const event = (await live.wait(
      isEvent('value', (d) => d.reference === `${D}/MMXU1.PhV.phsA.cVal.mag.f[MX]` && (d as { value: unknown }).value === 231.5),
      10_000,
      before,
    )) as SseEvent & { data: Value };
    t.match(event.data, {
      quality: { validity: 'questionable', detail: ['oscillatory'], test: false },
      timestamp: '2026-11-20T11:00:00.999Z',
      timestampSource: 'attribute',
    });
    t.match(
      (await values()).find((v) => v.reference === `${D}/MMXU1.PhV.phsA.cVal.mag.f[MX]`),
      { value: 231.5, quality: { validity: 'questionable' }, timestamp: '2026-11-20T11:00:00.999Z' },
      'and /values keeps it',
    );
  });

  t.test("basic_io's Measurements: mag.f takes AnIn1.q; with no t in the data set, the report's TimeOfEntry is the time", async (t) => {
    const sent = Date.now();
    t.equal(
      (
        await c.api('POST', '/reports', {
          rcb: MEAS,
          triggers: ['dchg', 'qchg', 'gi'],
          generalInterrogation: true,
          optionalFields: ['sequence-number', 'report-time-stamp'],
        })
      ).status,
      204,
    );
    const anIn1 = await until('the measurements', async () => (await values()).find((v) => v.reference === `${D}/GGIO1.AnIn1.mag.f[MX]`));
    t.match(anIn1, { value: 12.5, quality: { validity: 'questionable', detail: ['inaccurate'] }, timestampSource: 'entry' });
    const entry = Date.parse(anIn1.timestamp!);
    t.ok(entry >= sent - 1000 && entry <= Date.now() + 1000, `the entry's time (${anIn1.timestamp}) is when the device sent it`);
    t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(MEAS)}`)).status, 204);
    t.equal(
      (
        await c.api('POST', '/reports', {
          rcb: MEAS,
          triggers: ['dchg', 'gi'],
          generalInterrogation: true,
          optionalFields: ['sequence-number'],
        })
      ).status,
      204,
    );
    const bare = await until('the measurements without a time of entry', async () =>
      (await values()).find((v) => v.reference === `${D}/GGIO1.AnIn2.mag.f[MX]`),
    );
    t.match(bare, { quality: { validity: 'good' }, timestamp: null, timestampSource: null }, 'a report without TimeOfEntry: no time');
  });

  t.test('the live snapshot carries timestampSource too', async (t) => {
    const s = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values`, c.editor.headers);
    t.teardown(() => s.close());
    const snapshot = (await s.wait(isEvent('snapshot'))) as SseEvent & { data: { values: Value[] } };
    t.match(
      snapshot.data.values.find((v) => v.reference === `${D}/MMXU1.PPV.phsAB.cVal.mag.f[MX]`),
      { quality: { source: 'substituted' }, timestamp: '2026-11-20T10:00:03.123Z', timestampSource: 'attribute', stale: false },
    );
    t.match(
      snapshot.data.values.find((v) => v.reference === `${D}/GGIO1.AnIn2.mag.f[MX]`),
      { timestamp: null, timestampSource: null },
    );
  });

  t.test('a read takes quality and time from its data object in the same read, for references and data set members', async (t) => {
    const res = await c.api('POST', '/read', {
      references: [
        `${D}/MMXU1.TotW.mag.f[MX]`,
        `${D}/MMXU1.TotW.q[MX]`,
        `${D}/MMXU1.TotW.t[MX]`,
        `${D}/GGIO1.AnIn1.mag.f[MX]`,
        `${D}/XCBR1.Pos[ST]`,
      ],
      dataSets: [`${D}/LLN0.Layouts`],
    });
    t.equal(res.status, 200);
    const body = (await res.json()) as (Partial<Value> & { members?: (Partial<Value> & { reference: string })[] })[];
    t.match(
      body[0],
      { value: 1000.5, quality: good, timestamp: '2026-11-20T10:00:00.257Z', timestampSource: 'attribute' },
      'mag.f read with q and t',
    );
    t.match(body[3], { value: 12.5, quality: null, timestamp: null, timestampSource: null }, 'mag.f read alone: nothing to take');
    t.match(body[4], { quality: good, timestamp: '2026-11-20T10:00:05.678Z' }, 'a data object read whole carries its own');
    const members = body[5].members ?? [];
    t.match(
      members.find((m) => m.reference === `${D}/MMXU1.PhV.phsA.cVal.mag.f[MX]`),
      { value: 231.5, quality: { validity: 'questionable' }, timestamp: '2026-11-20T11:00:00.999Z', timestampSource: 'attribute' },
      "a data set's WYE phase member",
    );
    t.match(
      members.find((m) => m.reference === `${D}/MMXU1.PhV.phsB.cVal.mag.f[MX]`),
      { quality: { validity: 'invalid' }, timestamp: null, timestampSource: null },
      'phsB: the data set carries its q, not its t; a read has no entry time',
    );
  });

  t.test('stopped', async (t) => {
    t.equal((await c.api('POST', '/stop')).status, 204);
    await until('the association ended', async () => sim.connections() === 0);
  });
});
