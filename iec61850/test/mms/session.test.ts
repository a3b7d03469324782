/**
 * ISO session: CONNECT as captured, ACCEPT, DATA behind GIVE TOKENS, and the SPDUs that end a session.
 */
import t from 'tap';
import { decodeSpdu, encodeAbort, encodeConnect, encodeDataSpdu, encodeFinish } from '../../src/mms/session.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

const ACCEPT = fromHex('0e1505061301001601021402000234020001c103aabbcc');

t.test("CONNECT carries the capture's parameters before the user data", async (t) => {
  const spdu = encodeConnect({ userData: fromHex('3100') });
  t.equal(toHex(spdu), '0d180506130100160102140200023302000134020001c1023100');
  t.match(decodeSpdu(spdu), {
    kind: 'connect',
    version: 2,
    userRequirements: 2,
    callingSelector: fromHex('0001'),
    calledSelector: fromHex('0001'),
    userData: fromHex('3100'),
  });
});

t.test('user data over 254 octets gets the three-octet length, over 512 the extended user data parameter', async (t) => {
  const big = encodeConnect({ userData: new Uint8Array(300) });
  t.equal(toHex(big.subarray(0, 4)), '0dff0144');
  t.equal(toHex(big.subarray(24, 28)), 'c1ff012c');
  t.same(decodeSpdu(big).kind, 'connect');
  const huge = encodeConnect({ userData: new Uint8Array(600) });
  t.match(decodeSpdu(huge), { kind: 'connect', userData: new Uint8Array(600) });
  t.equal(huge[24], 194);
});

t.test('ACCEPT reads its version, requirements, selector and user data', async (t) => {
  t.match(decodeSpdu(ACCEPT), {
    kind: 'accept',
    version: 2,
    userRequirements: 2,
    calledSelector: fromHex('0001'),
    userData: fromHex('aabbcc'),
  });
});

t.test('DATA is GIVE TOKENS then DATA TRANSFER, the rest is user information', async (t) => {
  t.equal(toHex(encodeDataSpdu(fromHex('6100'))), '010001006100');
  t.same(decodeSpdu(fromHex('010001006100')), { kind: 'data', userData: fromHex('6100') });
  t.same(decodeSpdu(fromHex('0100010319010161')), { kind: 'data', userData: fromHex('61') }, 'parameters of DATA TRANSFER are skipped');
  t.equal(codecError(() => decodeSpdu(fromHex('0100'))).code, 'truncated');
  t.equal(codecError(() => decodeSpdu(fromHex('01000d00'))).code, 'unexpected_spdu');
});

t.test('FINISH, DISCONNECT, ABORT and ABORT ACCEPT read with their user data', async (t) => {
  t.equal(toHex(encodeFinish(fromHex('6100'))), '0904c1026100');
  t.match(decodeSpdu(fromHex('0907110103c1026100')), { kind: 'finish', userData: fromHex('6100') });
  t.match(decodeSpdu(fromHex('0a04c1026100')), { kind: 'disconnect', userData: fromHex('6100') });
  t.equal(toHex(encodeAbort(fromHex('a000'))), '1907110103c102a000');
  t.match(decodeSpdu(encodeAbort()), { kind: 'abort', parameters: [{ code: 17, value: fromHex('03') }] });
  t.notOk('userData' in decodeSpdu(encodeAbort()));
  t.same(decodeSpdu(fromHex('1a00')), { kind: 'abort-accept', parameters: [] });
  t.match(decodeSpdu(fromHex('0800')), { kind: 'not-finished' });
});

t.test('REFUSE gives its reason in words and the user data of reason 2', async (t) => {
  t.match(decodeSpdu(fromHex('0c03320181')), { kind: 'refuse', reason: 129, reasonText: 'session selector unknown' });
  t.match(decodeSpdu(fromHex('0c053203023000')), { kind: 'refuse', reason: 2, userData: fromHex('3000') });
  t.match(decodeSpdu(fromHex('0c00')), { kind: 'refuse', reasonText: 'no reason code' });
  t.match(decodeSpdu(fromHex('0c03320164')), { reasonText: 'reason code 100' });
});

t.test('unknown SPDUs, trailing octets and lengths that lie are refused with typed errors', async (t) => {
  t.match(
    codecError(() => decodeSpdu(fromHex('0200'))),
    { layer: 'session', code: 'unknown_spdu' },
  );
  t.equal(codecError(() => decodeSpdu(fromHex('0e00ff'))).code, 'trailing_bytes');
  t.equal(codecError(() => decodeSpdu(fromHex('0e05c10a00'))).code, 'length_past_end', 'SPDU length past the end');
  t.equal(codecError(() => decodeSpdu(fromHex('0e03c10a00'))).code, 'length_past_end', 'parameter length past the SPDU');
  t.equal(codecError(() => decodeSpdu(fromHex('0eff00'))).code, 'truncated');
  t.equal(codecError(() => decodeSpdu(new Uint8Array(0))).code, 'truncated');
  t.equal(codecError(() => decodeSpdu(fromHex('0e0405021301'))).code, 'length_past_end', 'a PI inside a PGI without its value');
});

t.test('every prefix of a CONNECT and an ACCEPT is refused with a CodecError', async (t) => {
  for (const spdu of [encodeConnect({ userData: fromHex('31023000') }), ACCEPT]) {
    for (let n = 0; n < spdu.length; n++)
      t.not(
        outcome(() => decodeSpdu(spdu.subarray(0, n))),
        'ok',
      );
  }
});
