/**
 * A read's answer decoded where it lies: the TSDU of a session DATA carrying one presentation data value of
 * the MMS context, a Confirmed-ResponsePDU, a Read response of results only. Polling reads are answered by
 * thousands a second, each a frame of a few dozen octets; peeled layer by layer (`peelTsdu`), one answer made
 * some fifty objects (views, TLVs, arrays of children, the layers' records) that lived a microsecond. Here the
 * layers are walked by offsets and only the results are made. Anything else, or anything unusual in a layer
 * (another SPDU, a transfer syntax named in the PDV, a variable specification with the results, a tag number
 * of several octets), is left to the layered decoders: {@link readAnswerAt} answers undefined and decodes
 * nothing. The results are the values the layered decoders give; a value of a rarer kind, or one in a form
 * they refuse, is handed to them (`decodeAccessResult`), so that it is refused as they refuse it.
 */
import { readTlv } from './ber.ts';
import { MAX_DATA_DEPTH, type MmsData } from './mms_data.ts';
import { decodeAccessResult, type AccessResult } from './mms_access.ts';

/** The end of the TLV whose length octets begin at `at`, or -1 when it is not a definite length lying within `end`. */
let contentStart = 0;
function tlvEnd(buf: Uint8Array, at: number, end: number): number {
  if (at >= end) return -1;
  const first = buf[at];
  let length: number;
  if (first < 0x80) {
    length = first;
    contentStart = at + 1;
  } else {
    const count = first & 0x7f;
    // indefinite (0x80), reserved (0xff) and over-long forms are the layered reader's to refuse
    if (count === 0 || count > 4 || first === 0xff || at + 1 + count > end) return -1;
    length = 0;
    for (let i = 1; i <= count; i++) length = length * 256 + buf[at + i];
    contentStart = at + 1 + count;
  }
  const stop = contentStart + length;
  return stop > end ? -1 : stop;
}

/** Where the next value begins, after {@link dataAt} decoded one. */
let next = 0;
const floatBytes = new Uint8Array(8);
const floatView = new DataView(floatBytes.buffer);

/**
 * The Data value at `at` (its identifier octet), or undefined when it is not one of the usual kinds in their
 * usual form: the caller then decodes the whole result with the layered decoders, which also name what is wrong.
 */
function dataAt(buf: Uint8Array, at: number, end: number, depth: number): MmsData | undefined {
  const first = buf[at];
  const stop = tlvEnd(buf, at + 1, end);
  if (stop < 0 || depth > MAX_DATA_DEPTH) return undefined;
  const from = contentStart;
  const length = stop - from;
  next = stop;
  switch (first) {
    case 0xa1: // array
    case 0xa2: {
      // structure
      const value: MmsData[] = [];
      for (let p = from; p < stop; ) {
        const item = dataAt(buf, p, stop, depth + 1);
        if (item === undefined) return undefined;
        value.push(item);
        p = next;
      }
      next = stop;
      return { type: first === 0xa2 ? 'structure' : 'array', value };
    }
    case 0x83: // boolean
      return length === 1 ? { type: 'boolean', value: buf[from] !== 0 } : undefined;
    case 0x84: {
      // bit-string: the unused-bits octet, then the bits
      const unused = buf[from];
      if (length === 0 || unused > 7 || (length === 1 && unused !== 0)) return undefined;
      // a copy of its own, as the layered decoder makes (never a view of the socket's buffer)
      const bytes = new Uint8Array(length - 1);
      for (let i = 1; i < length; i++) bytes[i - 1] = buf[from + i];
      return { type: 'bit-string', value: { bitLength: (length - 1) * 8 - unused, bytes } };
    }
    case 0x85: // integer, two's complement
    case 0x86: {
      // unsigned; up to six octets are a safe number either way
      if (length === 0 || length > 6) return undefined;
      let n = 0;
      for (let i = from; i < stop; i++) n = n * 256 + buf[i];
      if (first === 0x85 && (buf[from] & 0x80) !== 0) n -= 256 ** length;
      return first === 0x85 ? { type: 'integer', value: n } : { type: 'unsigned', value: n };
    }
    case 0x87: {
      // floating point: exponent width 8 and a binary32, or 11 and a binary64
      const double = length === 9 && buf[from] === 11;
      if (!double && !(length === 5 && buf[from] === 8)) return undefined;
      for (let i = 1; i < length; i++) floatBytes[i - 1] = buf[from + i];
      return { type: 'float', value: double ? floatView.getFloat64(0) : floatView.getFloat32(0), double };
    }
    case 0x91: {
      // utc-time: seconds, a 24-bit fraction, the quality octet
      if (length !== 8) return undefined;
      const seconds = ((buf[from] << 24) | (buf[from + 1] << 16) | (buf[from + 2] << 8) | buf[from + 3]) >>> 0;
      const fraction = (buf[from + 4] << 16) | (buf[from + 5] << 8) | buf[from + 6];
      return { type: 'utc-time', value: { seconds, fraction, quality: buf[from + 7] } };
    }
    default:
      return undefined;
  }
}

