/**
 * MMS alternate access (ISO 9506-2 AlternateAccess): a way into a variable below its name, in read and write
 * requests, their responses and the members of named variable lists. IEC 61850-8-1 uses it for array
 * elements: `MHAI1$MX$HA$phsAHar` with index 2, then components `cVal`, `mag`, `f`, one selection a level
 * (what libiec61850 sends for `MHAI1.HA.phsAHar(2).cVal.mag.f`). This stack reads and writes that form: one
 * unnamed selection per level, by component name or by index; an index range, all elements, a named
 * selection or several selections on one level are refused as unsupported.
 */
import { childrenOf, cons, isTag, tagName, type Tlv } from './ber.ts';
import { intOf, intTlv, visibleOf, visibleTlv } from './ber_fields.ts';
import { CodecError } from './codec_error.ts';

/** One step into a variable: a component of a structure by name, or an element of an array by index. */
export type AccessSelection = { component: string } | { index: number };

/** The steps into a variable, outermost first; never empty. */
export type AlternateAccess = AccessSelection[];

/** Largest index ISO 9506 allows (Unsigned32). */
export const MAX_ARRAY_INDEX = 0xffffffff;

/** Deepest alternate access read or written: as deep as Data may nest. */
const MAX_STEPS = 64;

function accessError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

function checkedIndex(index: number): number {
  if (!Number.isInteger(index) || index < 0 || index > MAX_ARRAY_INDEX)
    throw accessError('bad_alternate_access', `array index ${index} is not an Unsigned32`);
  return index;
}

/**
 * AlternateAccess (a SEQUENCE OF its CHOICE) as its content octets: the last step a selectAccess (`[1]`
 * component, `[2]` index), every other a selectAlternateAccess `[0]` holding the step (`[0]` component,
 * `[1]` index) and the AlternateAccess of the rest. The caller puts the tag around it.
 */
export function encodeAlternateAccessContent(steps: AlternateAccess): Uint8Array {
  if (steps.length === 0) throw accessError('bad_alternate_access', 'an alternate access needs at least one step');
  if (steps.length > MAX_STEPS) throw accessError('bad_alternate_access', `an alternate access deeper than ${MAX_STEPS} steps`);
  const [first, ...rest] = steps;
  const step = (base: number) =>
    'index' in first ? intTlv('context', base + 1, checkedIndex(first.index)) : visibleTlv('context', base, first.component);
  if (rest.length === 0) return step(1);
  return cons('context', 0, step(0), cons('universal', 16, encodeAlternateAccessContent(rest)));
}

function unsupported(what: string): CodecError {
  return accessError('unsupported_alternate_access', `alternate access by ${what} is not supported`);
}

/** One selection of a selectAlternateAccess (`[0]` component, `[1]` index) or a selectAccess (`[1]`, `[2]`). */
function selectionOf(t: Tlv, base: 0 | 1): AccessSelection {
  if (isTag(t, 'context', base)) return { component: visibleOf(t) };
  if (isTag(t, 'context', base + 1)) return { index: checkedIndex(intOf(t)) };
  if (isTag(t, 'context', base + 2)) throw unsupported('index range');
  if (isTag(t, 'context', base + 3)) throw unsupported('all elements');
  throw accessError('unknown_tag', `${tagName(t)} is not an access selection`);
}

/** AlternateAccess from a TLV whose children are its selections (the `[5]` of a variable, or a SEQUENCE). */
export function decodeAlternateAccess(t: Tlv, depth = 0): AlternateAccess {
  if (depth > MAX_STEPS) throw accessError('bad_alternate_access', `an alternate access deeper than ${MAX_STEPS} steps`);
  const choices = childrenOf(t);
  if (choices.length !== 1)
    throw choices.length === 0
      ? accessError('bad_alternate_access', 'an empty alternate access')
      : unsupported(`${choices.length} selections on one level`);
  const choice = choices[0];
  if (isTag(choice, 'context', 5) && choice.constructed) throw unsupported('named selection');
  if (!isTag(choice, 'context', 0) || !choice.constructed) return [selectionOf(choice, 1)];
  const [selection, nested, extra] = childrenOf(choice);
  if (nested === undefined || extra !== undefined || !isTag(nested, 'universal', 16))
    throw accessError('bad_alternate_access', 'a selectAlternateAccess needs a selection and the alternate access that follows it');
  return [selectionOf(selection, 0), ...decodeAlternateAccess(nested, depth + 1)];
}

/**
 * The steps as libiec61850 writes them after an MMS item: `(2)` for an index, `$cVal` for a component
 * (`MHAI1$MX$HA$phsAHar(2)$cVal$mag$f`).
 */
export function alternateAccessText(steps: AlternateAccess): string {
  return steps.map((s) => ('index' in s ? `(${s.index})` : `$${s.component}`)).join('');
}
