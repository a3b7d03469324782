/**
 * ACSE: the AARQ as captured and with a password, AARE accepted or rejected with a clear reason,
 * release and abort.
 */
import t from 'tap';
import { aareRefusal, decodeAcse, encodeAarq, encodeAbrt, encodeRlrq, type Aare } from '../../src/mms/acse.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

const INITIATE = fromHex('a800');

t.test('the AARQ names the MMS context, the AP titles and AE qualifiers, and carries the initiate', async (t) => {
  const aarq = encodeAarq({
    calledApTitle: '1.1.1.999.1',
    calledAeQualifier: 12,
    callingApTitle: '1.1.1.999',
    callingAeQualifier: 12,
    userInformation: INITIATE,
  });
  t.equal(toHex(aarq), '602fa107060528ca220203a20706052901876701a30302010ca606060429018767a70302010cbe092807020103a002a800');
  t.same(decodeAcse(aarq), {
    kind: 'AARQ',
    applicationContext: '1.0.9506.2.3',
    calledApTitle: '1.1.1.999.1',
    calledAeQualifier: 12,
    callingApTitle: '1.1.1.999',
    callingAeQualifier: 12,
    userInformation: INITIATE,
  });
});

t.test('without titles the AARQ holds only the context and the user information', async (t) => {
  t.equal(toHex(encodeAarq({ userInformation: INITIATE })), '6014a107060528ca220203be092807020103a002a800');
});

t.test('a password goes with the authentication requirement and mechanism 2.2.3.1', async (t) => {
  const aarq = encodeAarq({ password: 'top secret', userInformation: INITIATE });
  t.match(toHex(aarq), /8a0207808b03520301ac0c800a746f7020736563726574be/);
  t.match(decodeAcse(aarq), { kind: 'AARQ', mechanism: '2.2.3.1', password: 'top secret' }, 'a responder reads the password back');
});

t.test('the captured AARE accepts the association', async (t) => {
  const aare = decodeAcse(fromHex('6120a107060528ca220203a203020100a305a103020100be092807020103a002a900'));
  t.same(aare, {
    kind: 'AARE',
    applicationContext: '1.0.9506.2.3',
    result: 0,
    resultText: 'accepted',
    diagnostic: { source: 'service-user', code: 0, text: 'null' },
    userInformation: fromHex('a900'),
  });
  t.equal(aareRefusal(aare as Aare), undefined);
});

t.test('an AARE with result rejected says why in words', async (t) => {
  const aare = decodeAcse(fromHex('6115a107060528ca220203a203020101a305a10302010d'));
  t.match(aare, {
    kind: 'AARE',
    result: 1,
    resultText: 'rejected (permanent)',
    diagnostic: { source: 'service-user', code: 13, text: 'authentication failure' },
  });
  t.equal(aareRefusal(aare as Aare), 'association rejected (permanent): authentication failure (peer application)');
  const provider = decodeAcse(fromHex('610ca203020102a305a203020102'));
  t.equal(aareRefusal(provider as Aare), 'association rejected (transient): no common ACSE version (peer ACSE)');
  t.equal(aareRefusal(decodeAcse(fromHex('6105a203020101')) as Aare), 'association rejected (permanent)');
});

t.test('an AARE without a result, or with an unknown diagnostic source, is refused', async (t) => {
  t.match(
    codecError(() => decodeAcse(fromHex('6100'))),
    { layer: 'acse', code: 'bad_aare' },
  );
  t.equal(codecError(() => decodeAcse(fromHex('610ca203020101a305a503020101'))).code, 'unknown_tag');
});

t.test('RLRQ and RLRE carry their reasons; ABRT its source and diagnostic', async (t) => {
  t.equal(toHex(encodeRlrq()), '6203800100');
  t.same(decodeAcse(encodeRlrq()), { kind: 'RLRQ', reason: 0, reasonText: 'normal' });
  t.same(decodeAcse(fromHex('6303800101')), { kind: 'RLRE', reason: 1, reasonText: 'not finished' });
  t.same(decodeAcse(fromHex('6300')), { kind: 'RLRE', reasonText: 'no reason given' });
  t.equal(toHex(encodeAbrt()), '6403800100');
  t.same(decodeAcse(fromHex('6406800101810105')), {
    kind: 'ABRT',
    source: 1,
    sourceText: 'service provider',
    diagnostic: 5,
    diagnosticText: 'authentication failure',
  });
  t.equal(codecError(() => decodeAcse(fromHex('6400'))).code, 'bad_abrt');
});

t.test('APDUs of other tags or user information without an EXTERNAL are refused', async (t) => {
  t.match(
    codecError(() => decodeAcse(fromHex('6500'))),
    { layer: 'acse', code: 'unknown_tag' },
  );
  t.equal(codecError(() => decodeAcse(fromHex('3000'))).code, 'unknown_tag');
  t.equal(codecError(() => decodeAcse(fromHex('6004be023000'))).code, 'bad_user_information');
  t.equal(codecError(() => decodeAcse(fromHex('6007be052803020103'))).code, 'bad_user_information');
});

t.test('every prefix of an AARQ is refused with a CodecError', async (t) => {
  const aarq = encodeAarq({ calledApTitle: '1.1.1.999.1', password: 'x', userInformation: INITIATE });
  for (let n = 0; n < aarq.length; n++)
    t.not(
      outcome(() => decodeAcse(aarq.subarray(0, n))),
      'ok',
    );
});
