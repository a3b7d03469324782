/**
 * COTP class 0: the CR the client sends, the CC, DR and ER it may receive, DT with EOT, segmentation and
 * reassembly, and headers that lie about their length.
 */
import t from 'tap';
import { createDtReassembler, decodeCotp, encodeConnectionRequest, encodeData, segmentData } from '../../src/mms/cotp.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

t.test('the CR carries TPDU size 8192 and the called then calling TSAP, as captured', async (t) => {
  const cr = encodeConnectionRequest({ srcRef: 1, callingTsap: fromHex('0001'), calledTsap: fromHex('0001') });
  t.equal(toHex(cr), '11e00000000100c0010dc2020001c1020001');
  t.match(decodeCotp(cr), {
    kind: 'CR',
    dstRef: 0,
    srcRef: 1,
    classOption: 0,
    tpduSize: 8192,
    callingTsap: fromHex('0001'),
    calledTsap: fromHex('0001'),
  });
  t.equal(toHex(encodeConnectionRequest({ srcRef: 0x1234, tpduSize: 1024 })), '09e00000123400c0010a');
  for (const size of [100, 127, 16384, 3000])
    t.equal(codecError(() => encodeConnectionRequest({ srcRef: 1, tpduSize: size })).code, 'bad_tpdu_size');
});

t.test('the captured CC reads with its references, TPDU size and selectors', async (t) => {
  t.match(decodeCotp(fromHex('11d00001000100c0010dc2020001c1020001')), {
    kind: 'CC',
    dstRef: 1,
    srcRef: 1,
    tpduSize: 8192,
    calledTsap: fromHex('0001'),
  });
});

t.test('DT carries EOT and the data after a three-octet header', async (t) => {
  t.same(decodeCotp(fromHex('02f080010001')), { kind: 'DT', eot: true, number: 0, data: fromHex('010001') });
  t.same(decodeCotp(fromHex('02f005aa')), { kind: 'DT', eot: false, number: 5, data: fromHex('aa') });
  t.equal(toHex(encodeData(fromHex('0100'))), '02f0800100');
  t.equal(toHex(encodeData(fromHex('0100'), false)), '02f0000100');
});

t.test('a TSDU longer than a TPDU is cut into DTs and reassembled on EOT', async (t) => {
  const tsdu = Uint8Array.from({ length: 1000 }, (_, i) => i & 0xff);
  const dts = segmentData(tsdu, 128);
  t.equal(dts.length, 8);
  t.ok(dts.every((d) => d.length <= 128));
  const reassembler = createDtReassembler();
  const out = dts.map((d) => {
    const dt = decodeCotp(d);
    if (dt.kind !== 'DT') throw new Error('not DT');
    return reassembler.push(dt);
  });
  t.same(out.slice(0, 7), Array(7).fill(undefined));
  t.same(out[7], tsdu);
  t.same(segmentData(new Uint8Array(0), 128).map(toHex), ['02f080'], 'an empty TSDU is one DT with EOT');
  t.equal(codecError(() => segmentData(tsdu, 3)).code, 'bad_tpdu_size');
});

t.test('a reassembled TSDU beyond its ceiling is refused and the reassembler starts over', async (t) => {
  const reassembler = createDtReassembler(10);
  t.equal(reassembler.push({ eot: false, data: new Uint8Array(8) }), undefined);
  t.equal(codecError(() => reassembler.push({ eot: false, data: new Uint8Array(8) })).code, 'tsdu_too_large');
  t.same(reassembler.push({ eot: true, data: fromHex('01') }), fromHex('01'));
});

t.test('DR says why the peer disconnects', async (t) => {
  t.same(decodeCotp(fromHex('06800001000280')), {
    kind: 'DR',
    dstRef: 1,
    srcRef: 2,
    reason: 128,
    reasonText: 'normal disconnect initiated by session entity',
    parameters: [],
  });
  t.match(decodeCotp(fromHex('0a800001000003e00201ff')), {
    kind: 'DR',
    reasonText: 'address unknown',
    parameters: [{ code: 0xe0, value: fromHex('01ff') }],
  });
  t.match(decodeCotp(fromHex('06800001000063')), { reason: 99, reasonText: 'reason 99' });
});

t.test('ER says what the peer could not read', async (t) => {
  t.same(decodeCotp(fromHex('0470000102')), { kind: 'ER', dstRef: 1, cause: 2, causeText: 'invalid TPDU type', parameters: [] });
  t.match(decodeCotp(fromHex('0870000103c102e000')), {
    kind: 'ER',
    cause: 3,
    causeText: 'invalid parameter value',
    parameters: [{ code: 0xc1, value: fromHex('e000') }],
  });
});

t.test('unknown TPDU codes and headers that lie are refused with typed errors', async (t) => {
  t.match(
    codecError(() => decodeCotp(fromHex('02a080'))),
    { layer: 'cotp', code: 'unknown_tpdu' },
  );
  t.equal(codecError(() => decodeCotp(fromHex('05f080'))).code, 'bad_length', 'LI beyond the TPDU');
  t.equal(codecError(() => decodeCotp(fromHex('ffd0' + '00'.repeat(300)))).code, 'bad_length');
  t.equal(codecError(() => decodeCotp(fromHex('01f0'))).code, 'bad_length', 'DT header without its octet');
  t.equal(codecError(() => decodeCotp(fromHex('08e00000000100c005'))).code, 'bad_parameter');
  t.equal(codecError(() => decodeCotp(fromHex('09e00000000100c0010e'))).code, 'bad_tpdu_size');
  t.equal(codecError(() => decodeCotp(fromHex('07e00000000100c0'))).code, 'bad_parameter', 'a parameter code without its length');
  t.equal(codecError(() => decodeCotp(fromHex('04d0000100'))).code, 'bad_length');
});

t.test('every prefix of the captured CR, CC and a DT decodes or is refused with a CodecError', async (t) => {
  for (const hex of [
    '11e00000000100c0010dc2020001c1020001',
    '11d00001000100c0010dc2020001c1020001',
    '02f0800100010061',
    '06800001000280',
  ]) {
    const bytes = fromHex(hex);
    for (let n = 0; n < bytes.length; n++)
      t.ok(['ok', 'truncated', 'bad_length', 'bad_parameter'].includes(outcome(() => decodeCotp(bytes.subarray(0, n)))));
  }
});
