/**
 * The IEC 61850 meanings of bit strings and time stamps (IEC 61850-7-2/-7-3, mapped by 8-1): Quality,
 * Dbpos, Tcmd, TrgOps, OptFlds, ReasonCode, and the TimeStamp's quality octet, both ways.
 */
import { bitsOf, bitStringFromBits, isoOfMs, type BitString, type UtcTime, utcTimeFromMs, utcTimeToMs } from '../mms/ber_values.ts';
import { Iec61850Error } from './errors.ts';

/** Quality as JSON: the validity, the detail flags that are set, the source. */
export type QualityJson = {
  validity: 'good' | 'invalid' | 'reserved' | 'questionable';
  flags: string[];
  source: 'process' | 'substituted';
};

/** A TimeStamp as JSON: ISO time, the time-quality flags that are set, the accuracy in bits (31: unspecified). */
export type TimestampJson = { time: string; flags: string[]; accuracy: number };

const VALIDITY = ['good', 'invalid', 'reserved', 'questionable'] as const;
/** Quality bits 2..12 after validity; bit 10 is the source, the rest are flags. */
const QUALITY_BITS = [
  'overflow',
  'outOfRange',
  'badReference',
  'oscillatory',
  'failure',
  'oldData',
  'inconsistent',
  'inaccurate',
  'source',
  'test',
  'operatorBlocked',
];
/** Named bits of the bit strings the client reads and writes; index = bit number. */
export const NAMED_BITS: Record<string, readonly string[]> = {
  TrgOps: ['reserved', 'dataChange', 'qualityChange', 'dataUpdate', 'integrity', 'gi'],
  OptFlds: [
    'reserved',
    'sequenceNumber',
    'reportTimeStamp',
    'reasonForInclusion',
    'dataSetName',
    'dataReference',
    'bufferOverflow',
    'entryId',
    'configRevision',
    'segmentation',
  ],
  ReasonCode: ['reserved', 'dataChange', 'qualityChange', 'dataUpdate', 'integrity', 'gi', 'applicationTrigger'],
};
/** Two-bit enumerations carried as bit strings. */
export const DBPOS = ['intermediate-state', 'off', 'on', 'bad-state'] as const;
export const TCMD = ['stop', 'lower', 'higher', 'reserved'] as const;
const TIME_FLAGS: [number, string][] = [
  [0x80, 'leapSecondsKnown'],
  [0x40, 'clockFailure'],
  [0x20, 'clockNotSynchronized'],
];

function bad(path: string, why: string): Iec61850Error {
  return new Iec61850Error('bad_value', `${path}: ${why}`);
}

/** Quality from its 13-bit string. */
export function qualityOf(bits: BitString): QualityJson {
  const b = bitsOf(bits);
  const validity = VALIDITY[((b[0] ? 1 : 0) << 1) | (b[1] ? 1 : 0)];
  const flags: string[] = [];
  for (let i = 0; i < QUALITY_BITS.length; i++) if (QUALITY_BITS[i] !== 'source' && b[i + 2]) flags.push(QUALITY_BITS[i]);
  return { validity, flags, source: b[10] ? 'substituted' : 'process' };
}

/** The 13-bit string of a quality object. */
export function qualityBits(q: unknown, path: string): BitString {
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw bad(path, 'a quality is an object { validity, flags?, source? }');
  const { validity = 'good', flags = [], source = 'process' } = q as Partial<QualityJson>;
  const v = VALIDITY.indexOf(validity);
  if (v < 0) throw bad(path, `validity '${validity}' is not one of ${VALIDITY.join(', ')}`);
  if (!Array.isArray(flags)) throw bad(path, 'quality flags are an array of names');
  const bits = new Array<boolean>(13).fill(false);
  bits[0] = (v & 2) !== 0;
  bits[1] = (v & 1) !== 0;
  for (const f of flags) {
    const i = QUALITY_BITS.indexOf(f);
    if (i < 0 || f === 'source') throw bad(path, `'${f}' is not a quality flag (${QUALITY_BITS.filter((n) => n !== 'source').join(', ')})`);
    bits[i + 2] = true;
  }
  if (source !== 'process' && source !== 'substituted') throw bad(path, `source '${source}' is neither process nor substituted`);
  bits[10] = source === 'substituted';
  return bitStringFromBits(bits);
}

