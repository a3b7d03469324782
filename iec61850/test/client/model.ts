/**
 * The simpleIOGenericIO device of the captures as a fake server model: LN types for
 * GetVariableAccessAttributes, names for GetNameList, the Events data set, and values to read.
 */
import type { ObjectName } from '../../src/mms/mms_access.ts';
import type { MmsComponent, MmsType } from '../../src/mms/mms_types.ts';

export const LD = 'simpleIOGenericIO';

const s = (...components: [string, MmsType][]): MmsType => ({
  type: 'structure',
  packed: false,
  components: components.map(([name, type]): MmsComponent => ({ name, type })),
});
const BOOL: MmsType = { type: 'boolean' };
const Q: MmsType = { type: 'bit-string', size: 13 };
const T: MmsType = { type: 'utc-time' };
const F32: MmsType = { type: 'float', formatWidth: 32, exponentWidth: 8 };
const VIS = (size: number): MmsType => ({ type: 'visible-string', size });
const U = (bits: number): MmsType => ({ type: 'unsigned', bits });
const I8: MmsType = { type: 'integer', bits: 8 };
const BITS = (size: number): MmsType => ({ type: 'bit-string', size });

/** The control structure of an SPC (Oper, SBOw; Cancel without Check). */
export const OPER = s(
  ['ctlVal', BOOL],
  ['origin', s(['orCat', I8], ['orIdent', { type: 'octet-string', size: -64 }])],
  ['ctlNum', U(8)],
  ['T', T],
  ['Test', BOOL],
  ['Check', BITS(2)],
);
const CANCEL = s(
  ['ctlVal', BOOL],
  ['origin', s(['orCat', I8], ['orIdent', { type: 'octet-string', size: -64 }])],
  ['ctlNum', U(8)],
  ['T', T],
  ['Test', BOOL],
);
const SPC_ST = s(['stVal', BOOL], ['q', Q], ['t', T]);
const spcs = ['SPCSO1', 'SPCSO2', 'SPCSO3', 'SPCSO4'];

/** LN types by name. */
export const LN_TYPES: Record<string, MmsType> = {
  GGIO1: s(
    ['MX', s(['AnIn1', s(['mag', s(['f', F32])], ['q', Q], ['t', T])])],
    ['ST', s(...spcs.map((n): [string, MmsType] => [n, SPC_ST]))],
    ['CO', s(...spcs.map((n): [string, MmsType] => [n, s(['SBO', VIS(-129)], ['SBOw', OPER], ['Oper', OPER], ['Cancel', CANCEL])]))],
    ['CF', s(...spcs.map((n): [string, MmsType] => [n, s(['ctlModel', I8])]))],
    ['DC', s(['NamPlt', s(['vendor', VIS(-255)], ['swRev', VIS(-255)], ['d', VIS(-255)])])],
  ),
  LLN0: s(
    ['ST', s(['Mod', s(['stVal', I8], ['q', Q], ['t', T])])],
    [
      'RP',
      s([
        'EventsRCB01',
        s(
          ['RptID', VIS(-129)],
          ['RptEna', BOOL],
          ['Resv', BOOL],
          ['DatSet', VIS(-129)],
          ['ConfRev', U(32)],
          ['OptFlds', BITS(10)],
          ['BufTm', U(32)],
          ['SqNum', U(8)],
          ['TrgOps', BITS(6)],
          ['IntgPd', U(32)],
          ['GI', BOOL],
        ),
      ]),
    ],
  ),
};

/** The type of `LN$FC$DO...`, walking the LN type. */
export function typeAt(item: string): MmsType | undefined {
  const [ln, ...path] = item.split('$');
  let type: MmsType | undefined = LN_TYPES[ln];
  for (const p of path) type = type?.type === 'structure' ? type.components.find((c) => c.name === p)?.type : undefined;
  return type;
}

/** The Events data set: the four SPCSO stVal. */
export const EVENTS: ObjectName[] = spcs.map((n) => ({ scope: 'domain', domain: LD, item: `GGIO1$ST$${n}$stVal` }));
