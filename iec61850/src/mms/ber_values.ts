/**
 * BER value contents (what lies inside a TLV): INTEGER, BOOLEAN, BIT STRING, strings, OBJECT IDENTIFIER, and
 * the value shapes MMS adds for IEC 61850: floating point (exponent-width octet + IEEE 754), UtcTime and
 * BinaryTime. Decoders take the content octets and refuse malformed ones with a {@link CodecError}.
 */
import { CodecError } from './codec_error.ts';

/** A BIT STRING: `bitLength` bits, most significant bit of `bytes[0]` first; pad bits are zero. */
export type BitString = { bitLength: number; bytes: Uint8Array };

/** An MMS floating-point value and whether it travels as a double (64-bit) or a single (32-bit). */
export type MmsFloat = { value: number; double: boolean };

/** MMS UtcTime: seconds since 1970, a 24-bit binary fraction of a second, and the time quality octet. */
export type UtcTime = { seconds: number; fraction: number; quality: number };

/** MMS BinaryTime (TimeOfDay): milliseconds since midnight and, in the 6-octet form, days since 1984-01-01. */
export type BinaryTime = { msOfDay: number; days?: number };

/** Integers longer than this are refused: MMS integers are at most 64 bits (9 octets as unsigned). */
const MAX_INTEGER_OCTETS = 9;
/** 1984-01-01T00:00:00Z, the epoch of BinaryTime days. */
const EPOCH_1984_MS = 441763200000;
const MS_PER_DAY = 86400000;

function inRange(n: number, max: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= max;
}

function valueError(code: string, message: string): CodecError {
  return new CodecError('ber', code, message);
}

/** The shortest two's-complement content octets of an integer. */
export function encodeInteger(value: number | bigint): Uint8Array {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw valueError('bad_integer', `${value} is not a safe integer`);
  if (typeof value === 'number' && value >= -0x80000000 && value <= 0x7fffffff) {
    // invoke ids, context ids, enumerations: the common case, without BigInt
    let size = 1;
    while (size < 4 && (value < -(2 ** (8 * size - 1)) || value >= 2 ** (8 * size - 1))) size++;
    const out = new Uint8Array(size);
    for (let i = size - 1, v = value; i >= 0; i--, v >>= 8) out[i] = v & 0xff;
    return out;
  }
  let n = BigInt(value);
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  } while (!((n === 0n && (bytes[0] & 0x80) === 0) || (n === -1n && (bytes[0] & 0x80) !== 0)));
  return Uint8Array.from(bytes);
}

/** Content octets of an unsigned value (a leading zero octet when the top bit is set). */
export function encodeUnsigned(value: number | bigint): Uint8Array {
  if (BigInt(value) < 0n) throw valueError('bad_integer', `unsigned value ${value} is negative`);
  return encodeInteger(value);
}

function checkIntegerLength(content: Uint8Array): void {
  if (content.length === 0) throw valueError('bad_integer', 'an integer has no content octets');
  if (content.length > MAX_INTEGER_OCTETS)
    throw valueError('integer_too_long', `an integer of ${content.length} octets (at most ${MAX_INTEGER_OCTETS})`);
}

/** A two's-complement integer. */
export function decodeInteger(content: Uint8Array): bigint {
  checkIntegerLength(content);
  let n = 0n;
  for (const b of content) n = (n << 8n) | BigInt(b);
  return (content[0] & 0x80) !== 0 ? n - (1n << BigInt(content.length * 8)) : n;
}

/** An unsigned integer; the octets are read as a magnitude even without the leading zero some peers omit. */
export function decodeUnsigned(content: Uint8Array): bigint {
  checkIntegerLength(content);
  let n = 0n;
  for (const b of content) n = (n << 8n) | BigInt(b);
  return n;
}

