/**
 * MMS PDUs: initiate as captured, every confirmed request the client sends, the responses servers give
 * (type descriptions, failures), confirmed errors, rejects, conclude, and tags this client does not know.
 */
import t from 'tap';
import { cons, prim } from '../../src/mms/ber.ts';
import { boolTlv, intTlv, nullTlv, visibleTlv } from '../../src/mms/ber_fields.ts';
import { encodeObjectName, encodeVariableAccess, objectNameOf, objectNameText } from '../../src/mms/mms_access.ts';
import { DEFAULT_INITIATE, decodeMmsPdu, encodeMmsPdu, type MmsPdu } from '../../src/mms/mms_pdu.ts';
import type { ConfirmedRequest } from '../../src/mms/mms_services.ts';
import { encodeType, type MmsType } from '../../src/mms/mms_types.ts';
import { codecError, fromHex, outcome, toHex } from './helpers.ts';

const ANIN = objectNameOf('simpleIOGenericIO/GGIO1$MX$AnIn1$mag$f');
const response = (invokeId: number, service: Uint8Array) => decodeMmsPdu(cons('context', 1, intTlv('universal', 2, invokeId), service));

t.test('the initiate request with the default parameters is the captured one and reads back', async (t) => {
  const pdu = encodeMmsPdu({ pdu: 'initiate-request', ...DEFAULT_INITIATE });
  t.equal(toHex(pdu), 'a826800300fde881010582010583010aa416800101810305f100820c03ee1c00000408000079ef18');
  t.same(decodeMmsPdu(pdu), { pdu: 'initiate-request', ...DEFAULT_INITIATE });
  const minimal = { ...DEFAULT_INITIATE, localDetail: undefined, nestingLevel: undefined };
  t.same(decodeMmsPdu(encodeMmsPdu({ pdu: 'initiate-response', ...minimal })), {
    pdu: 'initiate-response',
    maxServOutstandingCalling: 5,
    maxServOutstandingCalled: 5,
    version: 1,
    parameterCbb: DEFAULT_INITIATE.parameterCbb,
    servicesSupported: DEFAULT_INITIATE.servicesSupported,
  });
  t.equal(codecError(() => decodeMmsPdu(fromHex('a903810105'))).code, 'bad_initiate');
  t.equal(
    codecError(() =>
      decodeMmsPdu(cons('context', 9, intTlv('context', 1, 5), intTlv('context', 2, 5), cons('context', 4, intTlv('context', 0, 1)))),
    ).code,
    'bad_initiate',
  );
});

t.test('the captured read request is what the client encodes', async (t) => {
  const pdu = encodeMmsPdu({
    pdu: 'confirmed-request',
    invokeId: 1,
    request: { service: 'read', specificationWithResult: false, variables: { kind: 'variables', names: [ANIN] } },
  });
  t.equal(
    toHex(pdu),
    'a038020101a433a131a02f302da02ba1291a1173696d706c65494f47656e65726963494f1a144747494f31244d5824416e496e31246d61672466',
  );
});

