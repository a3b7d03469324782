/**
 * IEC 61850 data references in both notations: the object reference of IEC 61850-7-2 (`LD/LN.DO.DA[FC]`)
 * and the MMS variable name of IEC 61850-8-1 (`LD/LN$FC$DO$DA`). Both parse to one shape that turns into
 * an MMS variable: domain = logical device, item = `LN$FC$DO$DA`. An element of the path may name an array
 * element, `phsAHar(2)` (IEC 61850-7-2 §5.5.3, and libiec61850's notation in both forms); such a reference
 * is the array's name with an MMS alternate access into it: index 2, then the components that follow.
 */
import { MAX_ARRAY_INDEX, type AccessSelection } from '../mms/alternate_access.ts';
import type { NamedVariable } from '../mms/mms_access.ts';
import { Iec61850Error } from './errors.ts';

/** The functional constraints of IEC 61850-7-2 (and the 8-1 mapping's RP/BR for report blocks). */
export const FUNCTIONAL_CONSTRAINTS = [
  'ST',
  'MX',
  'CO',
  'CF',
  'DC',
  'SP',
  'SG',
  'SE',
  'SV',
  'SR',
  'OR',
  'BL',
  'EX',
  'RP',
  'BR',
  'LG',
  'GO',
  'GS',
  'MS',
  'US',
] as const;

/** A functional constraint. */
export type Fc = (typeof FUNCTIONAL_CONSTRAINTS)[number];

/**
 * A parsed reference: logical device, logical node, functional constraint, then DO/SDO/DA names; a name
 * followed by `(index)` (`phsAHar(2)`) is an element of that array.
 */
export type DataReference = { ld: string; ln: string; fc?: Fc; path: string[] };

/** Longest MMS identifier IEC 61850-8-1 allows (domain and item alike). */
export const MAX_MMS_NAME = 64;

const LD_NAME = /^[A-Za-z0-9_]+$/;
const LN_NAME = /^[A-Za-z0-9_]+$/;
const ELEMENT = /^([A-Za-z_][A-Za-z0-9_]*)(?:\(([^)]*)\))?$/;
const INDEX = /^(0|[1-9][0-9]{0,9})$/;

/** One element of a path: a name, and the index of an array element when it has one. */
export type PathElement = { name: string; index?: number };

/** Splits a path element (`phsAHar(2)` → `phsAHar`, 2); undefined when it is neither `name` nor `name(index)`. */
export function splitElement(element: string): PathElement | undefined {
  const m = ELEMENT.exec(element);
  if (!m) return undefined;
  if (m[2] === undefined) return { name: m[1] };
  if (!INDEX.test(m[2]) || Number(m[2]) > MAX_ARRAY_INDEX) return undefined;
  return { name: m[1], index: Number(m[2]) };
}

/** The name of the last element of a reference's path, without an index (the logical node's without a path). */
export function leafName(r: DataReference): string {
  const last = r.path.at(-1);
  return last === undefined ? r.ln : (splitElement(last)?.name ?? last);
}

/** True when the reference names an array element or a part of one. */
export function hasIndex(r: DataReference): boolean {
  return r.path.some((p) => splitElement(p)?.index !== undefined);
}

function bad(text: string, why: string): Iec61850Error {
  return new Iec61850Error('bad_reference', `reference '${text}': ${why}`);
}

function isFc(s: string): s is Fc {
  return (FUNCTIONAL_CONSTRAINTS as readonly string[]).includes(s);
}

function checkElement(text: string, p: string): void {
  const m = ELEMENT.exec(p);
  if (!m) throw bad(text, `'${p}' is not a data object or attribute name`);
  if (m[2] !== undefined && splitElement(p) === undefined)
    throw bad(text, `'${p}': an array element is its index in parentheses, a whole number from 0 to ${MAX_ARRAY_INDEX} ('phsAHar(2)')`);
}

function checked(text: string, r: DataReference): DataReference {
  if (!LD_NAME.test(r.ld)) throw bad(text, `logical device '${r.ld}' must be letters, digits or '_'`);
  if (r.ld.length > MAX_MMS_NAME) throw bad(text, `logical device name longer than ${MAX_MMS_NAME}`);
  if (!LN_NAME.test(r.ln)) throw bad(text, `logical node '${r.ln}' must be letters, digits or '_'`);
  for (const p of r.path) checkElement(text, p);
  if (r.path.length > 0 && r.fc === undefined) throw bad(text, 'a data object or attribute needs a functional constraint ([FC] or $FC$)');
  const { item } = toObjectName(r);
  if (item.length > MAX_MMS_NAME) throw bad(text, `MMS name '${item}' is longer than ${MAX_MMS_NAME}`);
  return r;
}

