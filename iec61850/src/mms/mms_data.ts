/**
 * The MMS `Data` CHOICE as IEC 61850-8-1 uses it: the basic types, structures and arrays, with the context
 * tags of ISO 9506-2. Nesting is bounded so hostile input cannot exhaust the stack.
 */
import { childrenOf, cons, prim, primitiveOf, tagName, type Tlv } from './ber.ts';
import {
  decodeBinaryTime,
  decodeBitString,
  decodeBoolean,
  decodeInteger,
  decodeMmsFloat,
  decodeOid,
  decodeUnsigned,
  decodeUtcTime,
  decodeUtf8String,
  decodeVisibleString,
  encodeBinaryTime,
  encodeBitString,
  encodeBoolean,
  encodeInteger,
  encodeMmsFloat,
  encodeOid,
  encodeUnsigned,
  encodeUtcTime,
  encodeUtf8String,
  encodeVisibleString,
  toNumberIfSafe,
  type BinaryTime,
  type BitString,
  type UtcTime,
} from './ber_values.ts';
import { CodecError } from './codec_error.ts';

/** An MMS value. Integers are numbers when safe, bigints beyond 2^53. */
export type MmsData =
  | { type: 'array'; value: MmsData[] }
  | { type: 'structure'; value: MmsData[] }
  | { type: 'boolean'; value: boolean }
  | { type: 'bit-string'; value: BitString }
  | { type: 'integer'; value: number | bigint }
  | { type: 'unsigned'; value: number | bigint }
  | { type: 'float'; value: number; double: boolean }
  | { type: 'octet-string'; value: Uint8Array }
  | { type: 'visible-string'; value: string }
  | { type: 'binary-time'; value: BinaryTime }
  | { type: 'bcd'; value: number | bigint }
  | { type: 'obj-id'; value: string }
  | { type: 'mms-string'; value: string }
  | { type: 'utc-time'; value: UtcTime };

/** Deepest structure/array nesting accepted; IEC 61850 models stay far below (libiec61850 proposes 10). */
export const MAX_DATA_DEPTH = 32;

const TAG = {
  array: 1,
  structure: 2,
  boolean: 3,
  'bit-string': 4,
  integer: 5,
  unsigned: 6,
  float: 7,
  'octet-string': 9,
  'visible-string': 10,
  'binary-time': 12,
  bcd: 13,
  'obj-id': 15,
  'mms-string': 16,
  'utc-time': 17,
} as const;

/** The names of the Data tags this stack does not read, for the error message. */
const UNSUPPORTED: Record<number, string> = { 8: 'real', 11: 'generalized-time', 14: 'boolean-array' };

function mmsError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

/** One Data value as a TLV. */
export function encodeData(d: MmsData, depth = 0): Uint8Array {
  if (depth > MAX_DATA_DEPTH) throw mmsError('nesting_too_deep', `data nested deeper than ${MAX_DATA_DEPTH}`);
  const tag = TAG[d.type];
  switch (d.type) {
    case 'array':
    case 'structure':
      return cons('context', tag, ...d.value.map((v) => encodeData(v, depth + 1)));
    case 'boolean':
      return prim('context', tag, encodeBoolean(d.value));
    case 'bit-string':
      return prim('context', tag, encodeBitString(d.value));
    case 'integer':
      return prim('context', tag, encodeInteger(d.value));
    case 'unsigned':
    case 'bcd':
      return prim('context', tag, encodeUnsigned(d.value));
    case 'float':
      return prim('context', tag, encodeMmsFloat(d));
    case 'octet-string':
      return prim('context', tag, d.value);
    case 'visible-string':
      return prim('context', tag, encodeVisibleString(d.value));
    case 'binary-time':
      return prim('context', tag, encodeBinaryTime(d.value));
    case 'obj-id':
      return prim('context', tag, encodeOid(d.value));
    case 'mms-string':
      return prim('context', tag, encodeUtf8String(d.value));
    case 'utc-time':
      return prim('context', tag, encodeUtcTime(d.value));
  }
}

/** One Data value from its TLV; an unknown tag is refused naming the tag. */
export function decodeData(t: Tlv, depth = 0): MmsData {
  if (depth > MAX_DATA_DEPTH) throw mmsError('nesting_too_deep', `data nested deeper than ${MAX_DATA_DEPTH}`);
  if (t.cls !== 'context') throw mmsError('unknown_tag', `${tagName(t)} is not an MMS Data tag`);
  switch (t.tag) {
    case TAG.array:
      return { type: 'array', value: childrenOf(t).map((c) => decodeData(c, depth + 1)) };
    case TAG.structure:
      return { type: 'structure', value: childrenOf(t).map((c) => decodeData(c, depth + 1)) };
    case TAG.boolean:
      return { type: 'boolean', value: decodeBoolean(primitiveOf(t)) };
    case TAG['bit-string']:
      return { type: 'bit-string', value: decodeBitString(primitiveOf(t)) };
    case TAG.integer:
      return { type: 'integer', value: toNumberIfSafe(decodeInteger(primitiveOf(t))) };
    case TAG.unsigned:
      return { type: 'unsigned', value: toNumberIfSafe(decodeUnsigned(primitiveOf(t))) };
    case TAG.float:
      return { type: 'float', ...decodeMmsFloat(primitiveOf(t)) };
    case TAG['octet-string']:
      return { type: 'octet-string', value: primitiveOf(t).slice() };
    case TAG['visible-string']:
      return { type: 'visible-string', value: decodeVisibleString(primitiveOf(t)) };
    case TAG['binary-time']:
      return { type: 'binary-time', value: decodeBinaryTime(primitiveOf(t)) };
    case TAG.bcd:
      return { type: 'bcd', value: toNumberIfSafe(decodeUnsigned(primitiveOf(t))) };
    case TAG['obj-id']:
      return { type: 'obj-id', value: decodeOid(primitiveOf(t)) };
    case TAG['mms-string']:
      return { type: 'mms-string', value: decodeUtf8String(primitiveOf(t)) };
    case TAG['utc-time']:
      return { type: 'utc-time', value: decodeUtcTime(primitiveOf(t)) };
    default: {
      const known = UNSUPPORTED[t.tag];
      throw mmsError(
        known ? 'unsupported_data' : 'unknown_tag',
        `${tagName(t)}${known ? ` (${known})` : ''} is not a supported MMS Data tag`,
      );
    }
  }
}

/** A plain JavaScript view of a value for logs and tests: numbers, strings, booleans, nested arrays. */
export function dataToPlain(d: MmsData): unknown {
  switch (d.type) {
    case 'array':
    case 'structure':
      return d.value.map(dataToPlain);
    case 'bit-string': {
      let bits = '';
      for (let i = 0; i < d.value.bitLength; i++) bits += (d.value.bytes[i >> 3] & (0x80 >> (i & 7))) !== 0 ? '1' : '0';
      return bits;
    }
    case 'octet-string':
      return Array.from(d.value, (b) => b.toString(16).padStart(2, '0')).join('');
    default:
      return d.value;
  }
}