t.test('every confirmed request round-trips with its invoke id', async (t) => {
  const requests: ConfirmedRequest[] = [
    { service: 'identify' },
    { service: 'getNameList', objectClass: 'domain', scope: { scope: 'vmd' } },
    { service: 'getNameList', objectClass: 'namedVariable', scope: { scope: 'domain', domain: 'LD0' }, continueAfter: 'GGIO1$ST' },
    { service: 'getNameList', objectClass: 'namedVariableList', scope: { scope: 'aa' } },
    { service: 'getVariableAccessAttributes', name: objectNameOf('LD0/GGIO1$ST') },
    { service: 'read', specificationWithResult: true, variables: { kind: 'list', name: objectNameOf('LD0/LLN0$Events') } },
    {
      service: 'read',
      specificationWithResult: false,
      variables: { kind: 'variables', names: [ANIN, { scope: 'vmd', item: 'x' }, { scope: 'aa', item: 'y' }] },
    },
    { service: 'write', variables: { kind: 'variables', names: [ANIN] }, data: [{ type: 'float', value: 2.5, double: false }] },
    { service: 'getNamedVariableListAttributes', name: objectNameOf('LD0/LLN0$Events') },
  ];
  for (const [i, request] of requests.entries()) {
    const pdu: MmsPdu = { pdu: 'confirmed-request', invokeId: 1000 + i, request };
    t.same(decodeMmsPdu(encodeMmsPdu(pdu)), pdu, request.service);
  }
  t.equal(
    toHex(encodeMmsPdu({ pdu: 'confirmed-request', invokeId: 1, request: requests[1] })),
    'a00e020101a109a003800109a1028000',
    'GetNameList as captured',
  );
  t.same(
    decodeMmsPdu(cons('context', 0, intTlv('universal', 2, 7), cons('universal', 16), nullTlv('context', 2))),
    { pdu: 'confirmed-request', invokeId: 7, request: { service: 'identify' } },
    'a list of modifiers is skipped',
  );
});

t.test('names map to and from IEC 61850 references', async (t) => {
  t.same(ANIN, { scope: 'domain', domain: 'simpleIOGenericIO', item: 'GGIO1$MX$AnIn1$mag$f' });
  t.equal(objectNameText(ANIN), 'simpleIOGenericIO/GGIO1$MX$AnIn1$mag$f');
  t.equal(objectNameText({ scope: 'vmd', item: 'RPT' }), 'RPT');
  t.equal(objectNameText({ scope: 'aa', item: 'x' }), '@aa/x');
});

t.test('identify and getNameList responses read; moreFollows defaults to true', async (t) => {
  t.match(
    response(1, cons('context', 2, visibleTlv('context', 0, 'MZ'), visibleTlv('context', 1, 'basic io'), visibleTlv('context', 2, '1.5'))),
    { response: { service: 'identify', vendor: 'MZ', model: 'basic io', revision: '1.5' } },
  );
  t.equal(codecError(() => response(1, cons('context', 2, visibleTlv('context', 0, 'MZ')))).code, 'bad_response');
  t.match(response(2, cons('context', 1, cons('context', 0, visibleTlv('universal', 26, 'a'), visibleTlv('universal', 26, 'b')))), {
    response: { identifiers: ['a', 'b'], moreFollows: true },
  });
  t.equal(codecError(() => response(2, cons('context', 1))).code, 'bad_response');
});

t.test('a type description reads structures with named components, arrays and basic types', async (t) => {
  const type: MmsType = {
    type: 'structure',
    packed: false,
    components: [
      {
        name: 'mag',
        type: { type: 'structure', packed: false, components: [{ name: 'f', type: { type: 'float', formatWidth: 32, exponentWidth: 8 } }] },
      },
      { name: 'q', type: { type: 'bit-string', size: -13 } },
      { name: 't', type: { type: 'utc-time' } },
      { name: 'ctlNum', type: { type: 'unsigned', bits: 8 } },
      { name: 'stVal', type: { type: 'integer', bits: 32 } },
      { name: 'vendor', type: { type: 'visible-string', size: -255 } },
      { name: 'd', type: { type: 'mms-string', size: -255 } },
      { name: 'hist', type: { type: 'array', packed: false, elements: 4, element: { type: 'boolean' } } },
      { name: 'tm', type: { type: 'binary-time', withDate: true } },
      { name: 'os', type: { type: 'octet-string', size: 64 } },
      { name: 'named', type: { type: 'named', name: objectNameOf('LD0/T1') } },
      { type: { type: 'obj-id' } },
    ],
  };
  const pdu = response(3, cons('context', 6, boolTlv('context', 0, false), cons('context', 2, encodeType(type))));
  t.same(pdu, { pdu: 'confirmed-response', invokeId: 3, response: { service: 'getVariableAccessAttributes', deletable: false, type } });
  t.equal(
    codecError(() => response(3, cons('context', 6, boolTlv('context', 0, false), cons('context', 2, nullTlv('context', 8))))).code,
    'unknown_tag',
  );
  t.equal(codecError(() => response(3, cons('context', 6, boolTlv('context', 0, false)))).code, 'bad_response');
});

