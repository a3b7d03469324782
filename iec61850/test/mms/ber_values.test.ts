/**
 * BER value contents and the MMS value shapes: integers of every width and sign, booleans, bit strings,
 * strings, object identifiers, MMS floats, UtcTime and BinaryTime, each with its malformed forms.
 */
import t from 'tap';
import * as v from '../../src/mms/ber_values.ts';
import { codecError, fromHex, toHex } from './helpers.ts';

t.test("integers use the shortest two's complement and read back, bigints beyond 2^53", async (t) => {
  const cases: [number | bigint, string][] = [
    [0, '00'],
    [1, '01'],
    [127, '7f'],
    [128, '0080'],
    [255, '00ff'],
    [256, '0100'],
    [65000, '00fde8'],
    [-1, 'ff'],
    [-128, '80'],
    [-129, 'ff7f'],
    [-32768, '8000'],
    [2 ** 31 - 1, '7fffffff'],
    [-(2 ** 31), '80000000'],
    [2 ** 31, '0080000000'],
    [-(2 ** 31) - 1, 'ff7fffffff'],
    [9223372036854775807n, '7fffffffffffffff'],
    [-9223372036854775808n, '8000000000000000'],
  ];
  for (const [n, hex] of cases) {
    t.equal(toHex(v.encodeInteger(n)), hex, `${n}`);
    t.equal(v.decodeInteger(fromHex(hex)), BigInt(n));
  }
  t.equal(v.toNumberIfSafe(v.decodeInteger(fromHex('7fffffffffffffff'))), 9223372036854775807n);
  t.equal(v.toNumberIfSafe(v.decodeInteger(fromHex('00fde8'))), 65000);
  t.equal(v.decodeSmallInteger(fromHex('ff7f')), -129);
  t.equal(codecError(() => v.decodeSmallInteger(fromHex('7fffffffffffffff'))).code, 'integer_out_of_range');
  t.equal(codecError(() => v.encodeInteger(2 ** 60)).code, 'bad_integer');
});

t.test('unsigned values get a leading zero when needed and read as magnitudes', async (t) => {
  t.equal(toHex(v.encodeUnsigned(5000)), '1388');
  t.equal(toHex(v.encodeUnsigned(0xffffffffffffffffn)), '00ffffffffffffffff');
  t.equal(v.decodeUnsigned(fromHex('00ffffffffffffffff')), 0xffffffffffffffffn);
  t.equal(v.decodeUnsigned(fromHex('ff')), 255n, 'a missing leading zero is tolerated');
  t.equal(codecError(() => v.encodeUnsigned(-1)).code, 'bad_integer');
});

t.test('empty and over-long integers are refused', async (t) => {
  t.equal(codecError(() => v.decodeInteger(new Uint8Array(0))).code, 'bad_integer');
  t.equal(codecError(() => v.decodeInteger(new Uint8Array(10))).code, 'integer_too_long');
  t.equal(codecError(() => v.decodeUnsigned(new Uint8Array(10))).code, 'integer_too_long');
});

t.test('booleans are one octet, any non-zero is true, true is written as 01', async (t) => {
  t.equal(toHex(v.encodeBoolean(true)), '01');
  t.equal(toHex(v.encodeBoolean(false)), '00');
  t.equal(v.decodeBoolean(fromHex('ff')), true);
  t.equal(v.decodeBoolean(fromHex('00')), false);
  for (const hex of ['', '0101']) t.equal(codecError(() => v.decodeBoolean(fromHex(hex))).code, 'bad_boolean');
});

t.test('bit strings carry their unused-bits octet and clear pad bits', async (t) => {
  t.same(v.decodeBitString(fromHex('067880')), { bitLength: 10, bytes: fromHex('7880') });
  t.same(v.bitsOf(v.decodeBitString(fromHex('0204'))), [false, false, false, false, false, true]);
  t.equal(toHex(v.encodeBitString(v.bitStringFromBits([false, false, false, true, true, true]))), '021c');
  t.equal(toHex(v.encodeBitString({ bitLength: 4, bytes: fromHex('ff') })), '04f0', 'pad bits are zeroed');
  t.equal(toHex(v.encodeBitString({ bitLength: 0, bytes: new Uint8Array(0) })), '00');
  t.same(v.decodeBitString(fromHex('00')), { bitLength: 0, bytes: new Uint8Array(0) });
  t.equal(toHex(v.encodeBitString({ bitLength: 16, bytes: fromHex('f100') })), '00f100');
  for (const hex of ['', '08ff', '09ffff', '07']) t.equal(codecError(() => v.decodeBitString(fromHex(hex))).code, 'bad_bit_string', hex);
  t.equal(codecError(() => v.encodeBitString({ bitLength: 9, bytes: fromHex('ff') })).code, 'bad_bit_string');
});

