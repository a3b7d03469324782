/**
 * Lookups over `DataTypeTemplates`, and the expansion of a data object type into the flat list of its
 * attributes (DA, and BDA below structured ones, through SDOs) with their functional constraints. An
 * expansion is made once per DOType and shared by every logical node that uses it. It is bounded: a cycle
 * between types stops it, and so does a type that would expand to more attributes than a device can have
 * (the template form of a billion-laughs document).
 */
import type { DataTypeTemplates, DaType, DoType, EnumType, LNodeType } from './model.ts';

/** Most attributes one data object type may expand to. */
export const MAX_ATTRIBUTES_PER_DO = 20_000;
/** Deepest nesting of SDOs and structured attributes followed. */
const MAX_NESTING = 24;

/** A data attribute, or a component of a structured one, with its dotted path below the data object. */
export type AttributeNode = { name: string; fc: string; bType: string; type?: string; count?: number; value?: string; desc?: string };

/** A data object type expanded: its attributes in file order, the FCs they carry, and what stopped it. */
export type ExpandedDo = {
  attributes: AttributeNode[];
  /** FCs by dotted path, for SDOs and attributes alike: an SDO carries the FCs of everything below it. */
  fcsByPath: Map<string, Set<string>>;
  fcs: string[];
  /** The arrays among them, SDOs and attributes alike (SCL `count`), by dotted path, in file order. */
  arrays: { name: string; count: number }[];
  /** Why the expansion stopped early: a type cycle, nesting too deep, or too many attributes. */
  problem?: string;
};

/** A type id as messages show it: an empty one is named as such. */
export function shownId(id: string): string {
  return id === '' ? '"" (the empty id)' : id;
}

function byId<T extends { id: string }>(items: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) if (!map.has(item.id)) map.set(item.id, item);
  return map;
}

type Walk = { out: ExpandedDo; seen: Set<string> };

function addFc(walk: Walk, path: string, fc: string) {
  let set = walk.out.fcsByPath.get(path);
  if (!set) walk.out.fcsByPath.set(path, (set = new Set()));
  set.add(fc);
}

function stop(walk: Walk, problem: string): false {
  walk.out.problem ??= problem;
  return false;
}

function walkStruct(
  index: TemplateIndex,
  walk: Walk,
  typeId: string,
  path: string,
  fc: string,
  ancestors: string[],
  depth: number,
): boolean {
  const daType = index.daTypes.get(typeId);
  if (!daType) return true;
  if (ancestors.includes(`DA:${typeId}`)) return stop(walk, `DAType ${typeId} contains itself`);
  if (depth > MAX_NESTING) return stop(walk, `types are nested deeper than ${MAX_NESTING} levels`);
  for (const bda of daType.components) {
    const name = `${path}.${bda.name}`;
    if (bda.count !== undefined) walk.out.arrays.push({ name, count: bda.count });
    if (!pushNode(walk, { ...bda, name, fc })) return false;
    addFc(walk, name, fc);
    if (
      bda.bType === 'Struct' &&
      bda.type !== undefined &&
      !walkStruct(index, walk, bda.type, name, fc, [...ancestors, `DA:${typeId}`], depth + 1)
    )
      return false;
  }
  return true;
}

function pushNode(walk: Walk, node: AttributeNode): boolean {
  if (walk.out.attributes.length >= MAX_ATTRIBUTES_PER_DO) return stop(walk, `expands to more than ${MAX_ATTRIBUTES_PER_DO} attributes`);
  walk.out.attributes.push(node);
  walk.seen.add(node.fc);
  return true;
}