t.test('named variable list attributes list the members', async (t) => {
  const members = cons(
    'context',
    1,
    ...['GGIO1$ST$Ind1$stVal', 'GGIO1$ST$Ind2$stVal'].map((item) =>
      cons('universal', 16, cons('context', 0, encodeObjectName({ scope: 'domain', domain: 'LD0', item }))),
    ),
  );
  t.match(response(4, cons('context', 12, boolTlv('context', 0, true), members)), {
    response: {
      service: 'getNamedVariableListAttributes',
      deletable: true,
      variables: [{ item: 'GGIO1$ST$Ind1$stVal' }, { item: 'GGIO1$ST$Ind2$stVal' }],
    },
  });
});

t.test('read and write failures come back as DataAccessErrors in words', async (t) => {
  t.same(response(5, cons('context', 4, cons('context', 1, intTlv('context', 0, 10), prim('context', 3, fromHex('01'))))), {
    pdu: 'confirmed-response',
    invokeId: 5,
    response: {
      service: 'read',
      results: [
        { ok: false, error: 10, errorText: 'object-non-existent' },
        { ok: true, data: { type: 'boolean', value: true } },
      ],
    },
  });
  t.same(response(6, cons('context', 5, nullTlv('context', 1), intTlv('context', 0, 3))), {
    pdu: 'confirmed-response',
    invokeId: 6,
    response: { service: 'write', results: [{ ok: true }, { ok: false, error: 3, errorText: 'object-access-denied' }] },
  });
  t.equal(codecError(() => response(6, cons('context', 4, cons('context', 0)))).code, 'bad_response');
});

t.test('a confirmed error carries the class and code of the service error', async (t) => {
  const pdu = decodeMmsPdu(
    cons(
      'context',
      2,
      intTlv('context', 0, 7),
      cons('context', 2, cons('context', 0, intTlv('context', 7, 2)), intTlv('context', 1, 99), visibleTlv('context', 2, 'no such LN')),
    ),
  );
  t.same(pdu, {
    pdu: 'confirmed-error',
    invokeId: 7,
    error: { errorClass: 'access', code: 2, text: 'access: object-non-existent', additionalCode: 99, additionalDescription: 'no such LN' },
  });
  t.match(decodeMmsPdu(cons('context', 10, cons('context', 0, intTlv('context', 8, 1)))), {
    pdu: 'initiate-error',
    error: { text: 'initiate: version-incompatible' },
  });
});

t.test('a reject PDU gives the original invoke id and the reason in words', async (t) => {
  const reject: MmsPdu = {
    pdu: 'reject',
    invokeId: 9,
    reason: { pduType: 'confirmed-request', code: 1, text: 'confirmed-request: unrecognized-service' },
  };
  t.equal(toHex(encodeMmsPdu(reject)), 'a406800109810101');
  t.same(decodeMmsPdu(fromHex('a406800109810101')), reject);
  t.same(decodeMmsPdu(fromHex('a403850101')), { pdu: 'reject', reason: { pduType: 'pdu-error', code: 1, text: 'pdu-error: invalid-pdu' } });
  t.match(decodeMmsPdu(fromHex('a403870104')), { reason: { pduType: 'cancel-response', text: 'cancel-response: code 4' } });
  t.equal(codecError(() => decodeMmsPdu(fromHex('a403800109'))).code, 'bad_reject');
});

