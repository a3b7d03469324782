/**
 * The data object an attribute belongs to, and the quality and time stamp the attribute takes from it.
 *
 * IEC 61850-8-1 maps data objects, sub data objects and structured attributes alike to MMS structures
 * below the functional constraint, so a device's model does not mark where a data object ends. What tells
 * them apart is the model's content: quality `q` and time stamp `t` are attributes of data objects
 * (IEC 61850-7-3), never components of a constructed attribute. Under its FC, the element after the logical
 * node is a data object in any case; below it, a structure whose type has a `q` or `t` is a sub data
 * object. So `A.phsA.cVal.mag.f[MX]` of a WYE belongs to `A.phsA` (a CMV), `AnIn1.mag.f[MX]` to `AnIn1`,
 * and since the types are per FC, `Mod.ctlModel[CF]` to `Mod` under CF, which has no `q`.
 *
 * Only when the type is not known (the device did not describe it) is the data object guessed from the
 * values themselves: the innermost element on the path whose `q` or `t` the same report or read carries.
 */
import type { MmsType } from '../mms/mms_types.ts';
import { stepType, stepValue } from './array_elements.ts';
import { toMmsReference, toObjectReference, type DataReference } from './reference.ts';
import type { Json } from './values.ts';
import type { QualityJson, TimestampJson } from './values_bits.ts';

/** The quality and time stamp of a value's data object, where the same report or read carries them. */
export type DataObjectStamp = { quality?: QualityJson; timestamp?: TimestampJson };

/** A value of one report or read, with what is known of its data object. */
export type StampedValue = {
  ref: DataReference;
  value: Json | null;
  /** How many elements of `ref.path` name its data object, from the device's model; undefined when unknown. */
  dataObjectDepth?: number;
};

/** Looks up the MMS type of a reference (`LD/LN$FC$DO…`); undefined when the device does not describe it. */
export type TypeLookup = (mmsRef: string) => Promise<MmsType | undefined>;

/** A structure that carries the attributes only data objects have. */
function isDataObject(type: MmsType): boolean {
  return type.type === 'structure' && type.components.some((c) => c.name === 'q' || c.name === 't');
}

/**
 * How many elements of `path` (data object first) name the data object it belongs to, given `doType`, the
 * MMS type of the path's first element under its FC (`LD/LN$FC$DO`). At least 1; the whole path when it
 * names a (sub) data object itself. An element of an array of sub data objects is one (`HA.phsAHar(2)`).
 */
export function dataObjectDepth(path: readonly string[], doType: MmsType): number {
  let depth = 1;
  let type: MmsType | undefined = doType;
  for (let i = 1; i < path.length; i++) {
    type = stepType(type, path[i]);
    if (type === undefined) break;
    if (isDataObject(type)) depth = i + 1;
  }
  return depth;
}

/**
 * The type of a reference and the depth of its data object, from the type of its data object under the FC
 * (one GetVariableAccessAttributes for all the attributes of a data object, when `typeOf` caches). A
 * reference the device describes only as a whole gets its own type and no depth.
 */
export async function locate(typeOf: TypeLookup, ref: DataReference): Promise<{ type?: MmsType; dataObjectDepth?: number }> {
  const own = () => typeOf(toMmsReference(ref)).catch(() => undefined);
  if (ref.fc === undefined || ref.path.length === 0) return { type: await own() };
  const doType = await typeOf(toMmsReference({ ...ref, path: ref.path.slice(0, 1) })).catch(() => undefined);
  if (doType === undefined) return { type: await own() };
  let type: MmsType | undefined = doType;
  for (const name of ref.path.slice(1)) type = stepType(type, name);
  return { type: type ?? (await own()), dataObjectDepth: dataObjectDepth(ref.path, doType) };
}

function isQuality(v: Json | undefined): v is QualityJson {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v.validity === 'string';
}

function isTimestamp(v: Json | undefined): v is TimestampJson {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v.time === 'string';
}

/**
 * The value at `target` (its logical node `base`, `LD/LN`, its path and its FC) among the values by
 * reference: a value of it, or inside a value that contains it. The references of the path's prefixes are
 * the object references (`toObjectReference`) of `target` cut after each element, built one from the other.
 */
function find(values: Map<string, Json | null>, base: string, path: readonly string[], fc: string): Json | undefined {
  const prefixes: string[] = [];
  let prefix = base;
  for (const name of path) prefixes.push((prefix = `${prefix}.${name}`));
  for (let k = path.length; k >= 1; k--) {
    let at: Json | undefined = values.get(`${prefixes[k - 1]}${fc}`);
    for (let i = k; i < path.length; i++) {
      at = stepValue(at, path[i]!);
      if (at === undefined) break;
    }
    if (at !== undefined && at !== null) return at;
  }
  return undefined;
}

function stampAt(values: Map<string, Json | null>, ref: DataReference, depth: number): DataObjectStamp {
  const base = `${ref.ld}/${ref.ln}`;
  const fc = ref.fc === undefined ? '' : `[${ref.fc}]`;
  const dataObject = ref.path.slice(0, depth);
  const q = find(values, base, [...dataObject, 'q'], fc);
  const t = find(values, base, [...dataObject, 't'], fc);
  const stamp: DataObjectStamp = {};
  if (isQuality(q)) stamp.quality = q;
  if (isTimestamp(t)) stamp.timestamp = t;
  return stamp;
}

/**
 * For the values of one report or read, in order: the quality and time stamp of each one's data object,
 * where the same values carry them (a member `q` beside `mag.f`, or the data object reported whole).
 */
export function stampsOf(values: readonly StampedValue[]): DataObjectStamp[] {
  const byReference = new Map<string, Json | null>();
  for (const v of values) byReference.set(toObjectReference(v.ref), v.value);
  return values.map(({ ref, dataObjectDepth: depth }) => {
    if (ref.fc === undefined || ref.path.length === 0) return {};
    if (depth !== undefined) return stampAt(byReference, ref, depth);
    for (let d = ref.path.length; d >= 1; d--) {
      const stamp = stampAt(byReference, ref, d);
      if (stamp.quality || stamp.timestamp) return stamp;
    }
    return {};
  });
}

/**
 * Gives each of the values of one report or read, in place, the quality and time stamp of its data object
 * that the same values carry. `refs` and `depths` go with the values by index; a value with an error or
 * without a domain-specific reference takes none and lends none.
 */
export function stampValues<T extends { value: Json | null; error?: string } & DataObjectStamp>(
  values: T[],
  refs: readonly (DataReference | undefined)[],
  depths: readonly (number | undefined)[],
): T[] {
  const at: number[] = [];
  const stamped: StampedValue[] = [];
  values.forEach((v, i) => {
    const ref = refs[i];
    if (ref === undefined || v.error !== undefined) return;
    at.push(i);
    stamped.push({ ref, value: v.value, dataObjectDepth: depths[i] });
  });
  const stamps = stampsOf(stamped);
  for (let k = 0; k < stamps.length; k++) Object.assign(values[at[k]], stamps[k]);
  return values;
}
