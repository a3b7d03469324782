/**
 * The basic types of IEC 61850-7-2 as IEC 61850-8-1 maps them to MMS: the type description a
 * GetVariableAccessAttributes answer gives, the zero value a device starts with, the value an SCL `Val`
 * configures, and the type check a write must pass. Variable-length strings carry a negative size (ISO 9506).
 */
import type { EnumType, MmsData, MmsType } from '@scada/iec61850';

const FIXED: Record<string, MmsType> = {
  BOOLEAN: { type: 'boolean' },
  INT8: { type: 'integer', bits: 8 },
  INT16: { type: 'integer', bits: 16 },
  INT24: { type: 'integer', bits: 24 },
  INT32: { type: 'integer', bits: 32 },
  INT64: { type: 'integer', bits: 64 },
  INT8U: { type: 'unsigned', bits: 8 },
  INT16U: { type: 'unsigned', bits: 16 },
  INT24U: { type: 'unsigned', bits: 24 },
  INT32U: { type: 'unsigned', bits: 32 },
  FLOAT32: { type: 'float', formatWidth: 32, exponentWidth: 8 },
  FLOAT64: { type: 'float', formatWidth: 64, exponentWidth: 11 },
  Enum: { type: 'integer', bits: 8 },
  Dbpos: { type: 'bit-string', size: 2 },
  Tcmd: { type: 'bit-string', size: 2 },
  Check: { type: 'bit-string', size: 2 },
  Quality: { type: 'bit-string', size: 13 },
  Timestamp: { type: 'utc-time' },
  EntryTime: { type: 'binary-time', withDate: true },
  TrgOps: { type: 'bit-string', size: 6 },
  OptFlds: { type: 'bit-string', size: 10 },
  SvOptFlds: { type: 'bit-string', size: 5 },
  EntryID: { type: 'octet-string', size: 8 },
  ObjRef: { type: 'visible-string', size: -129 },
  Currency: { type: 'visible-string', size: 3 },
};

/** Double-point positions by the names SCL files use. */
const DBPOS: Record<string, string> = { 'intermediate-state': '00', off: '01', on: '10', 'bad-state': '11' };

/** The MMS type of a basic type (`bType`); unknown ones are described as a 255-character visible string. */
export function mmsTypeOf(bType: string): MmsType {
  const fixed = FIXED[bType];
  if (fixed) return fixed;
  const sized = /^(VisString|Unicode|Octet)(\d+)$/.exec(bType);
  if (sized) {
    const size = -Number(sized[2]);
    if (sized[1] === 'Octet') return { type: 'octet-string', size };
    return { type: sized[1] === 'Unicode' ? 'mms-string' : 'visible-string', size };
  }
  return { type: 'visible-string', size: -255 };
}

/** A bit string of `size` bits from `0`/`1` text, first character = bit 0. */
export function bitsFromText(text: string, size: number): MmsData {
  const bytes = new Uint8Array(Math.ceil(size / 8));
  for (let i = 0; i < size; i++) if (text[i] === '1') bytes[i >> 3] |= 0x80 >> (i & 7);
  return { type: 'bit-string', value: { bitLength: size, bytes } };
}

/** The value a device starts with when nothing is configured: zero, false, empty. */
export function zeroOf(t: MmsType): MmsData {
  switch (t.type) {
    case 'boolean':
      return { type: 'boolean', value: false };
    case 'integer':
    case 'unsigned':
      return { type: t.type, value: 0 };
    case 'float':
      return { type: 'float', value: 0, double: t.formatWidth === 64 };
    case 'bit-string':
      return bitsFromText('', Math.abs(t.size));
    case 'octet-string':
      return { type: 'octet-string', value: new Uint8Array(Math.max(t.size, 0)) };
    case 'visible-string':
    case 'mms-string':
      return { type: t.type, value: '' };
    case 'utc-time':
      return { type: 'utc-time', value: { seconds: 0, fraction: 0, quality: 0 } };
    case 'binary-time':
      return { type: 'binary-time', value: { msOfDay: 0, days: 0 } };
    case 'structure':
      return { type: 'structure', value: t.components.map((c) => zeroOf(c.type)) };
    case 'array':
      return { type: 'array', value: Array.from({ length: t.elements }, () => zeroOf(t.element)) };
    default:
      return { type: 'visible-string', value: '' };
  }
}