t.test('conclude and cancel PDUs round-trip', async (t) => {
  for (const pdu of [
    { pdu: 'conclude-request' },
    { pdu: 'conclude-response' },
    { pdu: 'cancel-request', invokeId: 4 },
    { pdu: 'cancel-response', invokeId: 4 },
  ] as MmsPdu[]) {
    t.same(decodeMmsPdu(encodeMmsPdu(pdu)), pdu);
  }
  t.equal(toHex(encodeMmsPdu({ pdu: 'conclude-request' })), '8b00');
  t.equal(codecError(() => decodeMmsPdu(fromHex('ab00'))).code, 'not_primitive');
  t.match(decodeMmsPdu(cons('context', 13, cons('context', 0, intTlv('context', 9, 1)))), {
    pdu: 'conclude-error',
    error: { errorClass: 'conclude' },
  });
});

t.test('an information report round-trips with a list name or a list of variables', async (t) => {
  const report: MmsPdu = {
    pdu: 'information-report',
    report: {
      variables: { kind: 'variables', names: [ANIN] },
      results: [
        { ok: true, data: { type: 'float', value: 1, double: false } },
        { ok: false, error: 2, errorText: 'temporarily-unavailable' },
      ],
    },
  };
  t.same(decodeMmsPdu(encodeMmsPdu(report)), report);
  t.equal(codecError(() => decodeMmsPdu(cons('context', 3, cons('context', 1)))).code, 'unsupported_service');
  t.equal(
    codecError(() => decodeMmsPdu(cons('context', 3, cons('context', 0, encodeVariableAccess({ kind: 'list', name: ANIN }))))).code,
    'bad_pdu',
  );
});

t.test('unknown PDU and service tags are refused naming the tag', async (t) => {
  t.match(
    codecError(() => decodeMmsPdu(fromHex('ae00'))),
    { layer: 'mms', code: 'unknown_tag', message: /\[C14\]/ },
  );
  t.match(
    codecError(() => decodeMmsPdu(fromHex('3000'))),
    { code: 'unknown_tag', message: /\[U16\]/ },
  );
  t.match(
    codecError(() => decodeMmsPdu(fromHex('a006020101bf4b00'))),
    { code: 'unsupported_service', message: /\[C75\] \(fileRename\)/ },
  );
  t.match(
    codecError(() => decodeMmsPdu(fromHex('a006020101bf6300'))),
    { code: 'unknown_tag', message: /\[C99\]/ },
  );
  t.match(
    codecError(() => response(1, nullTlv('context', 0))),
    { code: 'unsupported_service', message: /status/ },
  );
  t.match(
    codecError(() =>
      decodeMmsPdu(
        cons(
          'context',
          0,
          intTlv('universal', 2, 1),
          cons('context', 4, cons('context', 1, cons('context', 0, cons('universal', 16, cons('context', 1))))),
        ),
      ),
    ),
    { code: 'unsupported_variable' },
  );
  t.equal(
    codecError(() => encodeMmsPdu({ pdu: 'confirmed-error', invokeId: 1, error: { errorClass: 'access', code: 1, text: '' } })).code,
    'unsupported_pdu',
  );
});

t.test('invoke ids must be integers of at most 32 bits', async (t) => {
  t.equal(
    codecError(() => decodeMmsPdu(cons('context', 0, prim('universal', 2, fromHex('0100000000')), nullTlv('context', 2)))).code,
    'bad_pdu',
  );
  t.equal(codecError(() => decodeMmsPdu(fromHex('a00482008200'))).code, 'unexpected_tag');
  t.equal(codecError(() => decodeMmsPdu(fromHex('a003020101'))).code, 'bad_pdu');
});

t.test('every prefix of the captured read request is refused with a CodecError', async (t) => {
  const pdu = fromHex(
    'a038020101a433a131a02f302da02ba1291a1173696d706c65494f47656e65726963494f1a144747494f31244d5824416e496e31246d61672466',
  );
  for (let n = 0; n < pdu.length; n++)
    t.not(
      outcome(() => decodeMmsPdu(pdu.subarray(0, n))),
      'ok',
    );
});
