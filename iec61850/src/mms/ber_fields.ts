/**
 * Shorthands joining `ber.ts` and `ber_values.ts`: read a typed value out of a TLV (refusing a constructed
 * one), and write a typed value as a TLV. The upper layers read as their ASN.1 reads with these.
 */
import { prim, primitiveOf, type TagClass, type Tlv } from './ber.ts';
import {
  decodeBitString,
  decodeBoolean,
  decodeOid,
  decodeSmallInteger,
  decodeVisibleString,
  encodeBoolean,
  encodeInteger,
  encodeOid,
  encodeVisibleString,
  type BitString,
} from './ber_values.ts';

/** An INTEGER that fits a number. */
export function intOf(t: Tlv): number {
  return decodeSmallInteger(primitiveOf(t));
}

/** A BOOLEAN. */
export function boolOf(t: Tlv): boolean {
  return decodeBoolean(primitiveOf(t));
}

/** An OBJECT IDENTIFIER in dotted form. */
export function oidOf(t: Tlv): string {
  return decodeOid(primitiveOf(t));
}

/** A VisibleString. */
export function visibleOf(t: Tlv): string {
  return decodeVisibleString(primitiveOf(t));
}

/** A BIT STRING. */
export function bitStringOf(t: Tlv): BitString {
  return decodeBitString(primitiveOf(t));
}

/** An INTEGER TLV. */
export function intTlv(cls: TagClass, tag: number, value: number | bigint): Uint8Array {
  return prim(cls, tag, encodeInteger(value));
}

/** A BOOLEAN TLV. */
export function boolTlv(cls: TagClass, tag: number, value: boolean): Uint8Array {
  return prim(cls, tag, encodeBoolean(value));
}

/** An OBJECT IDENTIFIER TLV. */
export function oidTlv(cls: TagClass, tag: number, dotted: string): Uint8Array {
  return prim(cls, tag, encodeOid(dotted));
}

/** A VisibleString TLV. */
export function visibleTlv(cls: TagClass, tag: number, text: string): Uint8Array {
  return prim(cls, tag, encodeVisibleString(text));
}

/** A NULL TLV. */
export function nullTlv(cls: TagClass, tag: number): Uint8Array {
  return prim(cls, tag, new Uint8Array(0));
}
