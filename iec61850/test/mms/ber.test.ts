/**
 * BER structure: identifiers, every length form and its boundaries, and a reader that refuses truncated
 * input and lengths that lie with a CodecError, never reading past its buffer.
 */
import t from 'tap';
import {
  concat,
  childrenOf,
  cons,
  encodeLength,
  encodeTag,
  expectTag,
  onlyChildOf,
  prim,
  primitiveOf,
  readLength,
  readSingle,
  readTag,
  readTlv,
  readTlvs,
  tagName,
} from '../../src/mms/ber.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

t.test('single-octet identifiers carry class, constructed bit and number', async (t) => {
  t.same(readTag(fromHex('a1'), 0), { cls: 'context', constructed: true, tag: 1, next: 1 });
  t.same(readTag(fromHex('61'), 0), { cls: 'application', constructed: true, tag: 1, next: 1 });
  t.same(readTag(fromHex('1a'), 0), { cls: 'universal', constructed: false, tag: 26, next: 1 });
  t.same(readTag(fromHex('de'), 0), { cls: 'private', constructed: false, tag: 30, next: 1 });
  t.equal(toHex(encodeTag('context', true, 30)), 'be');
  t.equal(toHex(encodeTag('universal', false, 16)), '10');
});

t.test('multi-octet tag numbers round-trip from 31 up to four base-128 octets', async (t) => {
  for (const [tag, hex] of [
    [31, 'bf1f'],
    [72, 'bf48'],
    [127, 'bf7f'],
    [128, 'bf8100'],
    [16383, 'bfff7f'],
    [0x0fffffff, 'bfffffff7f'],
  ] as const) {
    t.equal(toHex(encodeTag('context', true, tag)), hex, `tag ${tag}`);
    t.same(readTag(fromHex(hex), 0), { cls: 'context', constructed: true, tag, next: hex.length / 2 });
  }
  t.equal(codecError(() => encodeTag('context', false, 0x10000000)).code, 'bad_tag');
  t.equal(codecError(() => readTag(fromHex('bf8181818101'), 0)).code, 'tag_too_long');
  t.equal(codecError(() => readTag(fromHex('bf8001'), 0)).code, 'bad_tag', 'a leading zero group is refused');
  t.equal(codecError(() => readTag(fromHex('bf81'), 0)).code, 'truncated');
  t.equal(codecError(() => readTag(new Uint8Array(0), 0)).code, 'truncated');
});

t.test('lengths use the short form up to 127 and the shortest long form above', async (t) => {
  const cases: [number, string][] = [
    [0, '00'],
    [1, '01'],
    [127, '7f'],
    [128, '8180'],
    [255, '81ff'],
    [256, '820100'],
    [65535, '82ffff'],
    [65536, '83010000'],
    [0xffffff, '83ffffff'],
    [0x1000000, '8401000000'],
    [0xffffffff, '84ffffffff'],
  ];
  for (const [n, hex] of cases) {
    t.equal(toHex(encodeLength(n)), hex, `${n}`);
    t.same(readLength(fromHex(hex), 0), { length: n, next: hex.length / 2 });
  }
  t.equal(codecError(() => encodeLength(-1)).code, 'bad_length');
  t.equal(codecError(() => encodeLength(2 ** 32)).code, 'bad_length');
});

t.test('non-minimal long-form lengths are read, as BER allows', async (t) => {
  t.same(readLength(fromHex('8105'), 0), { length: 5, next: 2 });
  t.same(readLength(fromHex('8400000005'), 0), { length: 5, next: 5 });
});

t.test('the indefinite form, five-octet lengths and the reserved octet are refused', async (t) => {
  t.equal(codecError(() => readLength(fromHex('80'), 0)).code, 'indefinite_length');
  t.equal(codecError(() => readLength(fromHex('850000000001'), 0)).code, 'length_too_long');
  t.equal(codecError(() => readLength(fromHex('ff'), 0)).code, 'bad_length');
  t.equal(codecError(() => readTlv(fromHex('3080020101 0000'))).code, 'indefinite_length');
});

t.test('a length whose octets are cut off is truncated input', async (t) => {
  for (const hex of ['', '81', '8201', '83ffff', '84ffffff']) t.equal(codecError(() => readLength(fromHex(hex), 0)).code, 'truncated', hex);
});