function walkDo(index: TemplateIndex, walk: Walk, doTypeId: string, prefix: string, ancestors: string[], depth: number): boolean {
  const doType = index.doTypes.get(doTypeId);
  if (!doType) return true;
  if (ancestors.includes(`DO:${doTypeId}`)) return stop(walk, `DOType ${doTypeId} contains itself`);
  if (depth > MAX_NESTING) return stop(walk, `types are nested deeper than ${MAX_NESTING} levels`);
  const inner = [...ancestors, `DO:${doTypeId}`];
  for (const child of doType.children) {
    const name = `${prefix}${child.name}`;
    if (child.count !== undefined) walk.out.arrays.push({ name, count: child.count });
    if (child.kind === 'SDO') {
      const before = walk.out.attributes.length;
      if (!walkDo(index, walk, child.type, `${name}.`, inner, depth + 1)) return false;
      for (const node of walk.out.attributes.slice(before)) addFc(walk, name, node.fc);
      continue;
    }
    const { kind: _kind, ...fields } = child;
    if (!pushNode(walk, { ...fields, name })) return false;
    addFc(walk, name, child.fc);
    if (child.bType === 'Struct' && child.type !== undefined && !walkStruct(index, walk, child.type, name, child.fc, inner, depth + 1))
      return false;
  }
  return true;
}

/** The templates of a model by id (the first definition of an id wins), with expansions cached. */
export class TemplateIndex {
  readonly lNodeTypes: Map<string, LNodeType>;
  readonly doTypes: Map<string, DoType>;
  readonly daTypes: Map<string, DaType>;
  readonly enumTypes: Map<string, EnumType>;
  readonly #expanded = new Map<string, ExpandedDo | undefined>();

  constructor(templates: DataTypeTemplates) {
    this.lNodeTypes = byId(templates.lNodeTypes);
    this.doTypes = byId(templates.doTypes);
    this.daTypes = byId(templates.daTypes);
    this.enumTypes = byId(templates.enumTypes);
  }

  /** The expansion of a DOType, made on first use; undefined when no DOType has that id. */
  expand(doTypeId: string): ExpandedDo | undefined {
    if (this.#expanded.has(doTypeId)) return this.#expanded.get(doTypeId);
    let result: ExpandedDo | undefined;
    if (this.doTypes.has(doTypeId)) {
      const walk: Walk = { out: { attributes: [], fcsByPath: new Map(), fcs: [], arrays: [] }, seen: new Set() };
      walkDo(this, walk, doTypeId, '', [], 0);
      walk.out.fcs = [...walk.seen].sort();
      result = walk.out;
    }
    this.#expanded.set(doTypeId, result);
    return result;
  }
}

/**
 * A dotted path without its array indexes (`HA.phsAHar(7).cVal` → `HA.phsAHar.cVal`), with each index and
 * the dotted path of the array it selects; undefined when an element is not `name` or `name(index)`.
 */
function withoutIndexes(path: string): { plain: string; indexes: { array: string; index: number }[] } | undefined {
  const names: string[] = [];
  const indexes: { array: string; index: number }[] = [];
  for (const element of path.split('.')) {
    const m = /^([^()]+)(?:\((0|[1-9]\d{0,9})\))?$/.exec(element);
    if (!m) return undefined;
    names.push(m[1]);
    if (m[2] !== undefined) indexes.push({ array: names.join('.'), index: Number(m[2]) });
  }
  return { plain: names.join('.'), indexes };
}

/**
 * The FCs under a dotted path inside a logical node type (`Mod.ctlModel`, `A.phsA.cVal.mag.f`, or just a
 * data object `Mod`), or undefined when the path names nothing there. An element of an array may be
 * named by its index (`HA.phsAHar(7).cVal`, as data set members do); an index outside the array names nothing.
 */
export function fcsAt(index: TemplateIndex, lnType: string, path: string): Set<string> | undefined {
  const parts = withoutIndexes(path);
  if (!parts) return undefined;
  const dot = parts.plain.indexOf('.');
  const doName = dot < 0 ? parts.plain : parts.plain.slice(0, dot);
  const type = index.lNodeTypes.get(lnType)?.dataObjects.find((d) => d.name === doName)?.type;
  const expanded = type === undefined ? undefined : index.expand(type);
  if (!expanded) return undefined;
  for (const { array, index: i } of parts.indexes) {
    const count = expanded.arrays.find((a) => `${doName}.${a.name}` === array)?.count;
    if (count === undefined || i >= count) return undefined;
  }
  return dot < 0 ? new Set(expanded.fcs) : expanded.fcsByPath.get(parts.plain.slice(dot + 1));
}
