/**
 * BER (X.690) structure: identifiers with any tag number, definite lengths in short and long form, a reader
 * that never reads past its buffer, and a writer that emits the shortest encodings. Indefinite lengths are
 * refused: ACSE and MMS peers send definite lengths, and refusing keeps the reader linear and bounded.
 * Values (integers, strings, OIDs, MMS times) are in `ber_values.ts`.
 */
import { CodecError } from './codec_error.ts';

/** The class bits of an identifier. */
export type TagClass = 'universal' | 'application' | 'context' | 'private';

/** One decoded type-length-value; `value` is a view into the decoded buffer, not a copy. */
export type Tlv = {
  cls: TagClass;
  constructed: boolean;
  tag: number;
  value: Uint8Array;
};

/** A parsed identifier and where the length begins. */
export type TagHeader = { cls: TagClass; constructed: boolean; tag: number; next: number };

const CLASSES: readonly TagClass[] = ['universal', 'application', 'context', 'private'];
const CLASS_BITS: Record<TagClass, number> = { universal: 0x00, application: 0x40, context: 0x80, private: 0xc0 };
const CLASS_LETTER: Record<TagClass, string> = { universal: 'U', application: 'A', context: 'C', private: 'P' };
/** Tag numbers above this (four base-128 bytes) are refused; ISO protocols use far smaller ones. */
const MAX_TAG = 0x0fffffff;

function berError(code: string, message: string): CodecError {
  return new CodecError('ber', code, message);
}

/** Reads an identifier at `at`. */
export function readTag(buf: Uint8Array, at: number): TagHeader {
  if (at >= buf.length) throw berError('truncated', `identifier expected at offset ${at}, buffer ends`);
  const first = buf[at];
  const cls = CLASSES[first >> 6];
  const constructed = (first & 0x20) !== 0;
  if ((first & 0x1f) !== 0x1f) return { cls, constructed, tag: first & 0x1f, next: at + 1 };
  let tag = 0;
  let pos = at + 1;
  for (let count = 0; ; count++) {
    if (pos >= buf.length) throw berError('truncated', `tag number at offset ${at} runs past the end`);
    if (count === 4) throw berError('tag_too_long', `tag number at offset ${at} is longer than four bytes`);
    const byte = buf[pos++];
    if (count === 0 && byte === 0x80) throw berError('bad_tag', `tag number at offset ${at} has a leading zero byte`);
    tag = tag * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) break;
  }
  return { cls, constructed, tag, next: pos };
}

/** Reads a definite length at `at`; refuses the indefinite form and lengths over four bytes. */
export function readLength(buf: Uint8Array, at: number): { length: number; next: number } {
  if (at >= buf.length) throw berError('truncated', `length expected at offset ${at}, buffer ends`);
  const first = buf[at];
  if (first < 0x80) return { length: first, next: at + 1 };
  if (first === 0x80) throw berError('indefinite_length', `indefinite length at offset ${at} is not supported`);
  const count = first & 0x7f;
  if (first === 0xff) throw berError('bad_length', `reserved length octet 0xff at offset ${at}`);
  if (count > 4) throw berError('length_too_long', `length at offset ${at} has ${count} octets (at most 4)`);
  if (at + 1 + count > buf.length) throw berError('truncated', `length at offset ${at} runs past the end`);
  let length = 0;
  for (let i = 1; i <= count; i++) length = length * 256 + buf[at + i];
  return { length, next: at + 1 + count };
}

/** Reads one TLV at `at`; its value must lie inside `buf`. */
export function readTlv(buf: Uint8Array, at = 0): { tlv: Tlv; next: number } {
  const head = readTag(buf, at);
  const { length, next } = readLength(buf, head.next);
  if (length > buf.length - next) {
    throw berError('length_past_end', `${tagName(head)} at offset ${at} declares ${length} bytes, ${buf.length - next} remain`);
  }
  const tlv = { cls: head.cls, constructed: head.constructed, tag: head.tag, value: buf.subarray(next, next + length) };
  return { tlv, next: next + length };
}

/**
 * Reads the TLVs that fill `buf` exactly (the content of a constructed value). The usual TLV (a tag number
 * below 31, a length below 128) is read in place, with no object but the TLV itself: a read's answer holds
 * a dozen of them, each layer of the stack reads them, and the headers `readTlv` builds were a good share
 * of what a read allocated. Anything else goes through `readTlv`, which also says what is wrong.
 */
export function readTlvs(buf: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < buf.length; ) {
    const first = buf[at];
    const length = buf[at + 1];
    if ((first & 0x1f) !== 0x1f && length !== undefined && length < 0x80 && at + 2 + length <= buf.length) {
      out.push({
        cls: CLASSES[first >> 6],
        constructed: (first & 0x20) !== 0,
        tag: first & 0x1f,
        value: buf.subarray(at + 2, at + 2 + length),
      });
      at += 2 + length;
      continue;
    }
    const { tlv, next } = readTlv(buf, at);
    out.push(tlv);
    at = next;
  }
  return out;
}

/** Reads a buffer that must hold exactly one TLV. */
export function readSingle(buf: Uint8Array): Tlv {
  const { tlv, next } = readTlv(buf, 0);
  if (next !== buf.length) throw berError('trailing_bytes', `${buf.length - next} bytes follow ${tagName(tlv)}`);
  return tlv;
}

