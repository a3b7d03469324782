/**
 * Stepping along a reference's path through a device's types and values, array elements included: the
 * element `phsAHar(2)` is the component `phsAHar`, then element 2 of that array. The device describes a
 * variable as a whole (GetVariableAccessAttributes of an array element does not exist), so the type of an
 * element or of a part of one is found by stepping down from the array's own variable.
 */
import type { MmsType } from '../mms/mms_types.ts';
import { Iec61850Error } from './errors.ts';
import { splitElement, toObjectReference, type DataReference } from './reference.ts';
import type { Json } from './values.ts';

function componentOf(type: MmsType | undefined, name: string): MmsType | undefined {
  return type?.type === 'structure' ? type.components.find((c) => c.name === name)?.type : undefined;
}

/**
 * The type one path element below `type` (a structure): the component, and for `name(i)` that array's
 * element type when `i` is one of its elements; undefined when the type has no such part.
 */
export function stepType(type: MmsType | undefined, element: string): MmsType | undefined {
  const e = splitElement(element);
  if (e === undefined) return undefined;
  const component = componentOf(type, e.name);
  if (e.index === undefined) return component;
  return component?.type === 'array' && e.index < component.elements ? component.element : undefined;
}

/** The JSON value one path element below `value`: an object's member, and for `name(i)` that array's element. */
export function stepValue(value: Json | undefined, element: string): Json | undefined {
  const e = splitElement(element);
  if (e === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const member = value[e.name];
  if (e.index === undefined) return member;
  return Array.isArray(member) ? member[e.index] : undefined;
}

/**
 * For a reference with an array element in its path, the variable the device names that it lies in, its
 * data object (`HA` of `HA.phsAHar(2).cVal`, one GetVariableAccessAttributes for all of them, as for other
 * attributes), and the elements from there down; undefined when no element of the path is indexed.
 */
export function variableBase(r: DataReference): { base: DataReference; below: string[] } | undefined {
  if (!r.path.some((p) => splitElement(p)?.index !== undefined)) return undefined;
  return { base: { ...r, path: [splitElement(r.path[0])!.name] }, below: r.path };
}

/**
 * The type of the part `below` names in a variable of type `type` (its first element is the variable
 * itself, its index, if any, one of the variable's elements): a `not_found` {@link Iec61850Error} when an index lies outside its array or a component is not
 * there, so that what the device's model rules out is answered before the device is asked.
 */
export function typeBelow(r: DataReference, type: MmsType, below: readonly string[]): MmsType {
  const [first, ...rest] = below;
  let at: MmsType = type;
  const fail = (why: string) => new Iec61850Error('not_found', `${toObjectReference(r)}: ${why}`);
  const select = (name: string, index: number | undefined) => {
    if (index === undefined) return;
    if (at.type !== 'array') throw fail(`${name} is not an array`);
    if (index >= at.elements) throw fail(`${name} has ${at.elements} elements (0 to ${at.elements - 1}), not element ${index}`);
    at = at.element;
  };
  const e = splitElement(first)!;
  select(e.name, e.index);
  for (const element of rest) {
    const next = splitElement(element);
    const component = next && componentOf(at, next.name);
    if (!next || !component) throw fail(`the device's model has no ${next?.name ?? element} there`);
    at = component;
    select(next.name, next.index);
  }
  return at;
}
