/**
 * What MMS services name and return: ObjectName (VMD, domain or association scope), the variable access
 * specification (a list of named variables, each with its alternate access if any, or a named variable
 * list), and AccessResult (data or a DataAccessError). IEC 61850 references `LD/LN$FC$DO$DA` map to
 * domain-specific names; an array element to its array's name with an alternate access.
 */
import { alternateAccessText, decodeAlternateAccess, encodeAlternateAccessContent, type AlternateAccess } from './alternate_access.ts';
import { childrenOf, cons, expectTag, isTag, onlyChildOf, prim, tagName, type Tlv } from './ber.ts';
import { intOf, visibleOf, visibleTlv } from './ber_fields.ts';
import { encodeInteger } from './ber_values.ts';
import { CodecError } from './codec_error.ts';
import { decodeData, encodeData, type MmsData } from './mms_data.ts';

/** An MMS object name. */
export type ObjectName = { scope: 'vmd'; item: string } | { scope: 'domain'; domain: string; item: string } | { scope: 'aa'; item: string };

/**
 * A variable as a list of variables names it: its name, and the way into it (`alternateAccess`) when only a
 * part of it is meant, such as an array element. A plain ObjectName is a variable without one.
 */
export type NamedVariable = ObjectName & { alternateAccess?: AlternateAccess };

/** The variables a read, write or report is about. */
export type VariableAccess = { kind: 'variables'; names: NamedVariable[] } | { kind: 'list'; name: ObjectName };

/** One result of a read or report: the value, or why the server could not give it. */
export type AccessResult = { ok: true; data: MmsData } | { ok: false; error: number; errorText: string };

const DATA_ACCESS_ERRORS = [
  'object-invalidated',
  'hardware-fault',
  'temporarily-unavailable',
  'object-access-denied',
  'object-undefined',
  'invalid-address',
  'type-unsupported',
  'type-inconsistent',
  'object-attribute-inconsistent',
  'object-access-unsupported',
  'object-non-existent',
  'object-value-invalid',
];

/** The DataAccessError codes by name (ISO 9506-2), for a server that answers with them. */
export const DATA_ACCESS = {
  objectInvalidated: 0,
  hardwareFault: 1,
  temporarilyUnavailable: 2,
  objectAccessDenied: 3,
  objectUndefined: 4,
  invalidAddress: 5,
  typeUnsupported: 6,
  typeInconsistent: 7,
  objectAttributeInconsistent: 8,
  objectAccessUnsupported: 9,
  objectNonExistent: 10,
  objectValueInvalid: 11,
} as const;

function mmsError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

/** The meaning of a DataAccessError code. */
export function dataAccessErrorText(code: number): string {
  return DATA_ACCESS_ERRORS[code] ?? `data access error ${code}`;
}

/** A domain-specific name from `LD/rest`, or a VMD-specific one when there is no slash. */
export function objectNameOf(reference: string): ObjectName {
  const slash = reference.indexOf('/');
  return slash < 0
    ? { scope: 'vmd', item: reference }
    : { scope: 'domain', domain: reference.slice(0, slash), item: reference.slice(slash + 1) };
}

/**
 * A name as text: `domain/item`, `item`, or `@aa/item` for association-specific names; with its alternate
 * access after the item as libiec61850 writes it (`LD/MHAI1$MX$HA$phsAHar(2)$cVal`).
 */
export function objectNameText(n: NamedVariable): string {
  const name = n.scope === 'domain' ? `${n.domain}/${n.item}` : n.scope === 'aa' ? `@aa/${n.item}` : n.item;
  return n.alternateAccess === undefined ? name : `${name}${alternateAccessText(n.alternateAccess)}`;
}

/** The ObjectName CHOICE as a TLV. */
export function encodeObjectName(n: ObjectName): Uint8Array {
  if (n.scope === 'domain') return cons('context', 1, visibleTlv('universal', 26, n.domain), visibleTlv('universal', 26, n.item));
  return visibleTlv('context', n.scope === 'vmd' ? 0 : 2, n.item);
}

