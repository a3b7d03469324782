/**
 * ISO presentation: the CP the client sends, the CPA and CPR it may receive, PDV lists, ARU and ARP.
 */
import t from 'tap';
import {
  decodeAbortPresentation,
  decodeConnectAccept,
  decodeConnectPresentation,
  decodeConnectReject,
  decodeUserData,
  encodeAbortPresentation,
  encodeConnectPresentation,
  encodeUserData,
} from '../../src/mms/presentation.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

/** The captured CPA, with the AARE inside. */
const CPA = fromHex(
  '3172a003800101a26b830400000001a512300780010081025101300780010081025101614f304d020101a0486146a107060528ca220203a203020100a305a1030201' +
    '00be2f282d020103a028a926800300fde881010582010583010aa416800101810305f100820c03ee1c000000000000000118',
);
const AARE = CPA.subarray(CPA.length - 72);

t.test('the CP has normal mode, both selectors, ACSE and MMS contexts in BER, then the AARQ in context 1', async (t) => {
  const cp = encodeConnectPresentation({ userData: fromHex('6000') });
  t.equal(
    toHex(cp),
    '3143a003800101a23c810400000001820400000001a423300f0201010604520100013004060251013010020103060528ca22020130040602510161093007020101a0026000',
  );
  t.same(decodeConnectPresentation(cp), {
    kind: 'CP',
    callingSelector: fromHex('00000001'),
    calledSelector: fromHex('00000001'),
    contexts: [
      { id: 1, abstractSyntax: '2.2.1.0.1', transferSyntaxes: ['2.1.1'] },
      { id: 3, abstractSyntax: '1.0.9506.2.1', transferSyntaxes: ['2.1.1'] },
    ],
    userData: [{ contextId: 1, data: fromHex('6000') }],
  });
});

t.test('a CPA reads its responding selector and one result per proposed context', async (t) => {
  t.same(decodeConnectAccept(CPA), {
    kind: 'CPA',
    respondingSelector: fromHex('00000001'),
    results: [
      { result: 0, resultText: 'acceptance', transferSyntax: '2.1.1' },
      { result: 0, resultText: 'acceptance', transferSyntax: '2.1.1' },
    ],
    userData: [{ contextId: 1, data: AARE }],
  });
  t.equal(AARE[0], 0x61, 'the AARE');
});

t.test('user data is a PDV list per value, read back with its context id', async (t) => {
  const data = encodeUserData({ contextId: 3, data: fromHex('a100') });
  t.equal(toHex(data), '61093007020103a002a100');
  t.same(decodeUserData(data), [{ contextId: 3, data: fromHex('a100') }]);
  t.same(decodeUserData(fromHex('610d300b06025101020103a002a100')), [{ contextId: 3, transferSyntax: '2.1.1', data: fromHex('a100') }]);
  t.same(decodeUserData(fromHex('6109300702010381020102')), [{ contextId: 3, data: fromHex('0102') }], 'octet-aligned values');
});

t.test('user data that is not fully encoded or lacks fields is refused', async (t) => {
  t.match(
    codecError(() => decodeUserData(fromHex('6000'))),
    { layer: 'presentation', code: 'unsupported' },
  );
  t.equal(codecError(() => decodeUserData(fromHex('61063004a002a100'))).code, 'bad_user_data');
  t.equal(codecError(() => decodeUserData(fromHex('61073005020103a300'))).code, 'unknown_tag');
  t.equal(codecError(() => decodeUserData(fromHex('61093007020103a003a100'))).code, 'length_past_end');
  t.equal(
    codecError(() => decodeUserData(fromHex('610b3009020103a00401000100'))).code,
    'bad_structure',
    'an explicit value holding two values',
  );
});

t.test('a CP-type in x.410 mode or without normal-mode parameters is refused', async (t) => {
  t.equal(codecError(() => decodeConnectAccept(fromHex('3105a003800100'))).code, 'unsupported_mode');
  t.equal(codecError(() => decodeConnectAccept(fromHex('3105a003800101'))).code, 'bad_structure');
  t.equal(codecError(() => decodeConnectAccept(fromHex('3100'))).code, 'bad_mode');
  t.equal(codecError(() => decodeConnectAccept(fromHex('3000'))).code, 'unexpected_tag');
});

t.test('a CPR gives the provider reason in words', async (t) => {
  t.match(decodeConnectReject(fromHex('30038a0103')), {
    kind: 'CPR',
    providerReason: 3,
    reasonText: 'called presentation address unknown',
  });
  t.match(decodeConnectReject(fromHex('300ba509300780010281025101')), {
    results: [{ result: 2, resultText: 'provider-rejection' }],
    reasonText: 'no provider reason',
  });
});

t.test('ARU carries the ACSE ABRT; ARP gives the abort reason', async (t) => {
  const aru = encodeAbortPresentation(fromHex('6403800100'));
  t.equal(toHex(aru), 'a00e610c300a020101a0056403800100');
  t.same(decodeAbortPresentation(aru), { kind: 'ARU', userData: [{ contextId: 1, data: fromHex('6403800100') }] });
  t.same(decodeAbortPresentation(fromHex('3006800101810104')), { kind: 'ARP', reason: 1, reasonText: 'unrecognized PPDU', eventId: 4 });
  t.same(decodeAbortPresentation(fromHex('3000')), { kind: 'ARP', reasonText: 'no reason given' });
  t.same(decodeAbortPresentation(fromHex('a000')), { kind: 'ARU', userData: [] });
  t.equal(codecError(() => decodeAbortPresentation(fromHex('3100'))).code, 'unexpected_tag');
});

t.test('every prefix of a CP and a CPA is refused with a CodecError', async (t) => {
  for (const bytes of [encodeConnectPresentation({ userData: fromHex('6000') }), CPA]) {
    for (let n = 0; n < bytes.length; n++) {
      t.not(
        outcome(() => decodeConnectPresentation(bytes.subarray(0, n))),
        'ok',
      );
      t.not(
        outcome(() => decodeConnectAccept(bytes.subarray(0, n))),
        'ok',
      );
    }
  }
});
