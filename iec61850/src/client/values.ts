/**
 * MMS values as plain JSON and back. Reading: numbers, booleans, strings, octet strings as hex, structures as
 * objects keyed by the component names of the variable's type, qualities, double points and time stamps
 * decoded. Writing: JSON checked against the variable's MMS type and converted, refusing a wrong value with
 * an {@link Iec61850Error} `bad_value` that names where and why, before anything is sent.
 */
import { binaryTimeFromMs, binaryTimeToMs, bitsOf, bitStringFromBits, isoOfMs, type BitString } from '../mms/ber_values.ts';
import type { MmsData } from '../mms/mms_data.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { Iec61850Error } from './errors.ts';
import {
  DBPOS,
  enumBits,
  enumBitsOf,
  flagBits,
  flagsOf,
  msOf,
  NAMED_BITS,
  qualityBits,
  qualityOf,
  TCMD,
  timestampFrom,
  timestampOf,
} from './values_bits.ts';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

type BitMeaning = { kind: 'quality' } | { kind: 'enum'; names: readonly string[] } | { kind: 'flags'; names: readonly string[] };

/** What a bit string named `name` of `bitLength` bits means in IEC 61850, if anything known. */
function bitMeaning(name: string | undefined, bitLength: number): BitMeaning | undefined {
  if (name === undefined) return undefined;
  if ((name === 'q' || name === 'subQ') && bitLength === 13) return { kind: 'quality' };
  if ((name === 'stVal' || name === 'subVal') && bitLength === 2) return { kind: 'enum', names: DBPOS };
  if (name === 'ctlVal' && bitLength === 2) return { kind: 'enum', names: TCMD };
  const names = NAMED_BITS[name];
  return names ? { kind: 'flags', names } : undefined;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function bitStringJson(bits: BitString, name: string | undefined): Json {
  const meaning = bitMeaning(name, bits.bitLength);
  if (meaning?.kind === 'quality') return qualityOf(bits);
  if (meaning?.kind === 'enum') return enumBitsOf(bits, meaning.names);
  if (meaning?.kind === 'flags') return flagsOf(bits, meaning.names);
  return bitsOf(bits);
}

/** A big integer stays exact as a string; every other integer is a number. */
function integerJson(n: number | bigint): Json {
  return typeof n === 'bigint' ? n.toString() : n;
}

/**
 * An MMS value as JSON. `type` (from GetVariableAccessAttributes) names structure components; `name` (the
 * last element of the reference) tells a quality or a double point from other bit strings.
 */
export function toJson(d: MmsData, type?: MmsType, name?: string): Json {
  switch (d.type) {
    case 'structure': {
      const components = type?.type === 'structure' ? type.components : undefined;
      const named = components !== undefined && components.length === d.value.length && components.every((c) => c.name !== undefined);
      if (!named) return d.value.map((v) => toJson(v));
      return Object.fromEntries(d.value.map((v, i) => [components[i].name!, toJson(v, components[i].type, components[i].name)]));
    }
    case 'array':
      return d.value.map((v) => toJson(v, type?.type === 'array' ? type.element : undefined, name));
    case 'bit-string':
      return bitStringJson(d.value, name);
    case 'integer':
    case 'unsigned':
    case 'bcd':
      return integerJson(d.value);
    case 'float':
      return d.value;
    case 'octet-string':
      return hex(d.value);
    case 'utc-time':
      return timestampOf(d.value);
    case 'binary-time': {
      const ms = binaryTimeToMs(d.value);
      return ms === undefined ? { msOfDay: d.value.msOfDay } : isoOfMs(ms);
    }
    default:
      return d.value;
  }
}

function bad(path: string, why: string): Iec61850Error {
  return new Iec61850Error('bad_value', `${path}: ${why}`);
}

function integerFrom(value: unknown, bits: number, signed: boolean, path: string): number | bigint {
  let n: bigint;
  if (typeof value === 'number' && Number.isInteger(value)) n = BigInt(value);
  else if (typeof value === 'bigint') n = value;
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) n = BigInt(value);
  else throw bad(path, `expected an integer, got ${JSON.stringify(value) ?? String(value)}`);
  const width = BigInt(bits);
  const min = signed ? -(1n << (width - 1n)) : 0n;
  const max = signed ? (1n << (width - 1n)) - 1n : (1n << width) - 1n;
  if (n < min || n > max) throw bad(path, `${n} is outside ${min}..${max} (INT${bits}${signed ? '' : 'U'})`);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

function stringFrom(value: unknown, size: number, visible: boolean, path: string): string {
  if (typeof value !== 'string') throw bad(path, `expected a string, got ${JSON.stringify(value) ?? String(value)}`);
  const max = Math.abs(size);
  const length = visible ? value.length : [...value].length;
  if (max > 0 && length > max) throw bad(path, `${length} characters, at most ${max} fit`);
  if (visible && !/^[\x20-\x7e]*$/.test(value)) throw bad(path, 'a visible string takes printable ASCII only');
  return value;
}

function octetsFrom(value: unknown, size: number, path: string): Uint8Array {
  let bytes: Uint8Array;
  if (value instanceof Uint8Array) bytes = value;
  else if (typeof value === 'string' && /^([0-9a-f]{2})*$/i.test(value))
    bytes = Uint8Array.from(value.match(/../g) ?? [], (h) => parseInt(h, 16));
  else if (Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) bytes = Uint8Array.from(value);
  else throw bad(path, 'expected octets as hex text or an array of bytes');
  const max = Math.abs(size);
  if (max > 0 && bytes.length > max) throw bad(path, `${bytes.length} octets, at most ${max} fit`);
  return bytes;
}

function bitStringFrom(value: unknown, size: number, name: string | undefined, path: string): BitString {
  const max = Math.abs(size);
  const meaning = bitMeaning(name, max);
  if (meaning?.kind === 'quality') return qualityBits(value, path);
  if (meaning?.kind === 'enum') return enumBits(value, meaning.names, path);
  if (meaning?.kind === 'flags' && typeof value === 'object' && value !== null && !Array.isArray(value))
    return flagBits(value, meaning.names, max, path);
  let bits: boolean[];
  if (Array.isArray(value) && value.every((b) => typeof b === 'boolean')) bits = value;
  else if (typeof value === 'string' && /^[01]*$/.test(value)) bits = [...value].map((c) => c === '1');
  else
    throw bad(
      path,
      `expected bits as an array of booleans or a '0101' string${meaning ? ` or an object of flags (${meaning.names.filter((n) => n !== 'reserved').join(', ')})` : ''}`,
    );
  if (size > 0 && bits.length !== size) throw bad(path, `${bits.length} bits where the type has exactly ${size}`);
  if (size < 0 && bits.length > max) throw bad(path, `${bits.length} bits, at most ${max} fit`);
  return bitStringFromBits(bits);
}

function structureFrom(value: unknown, type: Extract<MmsType, { type: 'structure' }>, path: string): MmsData {
  const c = type.components;
  if (Array.isArray(value)) {
    if (value.length !== c.length) throw bad(path, `${value.length} values for a structure of ${c.length} components`);
    return { type: 'structure', value: c.map((comp, i) => fromJson(value[i], comp.type, comp.name, `${path}.${comp.name ?? i}`)) };
  }
  if (typeof value !== 'object' || value === null) throw bad(path, `expected an object with ${c.map((x) => x.name).join(', ')}`);
  const given = value as Record<string, unknown>;
  const known = new Set(c.map((x) => x.name));
  const extra = Object.keys(given).filter((k) => !known.has(k));
  if (extra.length > 0)
    throw bad(
      path,
      `unknown component${extra.length > 1 ? 's' : ''} ${extra.join(', ')} (the type has ${c.map((x) => x.name).join(', ')})`,
    );
  const missing = c.filter((x) => x.name === undefined || !(x.name in given)).map((x) => x.name ?? '?');
  if (missing.length > 0) throw bad(path, `missing ${missing.join(', ')}`);
  return { type: 'structure', value: c.map((comp) => fromJson(given[comp.name!], comp.type, comp.name, `${path}.${comp.name}`)) };
}

/**
 * JSON as the MMS value of `type`. `name` is the last element of the reference (it tells a quality or a
 * double point from other bit strings); `path` names the value in error messages.
 */
export function fromJson(value: unknown, type: MmsType, name?: string, path = name ?? 'value'): MmsData {
  switch (type.type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw bad(path, `expected true or false, got ${JSON.stringify(value) ?? String(value)}`);
      return { type: 'boolean', value };
    case 'integer':
      return { type: 'integer', value: integerFrom(value, type.bits, true, path) };
    case 'unsigned':
    case 'bcd':
      return { type: type.type, value: integerFrom(value, type.bits, false, path) };
    case 'float':
      if (typeof value !== 'number') throw bad(path, `expected a number, got ${JSON.stringify(value) ?? String(value)}`);
      return { type: 'float', value, double: type.formatWidth > 32 };
    case 'visible-string':
      return { type: 'visible-string', value: stringFrom(value, type.size, true, path) };
    case 'mms-string':
      return { type: 'mms-string', value: stringFrom(value, type.size, false, path) };
    case 'octet-string':
      return { type: 'octet-string', value: octetsFrom(value, type.size, path) };
    case 'bit-string':
      return { type: 'bit-string', value: bitStringFrom(value, type.size, name, path) };
    case 'utc-time':
      return { type: 'utc-time', value: timestampFrom(value, path) };
    case 'binary-time':
      return { type: 'binary-time', value: binaryTimeFromMs(msOf(value, path)) };
    case 'obj-id':
      if (typeof value !== 'string' || !/^\d+(\.\d+)+$/.test(value)) throw bad(path, 'expected a dotted object identifier');
      return { type: 'obj-id', value };
    case 'structure':
      return structureFrom(value, type, path);
    case 'array':
      if (!Array.isArray(value) || value.length !== type.elements) throw bad(path, `expected an array of ${type.elements} elements`);
      return { type: 'array', value: value.map((v, i) => fromJson(v, type.element, name, `${path}[${i}]`)) };
    default:
      throw new Iec61850Error('unsupported', `${path}: writing ${type.type} values is not supported`);
  }
}

/** A short name of a type for browse trees: `BOOLEAN`, `INT32`, `FLOAT32`, `VisString255`, `Quality`... */
export function typeName(type: MmsType, name?: string): string {
  switch (type.type) {
    case 'boolean':
      return 'BOOLEAN';
    case 'integer':
      return `INT${type.bits}`;
    case 'unsigned':
      return `INT${type.bits}U`;
    case 'float':
      return type.formatWidth > 32 ? 'FLOAT64' : 'FLOAT32';
    case 'visible-string':
      return `VisString${Math.abs(type.size)}`;
    case 'mms-string':
      return `Unicode${Math.abs(type.size)}`;
    case 'octet-string':
      return `Octet${Math.abs(type.size)}`;
    case 'bit-string': {
      const meaning = bitMeaning(name, Math.abs(type.size));
      return meaning?.kind === 'quality'
        ? 'Quality'
        : meaning?.kind === 'enum'
          ? meaning.names === DBPOS
            ? 'Dbpos'
            : 'Tcmd'
          : `BitString${Math.abs(type.size)}`;
    }
    case 'utc-time':
      return 'Timestamp';
    case 'binary-time':
      return type.withDate ? 'EntryTime' : 'TimeOfDay';
    case 'structure':
      return 'Struct';
    case 'array':
      return `Array[${type.elements}]`;
    default:
      return type.type;
  }
}
