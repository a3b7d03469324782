/**
 * JSON ↔ MMS conversion: each basic type both ways, the IEC 61850 bit strings (quality, Dbpos, Tcmd, TrgOps,
 * OptFlds), time stamps, structures and arrays, and a clear refusal for every value that does not fit.
 */
import t from 'tap';
import { bitStringFromBits, utcTimeFromMs } from '../../src/mms/ber_values.ts';
import type { MmsData } from '../../src/mms/mms_data.ts';
import type { MmsType } from '../../src/mms/mms_types.ts';
import { fromJson, toJson, typeName } from '../../src/client/values.ts';

const bits = (s: string): MmsData => ({ type: 'bit-string', value: bitStringFromBits([...s].map((c) => c === '1')) });
const INT8: MmsType = { type: 'integer', bits: 8 };
const INT32U: MmsType = { type: 'unsigned', bits: 32 };
const F32: MmsType = { type: 'float', formatWidth: 32, exponentWidth: 8 };
const Q: MmsType = { type: 'bit-string', size: 13 };
const TS: MmsType = { type: 'utc-time' };
const MV: MmsType = {
  type: 'structure',
  packed: false,
  components: [
    { name: 'mag', type: { type: 'structure', packed: false, components: [{ name: 'f', type: F32 }] } },
    { name: 'q', type: Q },
    { name: 't', type: TS },
  ],
};

t.test('basic values read as JSON', async (t) => {
  t.equal(toJson({ type: 'boolean', value: true }), true);
  t.equal(toJson({ type: 'integer', value: -5 }), -5);
  t.equal(toJson({ type: 'unsigned', value: 2n ** 63n }), '9223372036854775808', 'beyond 2^53 as exact text');
  t.equal(toJson({ type: 'float', value: 1.5, double: false }), 1.5);
  t.equal(toJson({ type: 'visible-string', value: 'abc' }), 'abc');
  t.equal(toJson({ type: 'mms-string', value: 'größe' }), 'größe');
  t.equal(toJson({ type: 'octet-string', value: Uint8Array.of(0, 0xab) }), '00ab');
  t.equal(toJson({ type: 'obj-id', value: '1.2.3' }), '1.2.3');
  t.same(toJson(bits('1010')), [true, false, true, false], 'an unnamed bit string is an array of booleans');
  t.equal(toJson({ type: 'binary-time', value: { msOfDay: 1000, days: 0 } }), '1984-01-01T00:00:01.000Z');
  t.same(toJson({ type: 'binary-time', value: { msOfDay: 1000 } }), { msOfDay: 1000 });
});

t.test('quality reads as validity, flags and source', async (t) => {
  t.same(toJson(bits('0000000000000'), Q, 'q'), { validity: 'good', flags: [], source: 'process' });
  t.same(toJson(bits('0100000000000'), Q, 'q'), { validity: 'invalid', flags: [], source: 'process' });
  t.same(toJson(bits('1100000100000'), Q, 'q'), { validity: 'questionable', flags: ['oldData'], source: 'process' });
  t.same(toJson(bits('1000000000000'), Q, 'q'), { validity: 'reserved', flags: [], source: 'process' });
  t.same(toJson(bits('0011111111111'), Q, 'q'), {
    validity: 'good',
    flags: [
      'overflow',
      'outOfRange',
      'badReference',
      'oscillatory',
      'failure',
      'oldData',
      'inconsistent',
      'inaccurate',
      'test',
      'operatorBlocked',
    ],
    source: 'substituted',
  });
});

t.test('quality round-trips through JSON', async (t) => {
  for (const s of ['0000000000000', '0100000000000', '1100000100000', '0011111111111', '0000000000101']) {
    const json = toJson(bits(s), Q, 'q');
    t.same(fromJson(json, Q, 'q'), bits(s), s);
  }
});

t.test('double points, tap commands and flag sets read by name', async (t) => {
  t.same(
    ['00', '01', '10', '11'].map((b) => toJson(bits(b), undefined, 'stVal')),
    ['intermediate-state', 'off', 'on', 'bad-state'],
  );
  t.same(
    ['00', '01', '10', '11'].map((b) => toJson(bits(b), undefined, 'ctlVal')),
    ['stop', 'lower', 'higher', 'reserved'],
  );
  t.same(toJson(bits('000111'), undefined, 'TrgOps'), {
    dataChange: false,
    qualityChange: false,
    dataUpdate: true,
    integrity: true,
    gi: true,
  });
  t.same(toJson(bits('0111100010'), undefined, 'OptFlds'), {
    sequenceNumber: true,
    reportTimeStamp: true,
    reasonForInclusion: true,
    dataSetName: true,
    dataReference: false,
    bufferOverflow: false,
    entryId: false,
    configRevision: true,
    segmentation: false,
  });
  const dbpos: MmsType = { type: 'bit-string', size: 2 };
  t.same(fromJson('on', dbpos, 'stVal'), bits('10'));
  t.same(fromJson(1, dbpos, 'stVal'), bits('01'));
  t.same(fromJson('higher', dbpos, 'ctlVal'), bits('10'));
  t.same(fromJson({ integrity: true, gi: true }, { type: 'bit-string', size: 6 }, 'TrgOps'), bits('000011'));
  t.same(fromJson([false, true, true], { type: 'bit-string', size: -6 }, 'x'), bits('011'));
  t.same(fromJson('0110', { type: 'bit-string', size: 4 }, 'x'), bits('0110'));
});

