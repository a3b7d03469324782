/**
 * Reference parsing: both notations to one shape and back, array elements to the array's name with an
 * alternate access and back, and every malformed reference refused with a message that says what is wrong.
 */
import t from 'tap';
import { Iec61850Error } from '../../src/client/errors.ts';
import { fromObjectName, leafName, parseReference, toMmsReference, toObjectName, toObjectReference } from '../../src/client/reference.ts';

const LD = 'simpleIOGenericIO';

t.test('object and MMS notation parse to the same reference', async (t) => {
  const cases: [string, string, object][] = [
    [`${LD}/GGIO1.AnIn1.mag.f[MX]`, `${LD}/GGIO1$MX$AnIn1$mag$f`, { ld: LD, ln: 'GGIO1', fc: 'MX', path: ['AnIn1', 'mag', 'f'] }],
    [`${LD}/GGIO1.SPCSO1[CO]`, `${LD}/GGIO1$CO$SPCSO1`, { ld: LD, ln: 'GGIO1', fc: 'CO', path: ['SPCSO1'] }],
    [`${LD}/LLN0.EventsRCB01[RP]`, `${LD}/LLN0$RP$EventsRCB01`, { ld: LD, ln: 'LLN0', fc: 'RP', path: ['EventsRCB01'] }],
    [`${LD}/GGIO1[ST]`, `${LD}/GGIO1$ST`, { ld: LD, ln: 'GGIO1', fc: 'ST', path: [] }],
    [`${LD}/GGIO1`, `${LD}/GGIO1`, { ld: LD, ln: 'GGIO1', path: [] }],
    ['LD0/Q0XCBR1.Pos.stVal[ST]', 'LD0/Q0XCBR1$ST$Pos$stVal', { ld: 'LD0', ln: 'Q0XCBR1', fc: 'ST', path: ['Pos', 'stVal'] }],
    [
      'IED1LD0/MMXU1.PhV.phsA.cVal.mag.f[MX]',
      'IED1LD0/MMXU1$MX$PhV$phsA$cVal$mag$f',
      { ld: 'IED1LD0', ln: 'MMXU1', fc: 'MX', path: ['PhV', 'phsA', 'cVal', 'mag', 'f'] },
    ],
  ];
  for (const [object, mms, shape] of cases) {
    t.same(parseReference(object), shape, object);
    t.same(parseReference(mms), shape, mms);
    t.equal(toMmsReference(parseReference(object)), mms);
    t.equal(toObjectReference(parseReference(mms)), object);
  }
});

t.test('every functional constraint is accepted', async (t) => {
  for (const fc of [
    'ST',
    'MX',
    'CO',
    'CF',
    'DC',
    'SP',
    'SG',
    'SE',
    'SV',
    'SR',
    'OR',
    'BL',
    'EX',
    'RP',
    'BR',
    'LG',
    'GO',
    'GS',
    'MS',
    'US',
  ]) {
    t.equal(parseReference(`LD/LN0$${fc}$X`).fc, fc);
    t.equal(parseReference(`LD/LN0.X[${fc}]`).fc, fc);
  }
});

t.test('surrounding spaces are ignored', async (t) => {
  t.same(parseReference('  LD/GGIO1$ST$Ind1  '), { ld: 'LD', ln: 'GGIO1', fc: 'ST', path: ['Ind1'] });
});

t.test('a reference turns into a domain-specific MMS name and back', async (t) => {
  const name = toObjectName(parseReference(`${LD}/GGIO1.AnIn1.mag.f[MX]`));
  t.same(name, { scope: 'domain', domain: LD, item: 'GGIO1$MX$AnIn1$mag$f' });
  t.same(fromObjectName(name), parseReference(`${LD}/GGIO1$MX$AnIn1$mag$f`));
  t.throws(() => fromObjectName({ scope: 'vmd', item: 'RPT' }), { code: 'bad_reference' });
});

