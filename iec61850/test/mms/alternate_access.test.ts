/**
 * MMS alternate access (ISO 9506-2) as IEC 61850 uses it for array elements: the index, then one component a
 * level, in read and write requests and in the members a GetNamedVariableListAttributes response lists;
 * the selections this stack does not support are refused with a codec error that names them.
 */
import t from 'tap';
import { encodeAlternateAccessContent, type AlternateAccess } from '../../src/mms/alternate_access.ts';
import { cons, readSingle } from '../../src/mms/ber.ts';
import { boolTlv, intTlv, nullTlv, visibleTlv } from '../../src/mms/ber_fields.ts';
import { decodeNamedVariables, encodeNamedVariable, objectNameText, type NamedVariable } from '../../src/mms/mms_access.ts';
import { decodeMmsPdu, encodeMmsPdu } from '../../src/mms/mms_pdu.ts';
import { codecError, toHex } from './helpers.ts';

const D = 'HARMLD0';
const element = (...alternateAccess: AlternateAccess): NamedVariable => ({
  scope: 'domain',
  domain: D,
  item: 'MHAI1$MX$HA$phsAHar',
  alternateAccess,
});
const deep = element({ index: 2 }, { component: 'cVal' }, { component: 'mag' }, { component: 'f' });
/** The variable entry's `[5]`, written out by the ASN.1: selectAlternateAccess `[0]` down to a selectAccess. */
const deepAccess = cons(
  'context',
  5,
  cons(
    'context',
    0,
    intTlv('context', 1, 2),
    cons(
      'universal',
      16,
      cons(
        'context',
        0,
        visibleTlv('context', 0, 'cVal'),
        cons('universal', 16, cons('context', 0, visibleTlv('context', 0, 'mag'), cons('universal', 16, visibleTlv('context', 1, 'f')))),
      ),
    ),
  ),
);
const entryOf = (...fields: Uint8Array[]) =>
  cons(
    'universal',
    16,
    cons('context', 0, cons('context', 1, visibleTlv('universal', 26, D), visibleTlv('universal', 26, 'MHAI1$MX$HA$phsAHar'))),
    ...fields,
  );

t.test('an element and its components encode as ISO 9506 nests them, the bytes libiec61850 sends', async (t) => {
  t.equal(toHex(deepAccess), 'a51da01b8101023016a01480046356616c300ca00a80036d61673003810166');
  t.equal(toHex(encodeNamedVariable(deep)), toHex(entryOf(deepAccess)));
  t.equal(
    toHex(encodeNamedVariable(element({ index: 2 }))),
    toHex(entryOf(cons('context', 5, intTlv('context', 2, 2)))),
    'an index alone: selectAccess [2]',
  );
  t.equal(
    toHex(encodeAlternateAccessContent([{ component: 'cVal' }])),
    toHex(visibleTlv('context', 1, 'cVal')),
    'a component alone: selectAccess [1]',
  );
  t.equal(
    toHex(encodeNamedVariable({ scope: 'domain', domain: D, item: 'MHAI1$MX$HA' })),
    toHex(
      cons(
        'universal',
        16,
        cons('context', 0, cons('context', 1, visibleTlv('universal', 26, D), visibleTlv('universal', 26, 'MHAI1$MX$HA'))),
      ),
    ),
    'a name without alternate access is written as before',
  );
});

t.test('reads and writes of elements, and data set members, read back with their alternate access', async (t) => {
  const read = encodeMmsPdu({
    pdu: 'confirmed-request',
    invokeId: 7,
    request: { service: 'read', specificationWithResult: false, variables: { kind: 'variables', names: [deep, element({ index: 15 })] } },
  });
  t.same(decodeMmsPdu(read), {
    pdu: 'confirmed-request',
    invokeId: 7,
    request: { service: 'read', specificationWithResult: false, variables: { kind: 'variables', names: [deep, element({ index: 15 })] } },
  });
  const written: NamedVariable = {
    scope: 'domain',
    domain: D,
    item: 'GAPC1$SP$Crv$crvPts',
    alternateAccess: [{ index: 3 }, { component: 'xVal' }],
  };
  const write = encodeMmsPdu({
    pdu: 'confirmed-request',
    invokeId: 8,
    request: { service: 'write', variables: { kind: 'variables', names: [written] }, data: [{ type: 'float', value: 1.5, double: false }] },
  });
  t.same(decodeMmsPdu(write), {
    pdu: 'confirmed-request',
    invokeId: 8,
    request: { service: 'write', variables: { kind: 'variables', names: [written] }, data: [{ type: 'float', value: 1.5, double: false }] },
  });
  const members = [element({ index: 7 }), element({ index: 9 }, { component: 'cVal' }), deep];
  const list = readSingle(cons('context', 1, ...members.map(encodeNamedVariable)));
  t.same(decodeNamedVariables(list), members);
  const response = decodeMmsPdu(
    cons(
      'context',
      1,
      intTlv('universal', 2, 4),
      cons('context', 12, boolTlv('context', 0, false), cons('context', 1, ...members.map(encodeNamedVariable))),
    ),
  );
  t.same(response, {
    pdu: 'confirmed-response',
    invokeId: 4,
    response: { service: 'getNamedVariableListAttributes', deletable: false, variables: members },
  });
});

t.test("a variable's text shows its alternate access as libiec61850 writes it", async (t) => {
  t.equal(objectNameText(deep), `${D}/MHAI1$MX$HA$phsAHar(2)$cVal$mag$f`);
  t.equal(objectNameText(element({ index: 0 })), `${D}/MHAI1$MX$HA$phsAHar(0)`);
});

t.test('selections this stack does not support, and malformed ones, are refused by name', async (t) => {
  const decode = (access: Uint8Array) => () => decodeNamedVariables(readSingle(cons('context', 0, entryOf(access))));
  const range = cons('context', 5, cons('context', 3, intTlv('context', 0, 1), intTlv('context', 1, 2)));
  t.match(codecError(decode(range)), { code: 'unsupported_alternate_access', message: /index range/ });
  t.match(codecError(decode(cons('context', 5, nullTlv('context', 4)))), { code: 'unsupported_alternate_access', message: /all elements/ });
  const named = cons('context', 5, cons('context', 5, visibleTlv('context', 0, 'cVal'), intTlv('context', 2, 1)));
  t.match(codecError(decode(named)), { code: 'unsupported_alternate_access', message: /named selection/ });
  const two = cons('context', 5, intTlv('context', 2, 1), intTlv('context', 2, 2));
  t.match(codecError(decode(two)), { code: 'unsupported_alternate_access', message: /2 selections on one level/ });
  t.match(codecError(decode(cons('context', 5))), { code: 'bad_alternate_access', message: /empty/ });
  t.match(codecError(decode(cons('context', 5, intTlv('context', 2, -1)))), { code: 'bad_alternate_access', message: /Unsigned32/ });
  t.match(codecError(decode(cons('context', 5, cons('context', 0, intTlv('context', 1, 2))))), {
    code: 'bad_alternate_access',
    message: /selection and the alternate access/,
  });
  t.match(codecError(decode(cons('context', 6, intTlv('context', 2, 1)))), { code: 'bad_variable', message: /\[C6\]/ });
  t.match(
    codecError(() => encodeAlternateAccessContent([])),
    { code: 'bad_alternate_access' },
  );
  t.match(
    codecError(() => encodeAlternateAccessContent([{ index: 2 ** 32 }])),
    { code: 'bad_alternate_access', message: /Unsigned32/ },
  );
});
