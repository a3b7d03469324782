/**
 * MMS TypeSpecification, as a GetVariableAccessAttributes response describes a variable: structures with
 * named components, arrays, and the basic types with their sizes. Nesting is bounded like Data's.
 */
import { childrenOf, cons, expectTag, isTag, onlyChildOf, primitiveOf, tagName, type Tlv } from './ber.ts';
import { boolOf, boolTlv, intOf, intTlv, nullTlv, visibleOf, visibleTlv } from './ber_fields.ts';
import { CodecError } from './codec_error.ts';
import { decodeObjectName, encodeObjectName, type ObjectName } from './mms_access.ts';
import { MAX_DATA_DEPTH } from './mms_data.ts';

/** A structure component: its name (absent in some servers' answers) and type. */
export type MmsComponent = { name?: string; type: MmsType };

/**
 * A type. Sizes follow ISO 9506: strings give their maximum length (negative = variable up to that),
 * integers their width in bits, floats the format and exponent widths.
 */
export type MmsType =
  | { type: 'named'; name: ObjectName }
  | { type: 'array'; packed: boolean; elements: number; element: MmsType }
  | { type: 'structure'; packed: boolean; components: MmsComponent[] }
  | { type: 'boolean' | 'generalized-time' | 'obj-id' | 'utc-time' }
  | { type: 'bit-string' | 'octet-string' | 'visible-string' | 'mms-string'; size: number }
  | { type: 'integer' | 'unsigned' | 'bcd'; bits: number }
  | { type: 'float'; formatWidth: number; exponentWidth: number }
  | { type: 'binary-time'; withDate: boolean };

const SIZED = { 4: 'bit-string', 9: 'octet-string', 10: 'visible-string', 16: 'mms-string' } as const;
const WIDTH = { 5: 'integer', 6: 'unsigned', 13: 'bcd' } as const;
const BARE = { 3: 'boolean', 11: 'generalized-time', 15: 'obj-id', 17: 'utc-time' } as const;
const TAG_OF: Record<string, number> = Object.fromEntries(
  Object.entries({ ...SIZED, ...WIDTH, ...BARE, 1: 'array', 2: 'structure', 7: 'float', 12: 'binary-time' }).map(([k, v]) => [
    v,
    Number(k),
  ]),
);

function mmsError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

function packedAnd(fields: Tlv[]): { packed: boolean; rest: Tlv[] } {
  const first = fields[0];
  if (first !== undefined && isTag(first, 'context', 0) && !first.constructed) return { packed: boolOf(first), rest: fields.slice(1) };
  return { packed: false, rest: fields };
}

function decodeArray(t: Tlv, depth: number): MmsType {
  const { packed, rest } = packedAnd(childrenOf(t));
  const [count, element] = rest;
  if (element === undefined) throw mmsError('bad_type', 'an array type without element count or type');
  return {
    type: 'array',
    packed,
    elements: intOf(expectTag(count, 'context', 1, 'number of elements')),
    element: decodeType(onlyChildOf(expectTag(element, 'context', 2, 'element type')), depth + 1),
  };
}

function decodeStructure(t: Tlv, depth: number): MmsType {
  const { packed, rest } = packedAnd(childrenOf(t));
  const list = rest[0];
  if (list === undefined) return { type: 'structure', packed, components: [] };
  const components = childrenOf(expectTag(list, 'context', 1, 'components')).map((c) => {
    const fields = childrenOf(expectTag(c, 'universal', 16, 'component'));
    const named = fields[0] !== undefined && isTag(fields[0], 'context', 0);
    const typeField = fields[named ? 1 : 0];
    if (typeField === undefined) throw mmsError('bad_type', 'a structure component without a type');
    const type = decodeType(onlyChildOf(expectTag(typeField, 'context', 1, 'component type')), depth + 1);
    return named ? { name: visibleOf(fields[0]), type } : { type };
  });
  return { type: 'structure', packed, components };
}

/** A TypeSpecification from its CHOICE TLV (`[0]` type name, or a TypeDescription). */
export function decodeType(t: Tlv, depth = 0): MmsType {
  if (depth > MAX_DATA_DEPTH) throw mmsError('nesting_too_deep', `type nested deeper than ${MAX_DATA_DEPTH}`);
  if (t.cls !== 'context') throw mmsError('unknown_tag', `${tagName(t)} is not an MMS type tag`);
  const n = t.tag;
  if (n === 0) return { type: 'named', name: decodeObjectName(onlyChildOf(t)) };
  if (n === 1) return decodeArray(t, depth);
  if (n === 2) return decodeStructure(t, depth);
  if (n in SIZED) return { type: SIZED[n as keyof typeof SIZED], size: intOf(t) };
  if (n in WIDTH) return { type: WIDTH[n as keyof typeof WIDTH], bits: intOf(t) };
  if (n in BARE) {
    primitiveOf(t);
    return { type: BARE[n as keyof typeof BARE] };
  }
  if (n === 7) {
    const [format, exponent] = childrenOf(t);
    if (exponent === undefined) throw mmsError('bad_type', 'a floating-point type without its widths');
    return { type: 'float', formatWidth: intOf(format), exponentWidth: intOf(exponent) };
  }
  if (n === 12) return { type: 'binary-time', withDate: boolOf(t) };
  throw mmsError('unknown_tag', `${tagName(t)} is not an MMS type tag`);
}

/** A TypeSpecification as a TLV (for tests and for servers written with this stack). */
export function encodeType(m: MmsType, depth = 0): Uint8Array {
  if (depth > MAX_DATA_DEPTH) throw mmsError('nesting_too_deep', `type nested deeper than ${MAX_DATA_DEPTH}`);
  switch (m.type) {
    case 'named':
      return cons('context', 0, encodeObjectName(m.name));
    case 'array':
      return cons(
        'context',
        1,
        boolTlv('context', 0, m.packed),
        intTlv('context', 1, m.elements),
        cons('context', 2, encodeType(m.element, depth + 1)),
      );
    case 'structure': {
      const components = m.components.map((c) =>
        cons(
          'universal',
          16,
          c.name === undefined ? new Uint8Array(0) : visibleTlv('context', 0, c.name),
          cons('context', 1, encodeType(c.type, depth + 1)),
        ),
      );
      return cons('context', 2, cons('context', 1, ...components));
    }
    case 'float':
      return cons('context', 7, intTlv('universal', 2, m.formatWidth), intTlv('universal', 2, m.exponentWidth));
    case 'binary-time':
      return boolTlv('context', 12, m.withDate);
    case 'integer':
    case 'unsigned':
    case 'bcd':
      return intTlv('context', TAG_OF[m.type], m.bits);
    case 'bit-string':
    case 'octet-string':
    case 'visible-string':
    case 'mms-string':
      return intTlv('context', TAG_OF[m.type], m.size);
    default:
      return nullTlv('context', TAG_OF[m.type]);
  }
}
