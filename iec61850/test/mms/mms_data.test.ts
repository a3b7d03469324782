/**
 * The MMS Data CHOICE: every supported type round-trips with its ISO 9506 tag, unknown tags are refused
 * naming the tag, and nesting is bounded.
 */
import t from 'tap';
import { cons, readSingle } from '../../src/mms/ber.ts';
import { dataToPlain, decodeData, encodeData, MAX_DATA_DEPTH, type MmsData } from '../../src/mms/mms_data.ts';
import { codecError, fromHex, toHex } from './helpers.ts';

const cases: [MmsData, string][] = [
  [{ type: 'boolean', value: true }, '830101'],
  [{ type: 'bit-string', value: { bitLength: 6, bytes: fromHex('1c') } }, '8402021c'],
  [{ type: 'integer', value: -5 }, '8501fb'],
  [{ type: 'integer', value: -9223372036854775808n }, '85088000000000000000'],
  [{ type: 'unsigned', value: 5000 }, '86021388'],
  [{ type: 'unsigned', value: 4294967295 }, '860500ffffffff'],
  [{ type: 'float', value: 1.5, double: false }, '8705083fc00000'],
  [{ type: 'float', value: -2.25, double: true }, '87090bc002000000000000'],
  [{ type: 'octet-string', value: fromHex('0102') }, '89020102'],
  [{ type: 'visible-string', value: 'Events1' }, '8a074576656e747331'],
  [{ type: 'binary-time', value: { msOfDay: 9569256, days: 15666 } }, '8c06009203e83d32'],
  [{ type: 'bcd', value: 42 }, '8d012a'],
  [{ type: 'obj-id', value: '1.0.9506.2.1' }, '8f0528ca220201'],
  [{ type: 'mms-string', value: 'Ölweg' }, '9006c3966c776567'],
  [{ type: 'utc-time', value: { seconds: 1795315169, fraction: 0x800000, quality: 0x0a } }, '91086b0255e18000000a'],
  [
    {
      type: 'structure',
      value: [
        { type: 'boolean', value: false },
        { type: 'array', value: [] },
      ],
    },
    'a205830100a100',
  ],
  [
    {
      type: 'array',
      value: [
        { type: 'integer', value: 1 },
        { type: 'integer', value: 2 },
      ],
    },
    'a106850101850102',
  ],
];

t.test('every supported type round-trips with its context tag', async (t) => {
  for (const [data, hex] of cases) {
    t.equal(toHex(encodeData(data)), hex, data.type);
    t.same(decodeData(readSingle(fromHex(hex))), data, data.type);
  }
});

t.test('a plain view of values serves logs and tests', async (t) => {
  const value: MmsData = { type: 'structure', value: cases.slice(0, 10).map(([d]) => d) };
  t.same(dataToPlain(value), [true, '000111', -5, -9223372036854775808n, 5000, 4294967295, 1.5, -2.25, '0102', 'Events1']);
});

t.test('unknown and unsupported Data tags are refused naming the tag', async (t) => {
  t.match(
    codecError(() => decodeData(readSingle(fromHex('9f3201ff')))),
    { layer: 'mms', code: 'unknown_tag', message: /\[C50\]/ },
  );
  t.match(
    codecError(() => decodeData(readSingle(fromHex('8b00')))),
    { code: 'unsupported_data', message: /\[C11\] \(generalized-time\)/ },
  );
  t.match(
    codecError(() => decodeData(readSingle(fromHex('0101ff')))),
    { code: 'unknown_tag', message: /\[U1\]/ },
  );
});

t.test('a primitive where a structure belongs, and malformed values, are typed errors', async (t) => {
  t.equal(codecError(() => decodeData(readSingle(fromHex('a300')))).code, 'not_primitive');
  t.equal(codecError(() => decodeData(readSingle(fromHex('8200')))).code, 'not_constructed');
  t.equal(codecError(() => decodeData(readSingle(fromHex('83020101')))).code, 'bad_boolean');
  t.equal(codecError(() => decodeData(readSingle(fromHex('8703083fc0')))).code, 'bad_float');
  t.equal(codecError(() => decodeData(readSingle(fromHex('8c03000000')))).code, 'bad_binary_time');
  t.equal(codecError(() => decodeData(readSingle(fromHex('910100')))).code, 'bad_utc_time');
  t.equal(codecError(() => decodeData(readSingle(fromHex('9002c328')))).code, 'bad_utf8');
  t.equal(codecError(() => encodeData({ type: 'visible-string', value: 'é' })).code, 'not_visible');
});

t.test('nesting beyond the limit is refused both ways instead of exhausting the stack', async (t) => {
  let deep: MmsData = { type: 'boolean', value: true };
  for (let i = 0; i < MAX_DATA_DEPTH; i++) deep = { type: 'structure', value: [deep] };
  t.same(decodeData(readSingle(encodeData(deep))), deep, `${MAX_DATA_DEPTH} levels are fine`);
  t.equal(codecError(() => encodeData({ type: 'array', value: [deep] })).code, 'nesting_too_deep');
  let bytes = fromHex('830101');
  for (let i = 0; i < 5000; i++) bytes = cons('context', 2, bytes);
  t.equal(codecError(() => decodeData(readSingle(bytes))).code, 'nesting_too_deep');
});