/** The value of an SCL `Val` text for a basic type, or undefined when the text does not fit it. */
export function parseConfigured(bType: string, text: string, enumType?: EnumType): MmsData | undefined {
  const t = mmsTypeOf(bType);
  if (bType === 'Enum') {
    const ord = enumType?.values.find((v) => v.value === text)?.ord ?? (/^-?\d+$/.test(text) ? Number(text) : undefined);
    return ord === undefined ? undefined : { type: 'integer', value: ord };
  }
  if (bType === 'Dbpos' || bType === 'Tcmd') return DBPOS[text] === undefined ? undefined : bitsFromText(DBPOS[text], 2);
  switch (t.type) {
    case 'boolean':
      return { type: 'boolean', value: text === 'true' || text === '1' };
    case 'integer':
    case 'unsigned': {
      const n = Number(text);
      return Number.isInteger(n) ? { type: t.type, value: n } : undefined;
    }
    case 'float': {
      const n = Number(text);
      return Number.isFinite(n) ? { type: 'float', value: n, double: t.formatWidth === 64 } : undefined;
    }
    case 'visible-string':
    case 'mms-string':
      return { type: t.type, value: text };
    case 'octet-string':
      return { type: 'octet-string', value: new TextEncoder().encode(text) };
    case 'utc-time': {
      const ms = Date.parse(text);
      return Number.isNaN(ms) ? undefined : { type: 'utc-time', value: { seconds: Math.floor(ms / 1000), fraction: 0, quality: 0 } };
    }
    default:
      return undefined;
  }
}

function fitsInteger(value: number | bigint, bits: number, unsigned: boolean): boolean {
  const n = BigInt(value);
  if (unsigned) return n >= 0n && n < 1n << BigInt(bits);
  return n >= -(1n << BigInt(bits - 1)) && n < 1n << BigInt(bits - 1);
}

function fitsSize(length: number, size: number): boolean {
  return size < 0 ? length <= -size : length === size || size === 0;
}

/**
 * The value a write stores when `d` fits type `t` (integers may arrive signed or unsigned, floats single or
 * double), or undefined when it does not: the write then answers type-inconsistent.
 */
export function conform(t: MmsType, d: MmsData): MmsData | undefined {
  switch (t.type) {
    case 'structure': {
      if (d.type !== 'structure' || d.value.length !== t.components.length) return undefined;
      const out = t.components.map((c, i) => conform(c.type, d.value[i]));
      return out.every((v) => v !== undefined) ? { type: 'structure', value: out as MmsData[] } : undefined;
    }
    case 'array': {
      if (d.type !== 'array' || d.value.length !== t.elements) return undefined;
      const out = d.value.map((v) => conform(t.element, v));
      return out.every((v) => v !== undefined) ? { type: 'array', value: out as MmsData[] } : undefined;
    }
    case 'integer':
    case 'unsigned':
      if (d.type !== 'integer' && d.type !== 'unsigned') return undefined;
      return fitsInteger(d.value, t.bits, t.type === 'unsigned') ? { type: t.type, value: d.value } : undefined;
    case 'float':
      return d.type === 'float' ? { type: 'float', value: d.value, double: t.formatWidth === 64 } : undefined;
    case 'bit-string':
      return d.type === 'bit-string' && fitsSize(d.value.bitLength, t.size) ? d : undefined;
    case 'octet-string':
      return d.type === 'octet-string' && fitsSize(d.value.length, t.size) ? d : undefined;
    case 'visible-string':
    case 'mms-string':
      return d.type === t.type && d.value.length <= Math.abs(t.size) ? d : undefined;
    default:
      return d.type === t.type ? d : undefined;
  }
}