t.test('a value longer than what remains is refused as length_past_end, whatever the length form', async (t) => {
  for (const hex of ['0401', '04020a', '0481800000', '048201000a', '0484ffffffff0a']) {
    const e = codecError(() => readTlv(fromHex(hex)));
    t.equal(e.code, 'length_past_end', hex);
    t.equal(e.layer, 'ber');
  }
  t.match(codecError(() => readTlv(fromHex('a50a0101'))).message, /\[C5\] at offset 0 declares 10 bytes, 2 remain/);
});

t.test('a length that is too short leaves bytes the parent refuses', async (t) => {
  t.equal(codecError(() => readSingle(fromHex('3003020101 ff'))).code, 'trailing_bytes');
  t.equal(codecError(() => childrenOf(readSingle(fromHex('3004020301 01')))).code, 'length_past_end');
  t.equal(codecError(() => childrenOf(readSingle(fromHex('3002020101')))).code, 'trailing_bytes');
  t.equal(codecError(() => childrenOf(readSingle(fromHex('30020201')))).code, 'length_past_end');
});

t.test('every prefix of a nested value is refused with a CodecError', async (t) => {
  const bytes = fromHex('3081899f1f0101' + 'a0' + '8181' + '04' + '7f' + '00'.repeat(127));
  const codes = new Set<string>();
  for (let n = 0; n < bytes.length; n++) {
    const code = outcome(() => {
      const top = readSingle(bytes.subarray(0, n));
      for (const c of childrenOf(top)) if (c.constructed) childrenOf(c);
    });
    t.not(code, 'ok');
    codes.add(code);
  }
  t.same([...codes].sort(), ['length_past_end', 'truncated']);
});

t.test('constructed values nest and read back child by child', async (t) => {
  const bytes = cons(
    'context',
    0,
    prim('universal', 2, Uint8Array.of(1)),
    cons('context', 4, cons('context', 1, prim('universal', 26, new TextEncoder().encode('LD')))),
  );
  t.equal(toHex(bytes), 'a00b020101a406a1041a024c44');
  const top = readSingle(bytes);
  const [id, service] = childrenOf(top);
  t.same(primitiveOf(id), Uint8Array.of(1));
  t.equal(tagName(service), '[C4]');
  t.equal(toHex(primitiveOf(onlyChildOf(onlyChildOf(service)))), '4c44');
  t.same(readTlvs(new Uint8Array(0)), []);
});

t.test('a long value gets a long-form length and reads back', async (t) => {
  const value = new Uint8Array(300).fill(7);
  const bytes = prim('universal', 4, value);
  t.equal(toHex(bytes.subarray(0, 4)), '0482012c');
  t.same(readSingle(bytes).value, value);
});

t.test('shape errors name what was expected', async (t) => {
  t.equal(codecError(() => childrenOf(readSingle(fromHex('0400')))).code, 'not_constructed');
  t.equal(codecError(() => primitiveOf(readSingle(fromHex('3000')))).code, 'not_primitive');
  t.equal(codecError(() => onlyChildOf(readSingle(fromHex('a0060201010201 02')))).code, 'bad_structure');
  const e = codecError(() => expectTag(readSingle(fromHex('a100')), 'context', 0, 'mode selector'));
  t.equal(e.code, 'unexpected_tag');
  t.match(e.message, /mode selector expected as \[C0\], got \[C1\]/);
});

t.test('readTlvs reads short, long-length and high-tag TLVs as readTlv reads them one by one', async (t) => {
  const parts = [
    prim('universal', 2, Uint8Array.of(5)),
    prim('context', 40, Uint8Array.of(1, 2)),
    prim('universal', 4, new Uint8Array(200).fill(9)),
    cons('context', 3, prim('universal', 1, Uint8Array.of(0xff))),
    prim('universal', 5, new Uint8Array(0)),
  ];
  const bytes = concat(...parts);
  const oneByOne = [];
  for (let at = 0; at < bytes.length; ) {
    const { tlv, next } = readTlv(bytes, at);
    oneByOne.push(tlv);
    at = next;
  }
  t.same(readTlvs(bytes), oneByOne);
  t.equal(oneByOne.length, 5);
  t.equal(codecError(() => readTlvs(bytes.subarray(0, bytes.length - 1))).code, 'truncated', 'the last one cut short');
  t.equal(codecError(() => readTlvs(fromHex('0405010203'))).code, 'length_past_end');
});