/** An ObjectName from its CHOICE TLV. */
export function decodeObjectName(t: Tlv): ObjectName {
  if (isTag(t, 'context', 0)) return { scope: 'vmd', item: visibleOf(t) };
  if (isTag(t, 'context', 2)) return { scope: 'aa', item: visibleOf(t) };
  if (isTag(t, 'context', 1)) {
    const [domain, item, extra] = childrenOf(t);
    if (item === undefined || extra !== undefined)
      throw mmsError('bad_object_name', 'a domain-specific name needs exactly a domain and an item');
    return {
      scope: 'domain',
      domain: visibleOf(expectTag(domain, 'universal', 26, 'domain id')),
      item: visibleOf(expectTag(item, 'universal', 26, 'item id')),
    };
  }
  throw mmsError('unknown_tag', `${tagName(t)} is not an ObjectName`);
}

/** One entry of a list of variables: SEQUENCE { `[0]` name, `[5]` alternate access when it has one }. */
export function encodeNamedVariable(v: NamedVariable): Uint8Array {
  const name = cons('context', 0, encodeObjectName(v));
  if (v.alternateAccess === undefined) return cons('universal', 16, name);
  return cons('universal', 16, name, cons('context', 5, encodeAlternateAccessContent(v.alternateAccess)));
}

/** The VariableAccessSpecification CHOICE as a TLV: `[0]` list of named variables, `[1]` list name. */
export function encodeVariableAccess(v: VariableAccess): Uint8Array {
  if (v.kind === 'list') return cons('context', 1, encodeObjectName(v.name));
  return cons('context', 0, ...v.names.map(encodeNamedVariable));
}

/** The variables of a SEQUENCE OF { variableSpecification, alternateAccess }: names, each with its alternate access. */
export function decodeNamedVariables(t: Tlv): NamedVariable[] {
  return childrenOf(t).map((entry) => {
    const [spec, access, extra] = childrenOf(expectTag(entry, 'universal', 16, 'variable'));
    if (spec === undefined) throw mmsError('bad_variable', 'an empty variable entry');
    if (!isTag(spec, 'context', 0))
      throw mmsError('unsupported_variable', `variable specification ${tagName(spec)} (only names are supported)`);
    const [name, more] = childrenOf(spec);
    if (name === undefined || more !== undefined) throw mmsError('bad_variable', 'a variable specification holds one name');
    const decoded = decodeObjectName(name);
    if (access === undefined) return decoded;
    if (extra !== undefined || !isTag(access, 'context', 5))
      throw mmsError('bad_variable', `${tagName(extra ?? access)} follows a variable's name where only its alternate access [C5] may`);
    return { ...decoded, alternateAccess: decodeAlternateAccess(access) };
  });
}

/** A VariableAccessSpecification from its CHOICE TLV. */
export function decodeVariableAccess(t: Tlv): VariableAccess {
  if (isTag(t, 'context', 1)) return { kind: 'list', name: decodeObjectName(onlyChildOf(t)) };
  if (!isTag(t, 'context', 0)) throw mmsError('unknown_tag', `${tagName(t)} is not a VariableAccessSpecification`);
  return { kind: 'variables', names: decodeNamedVariables(t) };
}

/** An AccessResult as a TLV: `[0]` DataAccessError, or the Data itself. */
export function encodeAccessResult(r: AccessResult): Uint8Array {
  return r.ok ? encodeData(r.data) : prim('context', 0, encodeInteger(r.error));
}

/** An AccessResult from its TLV. */
export function decodeAccessResult(t: Tlv): AccessResult {
  if (isTag(t, 'context', 0) && !t.constructed) {
    const error = intOf(t);
    return { ok: false, error, errorText: dataAccessErrorText(error) };
  }
  return { ok: true, data: decodeData(t) };
}