t.test('visible strings refuse what they cannot hold; MMS strings are UTF-8', async (t) => {
  t.equal(toHex(v.encodeVisibleString('LLN0$RP')), '4c4c4e30245250');
  t.equal(v.decodeVisibleString(fromHex('4576656e747331')), 'Events1');
  t.equal(codecError(() => v.encodeVisibleString('Grüße')).code, 'not_visible');
  t.equal(codecError(() => v.encodeVisibleString('a\nb')).code, 'not_visible');
  t.equal(v.decodeUtf8String(v.encodeUtf8String('Schütz ⚡')), 'Schütz ⚡');
  t.equal(codecError(() => v.decodeUtf8String(fromHex('c328'))).code, 'bad_utf8');
});

t.test('object identifiers of the ISO stack round-trip in dotted form', async (t) => {
  const cases: [string, string][] = [
    ['2.2.1.0.1', '52010001'],
    ['1.0.9506.2.1', '28ca220201'],
    ['1.0.9506.2.3', '28ca220203'],
    ['2.1.1', '5101'],
    ['1.1.1.999.1', '2901876701'],
    ['2.2.3.1', '520301'],
    ['2.999.3', '883703'],
    ['0.0', '00'],
  ];
  for (const [oid, hex] of cases) {
    t.equal(toHex(v.encodeOid(oid)), hex, oid);
    t.equal(v.decodeOid(fromHex(hex)), oid);
  }
  for (const bad of ['1', '3.1', '1.40', '1.a', '', '1..2']) t.equal(codecError(() => v.encodeOid(bad)).code, 'bad_oid', bad);
  for (const hex of ['', '2887', '28800a', 'ffffffffffffffffff7f'])
    t.equal(codecError(() => v.decodeOid(fromHex(hex))).code, 'bad_oid', hex);
});

t.test('MMS floats are an exponent width then IEEE 754 single or double', async (t) => {
  t.same(v.decodeMmsFloat(fromHex('08bf239fec')), { value: Math.fround(-0.6391589641571045), double: false });
  t.equal(toHex(v.encodeMmsFloat({ value: 1.5, double: false })), '083fc00000');
  t.equal(toHex(v.encodeMmsFloat({ value: 1.5, double: true })), '0b3ff8000000000000');
  t.same(v.decodeMmsFloat(fromHex('0b3ff8000000000000')), { value: 1.5, double: true });
  for (const hex of ['', '08', '083fc000', '0b3fc00000', '083ff8000000000000', '0a3fc00000'])
    t.equal(codecError(() => v.decodeMmsFloat(fromHex(hex))).code, 'bad_float', hex);
});

t.test('UtcTime is 4 octets of seconds, 3 of fraction and 1 of quality', async (t) => {
  const time = { seconds: 1795315169, fraction: 0x800000, quality: 0x0a };
  t.equal(toHex(v.encodeUtcTime(time)), '6b0255e18000000a');
  t.same(v.decodeUtcTime(fromHex('6b0255e18000000a')), time);
  t.equal(v.utcTimeToMs(time), 1795315169500);
  t.same(v.utcTimeFromMs(1795315169500, 0x0a), time);
  t.equal(v.utcTimeToMs(v.utcTimeFromMs(1795315169257)), 1795315169257, 'a time of whole milliseconds reads back as written');
  for (const hex of ['', '6b0255e1800000', '6b0255e18000000a00'])
    t.equal(codecError(() => v.decodeUtcTime(fromHex(hex))).code, 'bad_utc_time');
  t.equal(codecError(() => v.encodeUtcTime({ seconds: -1, fraction: 0, quality: 0 })).code, 'bad_utc_time');
  t.equal(codecError(() => v.encodeUtcTime({ seconds: 0, fraction: 0x1000000, quality: 0 })).code, 'bad_utc_time');
});

t.test('BinaryTime is 4 octets of time of day or 6 with days since 1984', async (t) => {
  t.same(v.decodeBinaryTime(fromHex('009203e83d32')), { msOfDay: 9569256, days: 15666 });
  t.same(v.decodeBinaryTime(fromHex('009203e8')), { msOfDay: 9569256 });
  t.equal(new Date(v.binaryTimeToMs({ msOfDay: 9569256, days: 15666 })!).toISOString(), '2026-11-22T02:39:29.256Z');
  t.equal(v.binaryTimeToMs({ msOfDay: 1 }), undefined);
  t.same(v.binaryTimeFromMs(Date.UTC(2026, 10, 22, 2, 39, 29, 256)), { msOfDay: 9569256, days: 15666 });
  t.equal(toHex(v.encodeBinaryTime({ msOfDay: 9569256, days: 15666 })), '009203e83d32');
  t.equal(toHex(v.encodeBinaryTime({ msOfDay: 9569256 })), '009203e8');
  for (const hex of ['', '0092', '009203e83d', '009203e83d3200'])
    t.equal(codecError(() => v.decodeBinaryTime(fromHex(hex))).code, 'bad_binary_time');
  t.equal(codecError(() => v.encodeBinaryTime({ msOfDay: 86400000 })).code, 'bad_binary_time');
});