/** A number when the integer is safe, else the bigint (64-bit MMS integers can exceed 2^53). */
export function toNumberIfSafe(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** An integer that must fit a JavaScript number (invoke ids, counts, enumerations). */
export function decodeSmallInteger(content: Uint8Array): number {
  const n = toNumberIfSafe(decodeInteger(content));
  if (typeof n === 'bigint') throw valueError('integer_out_of_range', `integer ${n} is too large`);
  return n;
}

/** BOOLEAN content: one octet; true is sent as 0x01, as the captured client does. */
export function encodeBoolean(value: boolean): Uint8Array {
  return Uint8Array.of(value ? 0x01 : 0x00);
}

/** BOOLEAN content: exactly one octet, any non-zero value is true. */
export function decodeBoolean(content: Uint8Array): boolean {
  if (content.length !== 1) throw valueError('bad_boolean', `a boolean of ${content.length} octets`);
  return content[0] !== 0;
}

/** BIT STRING content: the unused-bits octet, then the bits. */
export function encodeBitString(bits: BitString): Uint8Array {
  const needed = Math.ceil(bits.bitLength / 8);
  if (!Number.isInteger(bits.bitLength) || bits.bitLength < 0 || bits.bytes.length < needed) {
    throw valueError('bad_bit_string', `${bits.bitLength} bits do not fit ${bits.bytes.length} octets`);
  }
  const unused = needed * 8 - bits.bitLength;
  const content = new Uint8Array(needed + 1);
  content[0] = unused;
  content.set(bits.bytes.subarray(0, needed), 1);
  // pad bits must be zero
  if (needed > 0) content[needed] &= (0xff << unused) & 0xff;
  return content;
}

/** BIT STRING content; the unused-bits octet must be 0..7 (0 for an empty string). */
export function decodeBitString(content: Uint8Array): BitString {
  if (content.length === 0) throw valueError('bad_bit_string', 'a bit string has no unused-bits octet');
  const unused = content[0];
  if (unused > 7 || (content.length === 1 && unused !== 0)) throw valueError('bad_bit_string', `unused-bits octet ${unused} is invalid`);
  return { bitLength: (content.length - 1) * 8 - unused, bytes: content.slice(1) };
}

/** A bit string from booleans, first boolean = bit 0. */
export function bitStringFromBits(bits: readonly boolean[]): BitString {
  const bytes = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((on, i) => {
    if (on) bytes[i >> 3] |= 0x80 >> (i & 7);
  });
  return { bitLength: bits.length, bytes };
}

/** The bits of a bit string as booleans, bit 0 first. */
export function bitsOf(bits: BitString): boolean[] {
  const out = new Array<boolean>(bits.bitLength);
  for (let i = 0; i < bits.bitLength; i++) out[i] = (bits.bytes[i >> 3] & (0x80 >> (i & 7))) !== 0;
  return out;
}

/** VisibleString content; only printable ASCII (0x20..0x7e) can be written. */
export function encodeVisibleString(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw valueError('not_visible', `character ${JSON.stringify(text[i])} is not allowed in a VisibleString`);
    out[i] = c;
  }
  return out;
}

/** VisibleString content, read octet by octet (lenient: devices put other octets in descriptions). */
export function decodeVisibleString(content: Uint8Array): string {
  let text = '';
  for (const b of content) text += String.fromCharCode(b);
  return text;
}

/** MMS string (UTF-8) content. */
export function encodeUtf8String(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** MMS string (UTF-8) content; invalid UTF-8 is refused. */
export function decodeUtf8String(content: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    throw valueError('bad_utf8', 'an MMS string is not valid UTF-8');
  }
}

/** OBJECT IDENTIFIER content from dotted form (`1.0.9506.2.3`). */
export function encodeOid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((a) => (/^\d+$/.test(a) ? Number(a) : NaN));
  const bad = arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a)) || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] > 39);
  if (bad) throw valueError('bad_oid', `${JSON.stringify(dotted)} is not an object identifier`);
  const out: number[] = [];
  for (const arc of [arcs[0] * 40 + arcs[1], ...arcs.slice(2)]) {
    const groups: number[] = [];
    let n = arc;
    do {
      groups.unshift(n % 128);
      n = Math.floor(n / 128);
    } while (n > 0);
    out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return Uint8Array.from(out);
}

/** OBJECT IDENTIFIER content to dotted form. */
export function decodeOid(content: Uint8Array): string {
  if (content.length === 0) throw valueError('bad_oid', 'an object identifier has no content');
  const arcs: number[] = [];
  let n = 0;
  let fresh = true;
  for (const b of content) {
    if (fresh && b === 0x80) throw valueError('bad_oid', 'an object identifier arc has a leading zero octet');
    n = n * 128 + (b & 0x7f);
    if (n > Number.MAX_SAFE_INTEGER) throw valueError('bad_oid', 'an object identifier arc is too large');
    fresh = (b & 0x80) === 0;
    if (fresh) {
      arcs.push(n);
      n = 0;
    }
  }
  if (!fresh) throw valueError('bad_oid', 'an object identifier ends inside an arc');
  const first = arcs[0] < 80 ? Math.floor(arcs[0] / 40) : 2;
  return [first, arcs[0] - first * 40, ...arcs.slice(1)].join('.');
}

/** MMS floating-point content: exponent width 8 + binary32, or 11 + binary64. */
export function encodeMmsFloat(f: MmsFloat): Uint8Array {
  const out = new Uint8Array(f.double ? 9 : 5);
  const view = new DataView(out.buffer);
  out[0] = f.double ? 11 : 8;
  if (f.double) view.setFloat64(1, f.value);
  else view.setFloat32(1, f.value);
  return out;
}

/** MMS floating-point content; only the IEEE single (8, 4 octets) and double (11, 8 octets) formats. */
export function decodeMmsFloat(content: Uint8Array): MmsFloat {
  const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
  if (content.length === 5 && content[0] === 8) return { value: view.getFloat32(1), double: false };
  if (content.length === 9 && content[0] === 11) return { value: view.getFloat64(1), double: true };
  throw valueError('bad_float', `floating point of ${content.length} octets with exponent width ${content[0]}`);
}