/** The children of a constructed TLV. */
export function childrenOf(tlv: Tlv): Tlv[] {
  if (!tlv.constructed) throw berError('not_constructed', `${tagName(tlv)} is primitive where a constructed value is expected`);
  return readTlvs(tlv.value);
}

/** The single child of a constructed TLV (an explicit tag around a CHOICE or an ANY). */
export function onlyChildOf(tlv: Tlv): Tlv {
  const kids = childrenOf(tlv);
  if (kids.length !== 1) throw berError('bad_structure', `${tagName(tlv)} holds ${kids.length} values, one expected`);
  return kids[0];
}

/** The value of a primitive TLV. */
export function primitiveOf(tlv: Tlv): Uint8Array {
  if (tlv.constructed) throw berError('not_primitive', `${tagName(tlv)} is constructed where a primitive value is expected`);
  return tlv.value;
}

/** True when the TLV carries this class and tag number. */
export function isTag(tlv: Pick<Tlv, 'cls' | 'tag'>, cls: TagClass, tag: number): boolean {
  return tlv.cls === cls && tlv.tag === tag;
}

/** Returns the TLV when it has this class and number, else throws naming what was expected. */
export function expectTag(tlv: Tlv, cls: TagClass, tag: number, what: string): Tlv {
  if (!isTag(tlv, cls, tag)) {
    throw berError('unexpected_tag', `${what} expected as ${tagName({ cls, tag })}, got ${tagName(tlv)}`);
  }
  return tlv;
}

/** A short name of a tag as the annotated capture writes it: `[C4]`, `[A1]`, `[U16]`. */
export function tagName(t: Pick<Tlv, 'cls' | 'tag'>): string {
  return `[${CLASS_LETTER[t.cls]}${t.tag}]`;
}

/** The identifier octets of a tag. */
export function encodeTag(cls: TagClass, constructed: boolean, tag: number): Uint8Array {
  if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) throw berError('bad_tag', `tag number ${tag} cannot be encoded`);
  const lead = CLASS_BITS[cls] | (constructed ? 0x20 : 0);
  if (tag < 31) return Uint8Array.of(lead | tag);
  const groups: number[] = [];
  for (let n = tag; n > 0; n = Math.floor(n / 128)) groups.unshift(n % 128);
  return Uint8Array.of(lead | 0x1f, ...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
}

/** The shortest definite length octets for `length`. */
export function encodeLength(length: number): Uint8Array {
  if (!Number.isInteger(length) || length < 0 || length > 0xffffffff) throw berError('bad_length', `length ${length} cannot be encoded`);
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** Copies `src` into `out` at `at`; a byte loop beats `set()` on the short parts BER is made of. */
function copyInto(out: Uint8Array, src: Uint8Array, at: number): void {
  const n = src.length;
  if (n > 32) return out.set(src, at);
  for (let i = 0; i < n; i++) out[at + i] = src[i];
}

/** Joins byte arrays. */
export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  return joinAfterHeader(-1, 0, parts);
}

/** Octets of the identifier and length of a TLV with this tag number and content length. */
function headerSize(tag: number, length: number): number {
  let size = 2;
  if (tag >= 31) for (let n = tag; n > 0; n = Math.floor(n / 128)) size++;
  if (length >= 0x80) for (let n = length; n > 0; n = Math.floor(n / 256)) size++;
  return size;
}

/**
 * The TLV with identifier octet `lead` (class and constructed bits) and tag number `tag` around `parts`,
 * built in one allocation; with `lead` -1, just the parts joined.
 */
function joinAfterHeader(lead: number, tag: number, parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (let i = 0; i < parts.length; i++) length += parts[i].length;
  if (lead < 0) {
    const out = new Uint8Array(length);
    for (let i = 0, at = 0; i < parts.length; at += parts[i].length, i++) copyInto(out, parts[i], at);
    return out;
  }
  if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) throw berError('bad_tag', `tag number ${tag} cannot be encoded`);
  if (length > 0xffffffff) throw berError('bad_length', `length ${length} cannot be encoded`);
  const out = new Uint8Array(headerSize(tag, length) + length);
  let at = 0;
  if (tag < 31) out[at++] = lead | tag;
  else {
    out[at++] = lead | 0x1f;
    let groups = 0;
    for (let n = tag; n > 0; n = Math.floor(n / 128)) groups++;
    for (let g = groups - 1; g >= 0; g--) out[at++] = (Math.floor(tag / 128 ** g) % 128) | (g > 0 ? 0x80 : 0);
  }
  if (length < 0x80) out[at++] = length;
  else {
    let bytes = 0;
    for (let n = length; n > 0; n = Math.floor(n / 256)) bytes++;
    out[at++] = 0x80 | bytes;
    for (let b = bytes - 1; b >= 0; b--) out[at++] = Math.floor(length / 256 ** b) % 256;
  }
  for (let i = 0; i < parts.length; at += parts[i].length, i++) copyInto(out, parts[i], at);
  return out;
}

/** A primitive TLV. */
export function prim(cls: TagClass, tag: number, value: Uint8Array): Uint8Array {
  return joinAfterHeader(CLASS_BITS[cls], tag, [value]);
}

/** A constructed TLV holding the given encoded children in order. */
export function cons(cls: TagClass, tag: number, ...children: readonly Uint8Array[]): Uint8Array {
  return joinAfterHeader(CLASS_BITS[cls] | 0x20, tag, children);
}