t.test('time stamps of a stream of values, and of any instant, read as Date writes them', async (t) => {
  const base = Date.UTC(2026, 10, 30, 5, 0, 0, 0);
  const instants = [0, 1, 999, 1000, 86_399_999, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(2106, 1, 7, 6, 28, 15, 999)];
  for (let i = 0; i < 20_000; i++) instants.push(base + i * 3, base - i * 11);
  for (let i = 0; i < 20_000; i++) instants.push(((i * 2_654_435_761) % 2 ** 32) * 1000 + (i % 1000));
  const differ: number[] = [];
  for (const ms of instants) {
    const utc = utcTimeFromMs(ms);
    const expected = new Date(utc.seconds * 1000 + Math.floor(utc.fraction / 16_777)).toISOString();
    if ((toJson({ type: 'utc-time', value: utc }) as { time: string }).time !== expected) differ.push(ms);
  }
  t.same(differ.slice(0, 10), [], `${instants.length} time stamps`);
  const days = [0, 1, 10_000, 15_000];
  for (const d of days)
    for (const msOfDay of [0, 1, 43_200_000, 86_399_999])
      t.equal(
        toJson({ type: 'binary-time', value: { msOfDay, days: d } }),
        new Date(Date.UTC(1984, 0, 1) + d * 86_400_000 + msOfDay).toISOString(),
        `binary time of day ${d}, ${msOfDay} ms`,
      );
});

t.test('time stamps read as ISO time with their quality, and write from several forms', async (t) => {
  const ms = Date.UTC(2024, 4, 1, 12, 30, 15, 250);
  t.same(toJson({ type: 'utc-time', value: utcTimeFromMs(ms, 0x80 | 0x20 | 10) }), {
    time: '2024-05-01T12:30:15.250Z',
    flags: ['leapSecondsKnown', 'clockNotSynchronized'],
    accuracy: 10,
  });
  t.same(fromJson('2024-05-01T12:30:15.250Z', TS), { type: 'utc-time', value: utcTimeFromMs(ms) });
  t.same(fromJson(ms, TS), { type: 'utc-time', value: utcTimeFromMs(ms) });
  t.same(fromJson(new Date(ms), TS), { type: 'utc-time', value: utcTimeFromMs(ms) });
  t.same(fromJson({ time: '2024-05-01T12:30:15.250Z', flags: ['clockFailure'], accuracy: 3 }, TS), {
    type: 'utc-time',
    value: utcTimeFromMs(ms, 0x43),
  });
  const back = toJson(fromJson({ time: '2024-05-01T12:30:15.250Z', flags: ['clockFailure'], accuracy: 3 }, TS));
  t.same(back, { time: '2024-05-01T12:30:15.250Z', flags: ['clockFailure'], accuracy: 3 });
  t.same(fromJson('1984-01-02T00:00:00.500Z', { type: 'binary-time', withDate: true }), {
    type: 'binary-time',
    value: { msOfDay: 500, days: 1 },
  });
});

t.test('structures read as objects keyed by the type, and write from objects or arrays', async (t) => {
  const ms = Date.UTC(2024, 0, 1);
  const data: MmsData = {
    type: 'structure',
    value: [
      { type: 'structure', value: [{ type: 'float', value: 2.5, double: false }] },
      bits('0000000000000'),
      { type: 'utc-time', value: utcTimeFromMs(ms) },
    ],
  };
  const json = toJson(data, MV);
  t.same(json, {
    mag: { f: 2.5 },
    q: { validity: 'good', flags: [], source: 'process' },
    t: { time: '2024-01-01T00:00:00.000Z', flags: [], accuracy: 0 },
  });
  t.same(fromJson(json, MV), data);
  t.same(
    toJson(data),
    [[2.5], [false, false, false, false, false, false, false, false, false, false, false, false, false], toJson(data.value[2])],
    'without a type: arrays',
  );
  const pair: MmsType = {
    type: 'structure',
    packed: false,
    components: [
      { name: 'a', type: INT8 },
      { name: 'b', type: { type: 'boolean' } },
    ],
  };
  t.same(fromJson([1, true], pair), {
    type: 'structure',
    value: [
      { type: 'integer', value: 1 },
      { type: 'boolean', value: true },
    ],
  });
  const arr: MmsType = { type: 'array', packed: false, elements: 2, element: INT8 };
  t.same(fromJson([1, 2], arr), {
    type: 'array',
    value: [
      { type: 'integer', value: 1 },
      { type: 'integer', value: 2 },
    ],
  });
  t.same(toJson({ type: 'array', value: [{ type: 'integer', value: 1 }] }, arr), [1]);
});