/** UtcTime content: 4 octets of seconds, 3 of fraction, 1 of quality. */
export function encodeUtcTime(t: UtcTime): Uint8Array {
  const ok = inRange(t.seconds, 0xffffffff) && inRange(t.fraction, 0xffffff) && inRange(t.quality, 0xff);
  if (!ok) throw valueError('bad_utc_time', `UtcTime ${JSON.stringify(t)} is out of range`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setUint32(0, t.seconds);
  out.set([t.fraction >> 16, (t.fraction >> 8) & 0xff, t.fraction & 0xff, t.quality], 4);
  return out;
}

/** UtcTime content: exactly 8 octets. */
export function decodeUtcTime(content: Uint8Array): UtcTime {
  if (content.length !== 8) throw valueError('bad_utc_time', `a UtcTime of ${content.length} octets (8 expected)`);
  const view = new DataView(content.buffer, content.byteOffset, 8);
  return { seconds: view.getUint32(0), fraction: view.getUint32(4) >>> 8, quality: content[7] };
}

/**
 * What libiec61850 divides a UtcTime's fraction by to get milliseconds (`MmsValue_getUtcTimeInMs`,
 * `Timestamp_getTimeInMs`): 16777, the whole part of 2^24 / 1000.
 */
const FRACTION_PER_MS = 16777;

/** The last second {@link isoOfMs} wrote, and its text up to the milliseconds. */
let isoSecond = Number.NaN;
let isoPrefix = '';
/** The milliseconds and the `Z` that end a time's text, by milliseconds. */
const isoEnds = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);

/**
 * `new Date(ms).toISOString()`, the same text, for a fraction of its CPU when the second is the one of the
 * call before, as it is for the time stamps of a stream of reported values: the second's text is kept,
 * and only the milliseconds added. NaN and instants past a `Date`'s range throw as it does.
 */
export function isoOfMs(ms: number): string {
  const whole = Math.trunc(ms) + 0;
  if (!(Math.abs(whole) <= 8.64e15)) return new Date(ms).toISOString();
  const second = Math.floor(whole / 1000);
  if (second !== isoSecond) {
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4);
    isoSecond = second;
  }
  return isoPrefix + (isoEnds[whole - second * 1000] as string);
}

/**
 * Milliseconds since 1970 of a UtcTime, decoded as libiec61850 decodes it: the seconds, plus the fraction
 * divided by 16777 and rounded down. Against the exact `fraction * 1000 / 2^24` rounded down this is 1 ms
 * more for the fractions just short of a whole millisecond k (16777·k up to 2^24·k / 1000), which are what an
 * encoder writes for a time of whole milliseconds (libiec61850's and this one's), so such a time reads back as
 * written. A fraction of 16,777,000 or more reads as 1000 ms, the next second, as it does there.
 */
export function utcTimeToMs(t: UtcTime): number {
  return t.seconds * 1000 + Math.floor(t.fraction / FRACTION_PER_MS);
}

/**
 * A UtcTime at `ms` milliseconds since 1970, with the given quality octet: the fraction is the milliseconds
 * times 2^24 / 1000 rounded down, the same as libiec61850's `MmsValue_setUtcTimeMs` writes.
 */
export function utcTimeFromMs(ms: number, quality = 0): UtcTime {
  const seconds = Math.floor(ms / 1000);
  return { seconds, fraction: Math.floor(((ms - seconds * 1000) * 0x1000000) / 1000), quality };
}

/** BinaryTime content: 4 octets (time of day) or 6 (with days since 1984). */
export function encodeBinaryTime(t: BinaryTime): Uint8Array {
  if (!inRange(t.msOfDay, MS_PER_DAY - 1) || (t.days !== undefined && !inRange(t.days, 0xffff))) {
    throw valueError('bad_binary_time', `BinaryTime ${JSON.stringify(t)} is out of range`);
  }
  const out = new Uint8Array(t.days === undefined ? 4 : 6);
  const view = new DataView(out.buffer);
  view.setUint32(0, t.msOfDay);
  if (t.days !== undefined) view.setUint16(4, t.days);
  return out;
}

/** BinaryTime content: exactly 4 or 6 octets. */
export function decodeBinaryTime(content: Uint8Array): BinaryTime {
  if (content.length !== 4 && content.length !== 6)
    throw valueError('bad_binary_time', `a BinaryTime of ${content.length} octets (4 or 6 expected)`);
  const view = new DataView(content.buffer, content.byteOffset, content.length);
  return content.length === 4 ? { msOfDay: view.getUint32(0) } : { msOfDay: view.getUint32(0), days: view.getUint16(4) };
}

/** Milliseconds since 1970 of a 6-octet BinaryTime (undefined for the time-of-day-only form). */
export function binaryTimeToMs(t: BinaryTime): number | undefined {
  return t.days === undefined ? undefined : EPOCH_1984_MS + t.days * MS_PER_DAY + t.msOfDay;
}

/** The 6-octet BinaryTime of `ms` milliseconds since 1970 (at or after 1984-01-01). */
export function binaryTimeFromMs(ms: number): BinaryTime {
  const since = ms - EPOCH_1984_MS;
  const days = Math.floor(since / MS_PER_DAY);
  return { msOfDay: since - days * MS_PER_DAY, days };
}