function parseMms(text: string, ld: string, rest: string): DataReference {
  const parts = rest.split('$');
  if (parts.some((p) => p === '')) throw bad(text, "an empty name between '$'");
  const [ln, fc, ...path] = parts;
  if (fc === undefined) return checked(text, { ld, ln, path: [] });
  if (!isFc(fc)) throw bad(text, `'${fc}' is not a functional constraint`);
  return checked(text, { ld, ln, fc, path });
}

function parseObject(text: string, ld: string, rest: string): DataReference {
  let body = rest;
  let fc: Fc | undefined;
  const bracket = /^(.*)\[([^\]]*)\]$/.exec(rest);
  if (bracket) {
    if (!isFc(bracket[2])) throw bad(text, `'${bracket[2]}' is not a functional constraint`);
    body = bracket[1];
    fc = bracket[2];
  } else if (/[[\]]/.test(rest)) throw bad(text, "the functional constraint goes last, as '[FC]'");
  const parts = body.split('.');
  if (parts.some((p) => p === '')) throw bad(text, "an empty name between '.'");
  const [ln, ...path] = parts;
  return checked(text, fc === undefined ? { ld, ln, path } : { ld, ln, fc, path });
}

/** Parses `LD/LN.DO.DA[FC]` or `LD/LN$FC$DO$DA`; throws {@link Iec61850Error} `bad_reference` naming the fault. */
export function parseReference(text: string): DataReference {
  if (typeof text !== 'string') throw new Iec61850Error('bad_reference', `a reference must be a string, not ${typeof text}`);
  const ref = text.trim();
  const slash = ref.indexOf('/');
  if (slash <= 0) throw bad(text, "expected 'LD/LN...' (logical device, '/', logical node)");
  const ld = ref.slice(0, slash);
  const rest = ref.slice(slash + 1);
  if (rest === '') throw bad(text, "no logical node after '/'");
  if (rest.includes('/')) throw bad(text, "more than one '/'");
  if (rest.includes('$') && (rest.includes('.') || rest.includes('[')))
    throw bad(text, "mixes MMS ('$') and object ('.', '[FC]') notation");
  return rest.includes('$') ? parseMms(text, ld, rest) : parseObject(text, ld, rest);
}

/** The MMS item: `LN$FC$DO$DA`; with an array element as libiec61850 writes it, `MHAI1$MX$HA$phsAHar(2)$cVal`. */
export function mmsItem(r: DataReference): string {
  return [r.ln, ...(r.fc === undefined ? [] : [r.fc]), ...r.path].join('$');
}

/** MMS notation: `LD/LN$FC$DO$DA` (`LD/MHAI1$MX$HA$phsAHar(2)$cVal` for a part of an array element). */
export function toMmsReference(r: DataReference): string {
  return `${r.ld}/${mmsItem(r)}`;
}

/** Object reference notation: `LD/LN.DO.DA[FC]`. */
export function toObjectReference(r: DataReference): string {
  return `${r.ld}/${[r.ln, ...r.path].join('.')}${r.fc === undefined ? '' : `[${r.fc}]`}`;
}

/**
 * The MMS variable of a reference: its domain-specific name; for an array element, or a part of one, the
 * array's name with the alternate access into it (index, then the components that follow, one a level).
 */
export function toObjectName(r: DataReference): NamedVariable {
  const at = r.path.findIndex((p) => splitElement(p)?.index !== undefined);
  if (at < 0) return { scope: 'domain', domain: r.ld, item: mmsItem(r) };
  const elements = r.path.slice(at).map((p) => splitElement(p) ?? { name: p });
  const alternateAccess: AccessSelection[] = [];
  elements.forEach((e, i) => {
    if (i > 0) alternateAccess.push({ component: e.name });
    if (e.index !== undefined) alternateAccess.push({ index: e.index });
  });
  const item = mmsItem({ ...r, path: [...r.path.slice(0, at), elements[0].name] });
  return { scope: 'domain', domain: r.ld, item, alternateAccess };
}

/**
 * The reference of a domain-specific MMS variable (as data set members and reports name them): an index
 * of its alternate access is appended to the element before it, a component (which some servers give as
 * `cVal$mag`) becomes elements of the path.
 */
export function fromObjectName(n: NamedVariable): DataReference {
  if (n.scope !== 'domain') throw new Iec61850Error('bad_reference', `MMS name '${n.item}' is not domain-specific`);
  let item = n.item;
  for (const step of n.alternateAccess ?? []) item += 'index' in step ? `(${step.index})` : `$${step.component}`;
  return parseReference(`${n.domain}/${item}`);
}

/** A reference one level down: `child` appended to the path. */
export function childOf(r: DataReference, ...names: string[]): DataReference {
  return { ...r, path: [...r.path, ...names] };
}