t.test('basic values write within their type', async (t) => {
  t.same(fromJson(true, { type: 'boolean' }), { type: 'boolean', value: true });
  t.same(fromJson(-128, INT8), { type: 'integer', value: -128 });
  t.same(fromJson(127, INT8), { type: 'integer', value: 127 });
  t.same(fromJson(4294967295, INT32U), { type: 'unsigned', value: 4294967295 });
  t.same(fromJson('9223372036854775807', { type: 'integer', bits: 64 }), { type: 'integer', value: 9223372036854775807n });
  t.same(fromJson(10n, { type: 'integer', bits: 64 }), { type: 'integer', value: 10 });
  t.same(fromJson(1.25, F32), { type: 'float', value: 1.25, double: false });
  t.same(fromJson(1.25, { type: 'float', formatWidth: 64, exponentWidth: 11 }), { type: 'float', value: 1.25, double: true });
  t.same(fromJson('abc', { type: 'visible-string', size: 3 }), { type: 'visible-string', value: 'abc' });
  t.same(fromJson('über', { type: 'mms-string', size: -4 }), { type: 'mms-string', value: 'über' });
  t.same(fromJson('00ff', { type: 'octet-string', size: -64 }), { type: 'octet-string', value: Uint8Array.of(0, 255) });
  t.same(fromJson([1, 2], { type: 'octet-string', size: -64 }), { type: 'octet-string', value: Uint8Array.of(1, 2) });
  t.same(fromJson('1.0.9506', { type: 'obj-id' }), { type: 'obj-id', value: '1.0.9506' });
});

t.test('values that do not fit the type are refused with where and why', async (t) => {
  const cases: [unknown, MmsType, string | undefined, RegExp][] = [
    ['true', { type: 'boolean' }, 'stVal', /stVal: expected true or false/],
    [128, INT8, 'x', /128 is outside -128\.\.127 \(INT8\)/],
    [-129, INT8, 'x', /outside/],
    [1.5, INT8, 'x', /expected an integer/],
    [-1, INT32U, 'x', /outside 0\.\.4294967295 \(INT32U\)/],
    [4294967296, INT32U, 'x', /outside/],
    ['1e3', INT32U, 'x', /expected an integer/],
    ['1.5', F32, 'f', /f: expected a number/],
    [5, { type: 'visible-string', size: 3 }, 'x', /expected a string/],
    ['abcd', { type: 'visible-string', size: 3 }, 'x', /4 characters, at most 3 fit/],
    ['é', { type: 'visible-string', size: 3 }, 'x', /printable ASCII/],
    ['xyz', { type: 'octet-string', size: 4 }, 'x', /hex text or an array of bytes/],
    ['0011223344', { type: 'octet-string', size: 4 }, 'x', /5 octets, at most 4 fit/],
    [[300], { type: 'octet-string', size: 4 }, 'x', /hex text/],
    [[true], { type: 'bit-string', size: 2 }, 'x', /1 bits where the type has exactly 2/],
    ['012', { type: 'bit-string', size: 3 }, 'x', /expected bits/],
    ['maybe', { type: 'bit-string', size: 2 }, 'stVal', /expected one of intermediate-state, off, on, bad-state/],
    [{ validity: 'great' }, Q, 'q', /validity 'great'/],
    [{ flags: ['shiny'] }, Q, 'q', /'shiny' is not a quality flag/],
    [{ integrity: 'yes' }, { type: 'bit-string', size: 6 }, 'TrgOps', /flag 'integrity' must be true or false/],
    [{ bogus: true }, { type: 'bit-string', size: 6 }, 'TrgOps', /'bogus' is not a flag here/],
    ['not a time', TS, 't', /expected a time/],
    [{ time: 0, flags: ['late'] }, TS, 't', /'late' is not a time quality flag/],
    [{ mag: { f: 1 }, q: {} }, MV, 'mv', /missing t/],
    [{ mag: { f: 1 }, q: {}, t: 0, extra: 1 }, MV, 'mv', /unknown component extra/],
    [{ mag: { f: 'x' }, q: {}, t: 0 }, MV, 'mv', /mv\.mag\.f: expected a number/],
    [[1], MV, 'mv', /1 values for a structure of 3 components/],
    [[1, 2, 3], { type: 'array', packed: false, elements: 2, element: INT8 }, 'a', /an array of 2 elements/],
    ['1', { type: 'obj-id' }, 'o', /dotted object identifier/],
  ];
  for (const [value, type, name, why] of cases)
    t.throws(() => fromJson(value, type, name), { code: 'bad_value', message: why }, `${JSON.stringify(value)} as ${type.type}`);
  t.throws(() => fromJson(1, { type: 'generalized-time' }), { code: 'unsupported' });
});

t.test('type names for the browse tree', async (t) => {
  t.equal(typeName(F32), 'FLOAT32');
  t.equal(typeName(INT32U), 'INT32U');
  t.equal(typeName(Q, 'q'), 'Quality');
  t.equal(typeName({ type: 'bit-string', size: 2 }, 'stVal'), 'Dbpos');
  t.equal(typeName({ type: 'visible-string', size: -255 }), 'VisString255');
  t.equal(typeName(TS), 'Timestamp');
  t.equal(typeName(MV), 'Struct');
});