/** Named flags of a bit string as an object (`{ dataChange: true, ... }`), reserved bits left out. */
export function flagsOf(bits: BitString, names: readonly string[]): Record<string, boolean> {
  const b = bitsOf(bits);
  const out: Record<string, boolean> = {};
  for (let i = 0; i < names.length; i++) if (names[i] !== 'reserved') out[names[i]] = b[i] ?? false;
  return out;
}

/** A bit string of `size` bits from an object of named flags; unknown names are refused. */
export function flagBits(value: unknown, names: readonly string[], size: number, path: string): BitString {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(path, `expected an object of flags (${names.filter((n) => n !== 'reserved').join(', ')})`);
  const bits = new Array<boolean>(size).fill(false);
  for (const [k, v] of Object.entries(value)) {
    const i = names.indexOf(k);
    if (i < 0 || k === 'reserved' || i >= size)
      throw bad(path, `'${k}' is not a flag here (${names.filter((n) => n !== 'reserved').join(', ')})`);
    if (typeof v !== 'boolean') throw bad(path, `flag '${k}' must be true or false`);
    bits[i] = v;
  }
  return bitStringFromBits(bits);
}

/** A two-bit enumeration's name. */
export function enumBitsOf(bits: BitString, names: readonly string[]): string {
  const b = bitsOf(bits);
  return names[((b[0] ? 1 : 0) << 1) | (b[1] ? 1 : 0)];
}

/** The two bits of an enumeration name (or its index). */
export function enumBits(value: unknown, names: readonly string[], path: string): BitString {
  const i = typeof value === 'number' ? value : names.indexOf(String(value));
  if (!Number.isInteger(i) || i < 0 || i > 3) throw bad(path, `expected one of ${names.join(', ')}`);
  return bitStringFromBits([(i & 2) !== 0, (i & 1) !== 0]);
}

/** A TimeStamp as JSON. */
export function timestampOf(t: UtcTime): TimestampJson {
  return {
    time: isoOfMs(utcTimeToMs(t)),
    flags: TIME_FLAGS.filter(([bit]) => (t.quality & bit) !== 0).map(([, n]) => n),
    accuracy: t.quality & 0x1f,
  };
}

/** A TimeStamp from an ISO string, a Date, ms since 1970, or a {@link TimestampJson}. */
export function timestampFrom(value: unknown, path: string): UtcTime {
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const { time, flags = [], accuracy = 0 } = value as Partial<TimestampJson>;
    if (!Array.isArray(flags)) throw bad(path, 'time flags are an array of names');
    let quality = 0;
    for (const f of flags) {
      const bit = TIME_FLAGS.find(([, n]) => n === f)?.[0];
      if (bit === undefined) throw bad(path, `'${f}' is not a time quality flag`);
      quality |= bit;
    }
    if (!Number.isInteger(accuracy) || accuracy < 0 || accuracy > 31) throw bad(path, 'time accuracy is 0..31 bits');
    return utcTimeFromMs(msOf(time, path), quality | accuracy);
  }
  return utcTimeFromMs(msOf(value, path));
}

/** Milliseconds since 1970 of an ISO string, a Date or a number. */
export function msOf(value: unknown, path: string): number {
  const ms =
    value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw bad(path, `expected a time (ISO string, Date or ms since 1970), got ${JSON.stringify(value)}`);
  if (ms < 0) throw bad(path, 'a time before 1970 cannot be sent');
  return ms;
}