t.test('an array element and its parts parse in both notations and become the array with an alternate access', async (t) => {
  const r = parseReference(`${LD}/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`);
  t.same(r, { ld: LD, ln: 'MHAI1', fc: 'MX', path: ['HA', 'phsAHar(2)', 'cVal', 'mag', 'f'] });
  t.same(parseReference(`${LD}/MHAI1$MX$HA$phsAHar(2)$cVal$mag$f`), r, 'the MMS notation as libiec61850 writes it');
  t.equal(toMmsReference(r), `${LD}/MHAI1$MX$HA$phsAHar(2)$cVal$mag$f`);
  t.equal(toObjectReference(r), `${LD}/MHAI1.HA.phsAHar(2).cVal.mag.f[MX]`);
  t.equal(leafName(r), 'f');
  t.equal(leafName(parseReference(`${LD}/MHAI1.HA.phsAHar(15)[MX]`)), 'phsAHar');
  const name = toObjectName(r);
  t.same(name, {
    scope: 'domain',
    domain: LD,
    item: 'MHAI1$MX$HA$phsAHar',
    alternateAccess: [{ index: 2 }, { component: 'cVal' }, { component: 'mag' }, { component: 'f' }],
  });
  t.same(fromObjectName(name), r, 'back from the name and its alternate access');
  t.same(
    fromObjectName({ scope: 'domain', domain: LD, item: 'MHAI1$MX$HA', alternateAccess: [{ component: 'phsAHar' }, { index: 7 }] }),
    parseReference(`${LD}/MHAI1.HA.phsAHar(7)[MX]`),
    'an index after a component',
  );
  t.same(
    fromObjectName({
      scope: 'domain',
      domain: LD,
      item: 'MHAI1$MX$HA$phsAHar',
      alternateAccess: [{ index: 9 }, { component: 'cVal$mag' }],
    }),
    parseReference(`${LD}/MHAI1.HA.phsAHar(9).cVal.mag[MX]`),
    'a component some servers give as one name with $',
  );
  t.same(toObjectName(parseReference(`${LD}/GAPC1.Crv.crvPts(0)[SP]`)).alternateAccess, [{ index: 0 }]);
  t.same(toObjectName(parseReference(`${LD}/MHAI1.HA.phsAHar(4294967295)[MX]`)).alternateAccess, [{ index: 4294967295 }]);
});

t.test('malformed references are refused, saying why', async (t) => {
  const cases: [unknown, RegExp][] = [
    ['', /expected 'LD\/LN/],
    ['GGIO1.AnIn1[MX]', /expected 'LD\/LN/],
    ['/GGIO1.AnIn1[MX]', /expected 'LD\/LN/],
    ['LD/', /no logical node/],
    ['LD/a/b', /more than one/],
    ['LD/GGIO1.AnIn1.mag', /needs a functional constraint/],
    ['LD/GGIO1.AnIn1[XY]', /'XY' is not a functional constraint/],
    ['LD/GGIO1.AnIn1[mx]', /'mx' is not a functional constraint/],
    ['LD/GGIO1$XY$AnIn1', /'XY' is not a functional constraint/],
    ['LD/GGIO1$MX$$f', /empty name/],
    ['LD/GGIO1..f[MX]', /empty name/],
    ['LD/GGIO1.AnIn1[MX].f', /goes last/],
    ['LD/GGIO1$MX$AnIn1.mag', /mixes/],
    ['LD/MHAI1.HA.phsAHar(x)[MX]', /an array element is its index in parentheses/],
    ['LD/MHAI1.HA.phsAHar()[MX]', /an array element is its index in parentheses/],
    ['LD/MHAI1.HA.phsAHar(-1)[MX]', /an array element is its index in parentheses/],
    ['LD/MHAI1.HA.phsAHar(02)[MX]', /an array element is its index in parentheses/],
    ['LD/MHAI1.HA.phsAHar(4294967296)[MX]', /from 0 to 4294967295/],
    ['LD/MHAI1$MX$HA$phsAHar(x)', /an array element is its index in parentheses/],
    ['LD/MHAI1.HA.phsAHar(2[MX]', /not a data object or attribute name/],
    ['LD/MHAI1.HA.phsAHar(2)(3)[MX]', /not a data object or attribute name/],
    ['LD/MHAI1.HA.(2)[MX]', /not a data object or attribute name/],
    ['LD/GGIO1.1bad[MX]', /not a data object or attribute name/],
    ['LD/GGIO1.a-b[MX]', /not a data object or attribute name/],
    ['L D/GGIO1', /logical device/],
    ['LD/GG IO1', /logical node/],
    [`${'L'.repeat(65)}/GGIO1`, /longer than 64/],
    [`LD/GGIO1$MX$${'A'.repeat(60)}`, /longer than 64/],
    [42, /must be a string/],
  ];
  for (const [text, why] of cases) {
    const error = (() => {
      try {
        parseReference(text as string);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    t.ok(error instanceof Iec61850Error, `${String(text)} is refused`);
    t.match(error, { code: 'bad_reference', message: why }, String(text));
  }
});