/** The results of a list of access results (`[C1]` content from `at` to `end`). */
function resultsAt(buf: Uint8Array, at: number, end: number): AccessResult[] {
  const results: AccessResult[] = [];
  while (at < end) {
    const data = (buf[at] & 0x1f) === 0x1f || buf[at] === 0x80 ? undefined : dataAt(buf, at, end, 0);
    if (data !== undefined) {
      results.push({ ok: true, data });
      at = next;
      continue;
    }
    // the layered decoders: a data access error, a rarer kind of value, or one they refuse with its reason;
    // on a plain view, as the layered path reads (a Node Buffer's `slice` would not copy)
    const { tlv, next: after } = readTlv(new Uint8Array(buf.buffer, buf.byteOffset, end), at);
    results.push(decodeAccessResult(tlv));
    at = after;
  }
  return results;
}

/** What {@link readAnswerAt} found besides the results: the invoke id they answer. */
export type ReadAnswer = { invokeId: number };

/**
 * The results of the read answered by the TSDU from `start` to `end` (after the COTP header), its invoke id
 * in `answer`; undefined when the TSDU is anything else or not in the usual form, nothing decoded then. The
 * results' values may throw the layered decoders' errors, as `peelTsdu` would for the same octets.
 */
export function readAnswerAt(buf: Uint8Array, start: number, end: number, answer: ReadAnswer): AccessResult[] | undefined {
  // session: GIVE TOKENS and DATA TRANSFER, both without parameters
  if (end - start < 20 || buf[start] !== 1 || buf[start + 1] !== 0 || buf[start + 2] !== 1 || buf[start + 3] !== 0) return undefined;
  // presentation: fully-encoded user data holding one PDV list, context 3 (MMS), its single ASN.1 value
  let at = start + 4;
  if (buf[at] !== 0x61 || tlvEnd(buf, at + 1, end) !== end) return undefined;
  at = contentStart;
  if (buf[at] !== 0x30 || tlvEnd(buf, at + 1, end) !== end) return undefined;
  at = contentStart;
  if (buf[at] !== 0x02 || buf[at + 1] !== 0x01 || buf[at + 2] !== 0x03 || buf[at + 3] !== 0xa0 || tlvEnd(buf, at + 4, end) !== end)
    return undefined;
  at = contentStart;
  // MMS: a Confirmed-ResponsePDU filling the value, of an invoke id and a Read response
  if (buf[at] !== 0xa1 || tlvEnd(buf, at + 1, end) !== end) return undefined;
  at = contentStart;
  const idLength = buf[at + 1];
  if (buf[at] !== 0x02 || idLength === 0 || idLength > 5 || at + 2 + idLength > end) return undefined;
  let invokeId = 0;
  for (let i = at + 2; i < at + 2 + idLength; i++) invokeId = invokeId * 256 + buf[i];
  if (invokeId > 0xffffffff) return undefined;
  at += 2 + idLength;
  if (buf[at] !== 0xa4 || tlvEnd(buf, at + 1, end) !== end) return undefined;
  at = contentStart;
  // results only (no variable access specification before them), the list filling the response
  if (buf[at] !== 0xa1 || tlvEnd(buf, at + 1, end) !== end) return undefined;
  answer.invokeId = invokeId;
  return resultsAt(buf, contentStart, end);
}
