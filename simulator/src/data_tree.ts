/**
 * A logical node as the MMS named variable IEC 61850-8-1 makes of it: the LN, then its functional
 * constraints, then data objects (and SDOs), then data attributes (and BDAs), each level a structure
 * component; an SDO or attribute with an SCL `count` is an array of that many. Leaves hold the current
 * value; every node knows its MMS item (`GGIO1$ST$Ind1$stVal`, an array element's as libiec61850 writes
 * it: `MHAI1$MX$HA$phsAHar(2)$cVal`) and type.
 */
import { encodeData, type AlternateAccess, type LogicalNode, type MmsData, type MmsType, type TemplateIndex } from '@scada/iec61850/wire';
import { mmsTypeOf, parseConfigured, zeroOf } from './basic_types.ts';

/** One node of a logical node's variable. Structures have children; leaves have a value. */
export type DataNode = {
  name: string;
  /** The MMS item name from the logical node down, `$`-separated. */
  item: string;
  /** The functional constraint ('' for the logical node itself). */
  fc: string;
  type: MmsType;
  children: DataNode[];
  /** Set on leaves only. */
  value?: MmsData;
  /** The basic type of a leaf (`BOOLEAN`, `Quality`, …) and the enumeration it draws from. */
  bType?: string;
  enumId?: string;
  /** An array of `children` elements rather than a structure. */
  array?: boolean;
  parent?: DataNode;
};

/** The order in which functional constraints appear inside a logical node. */
export const FC_ORDER = [
  'ST',
  'MX',
  'SP',
  'SV',
  'CF',
  'DC',
  'SG',
  'SE',
  'SR',
  'OR',
  'BL',
  'EX',
  'CO',
  'RP',
  'LG',
  'BR',
  'GO',
  'GS',
  'MS',
  'US',
];
const MAX_DEPTH = 24;

/** A leaf with a value (used by report control blocks too). */
export function leaf(name: string, bType: string, value?: MmsData, enumId?: string): DataNode {
  const type = mmsTypeOf(bType);
  const node: DataNode = { name, item: name, fc: '', type, children: [], value: value ?? zeroOf(type), bType };
  if (enumId !== undefined) node.enumId = enumId;
  return node;
}

/** A structure of the given children; its type is filled in by {@link finalize}. */
export function struct(name: string, children: DataNode[]): DataNode {
  return { name, item: name, fc: '', type: { type: 'structure', packed: false, components: [] }, children };
}

type Attr = { name: string; bType: string; type?: string; count?: number; value?: string };

function buildAttribute(index: TemplateIndex, a: Attr, depth: number): DataNode | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const one = (name: string): DataNode | undefined => {
    if (a.bType !== 'Struct') {
      const enumType = a.bType === 'Enum' && a.type ? index.enumTypes.get(a.type) : undefined;
      const configured = a.value === undefined ? undefined : parseConfigured(a.bType, a.value, enumType);
      return leaf(name, a.bType, configured, a.bType === 'Enum' ? a.type : undefined);
    }
    const daType = a.type ? index.daTypes.get(a.type) : undefined;
    if (!daType) return undefined;
    const kids = daType.components.map((c) => buildAttribute(index, c, depth + 1)).filter((n): n is DataNode => n !== undefined);
    return struct(name, kids);
  };
  return arrayOf(a.name, a.count, one);
}

/** `count` elements made by `one` (named by their index), or just `one(name)` when there is no count. */
function arrayOf(name: string, count: number | undefined, one: (name: string) => DataNode | undefined): DataNode | undefined {
  if (count === undefined || count <= 0) return one(name);
  const elements = Array.from({ length: count }, (_, i) => one(String(i))).filter((n): n is DataNode => n !== undefined);
  return elements.length === 0 ? undefined : { ...struct(name, elements), array: true };
}

function buildDataObject(index: TemplateIndex, name: string, doTypeId: string, fc: string, depth: number): DataNode | undefined {
  const doType = index.doTypes.get(doTypeId);
  if (!doType || depth > MAX_DEPTH) return undefined;
  const kids: DataNode[] = [];
  for (const child of doType.children) {
    const node =
      child.kind === 'SDO'
        ? arrayOf(child.name, child.count, (n) => buildDataObject(index, n, child.type, fc, depth + 1))
        : child.fc === fc
          ? buildAttribute(index, child, depth + 1)
          : undefined;
    if (node) kids.push(node);
  }
  return kids.length === 0 ? undefined : struct(name, kids);
}

/** Sets item names, FCs, parents and structure types from the leaves up. */
export function finalize(node: DataNode, item: string, fc: string, parent?: DataNode): DataNode {
  node.item = item;
  node.fc = fc;
  if (parent) node.parent = parent;
  if (node.value !== undefined) return node;
  for (const child of node.children) {
    const childFc = fc === '' && parent === undefined ? child.name : fc;
    finalize(child, node.array ? `${item}(${child.name})` : `${item}$${child.name}`, childFc, node);
  }
  if (node.array) {
    const element = node.children[0]?.type ?? { type: 'boolean' };
    node.type = { type: 'array', packed: false, elements: node.children.length, element };
  } else {
    node.type = { type: 'structure', packed: false, components: node.children.map((c) => ({ name: c.name, type: c.type })) };
  }
  return node;
}

/**
 * The walk down from `node` along `$`-separated names; undefined when a name is not there. An array's
 * elements have no names (an MMS name ends at the array; see {@link select}).
 */
export function descend(node: DataNode, names: readonly string[]): DataNode | undefined {
  let at: DataNode | undefined = node;
  for (const name of names) {
    at = at.value === undefined && !at.array ? at.children.find((c) => c.name === name) : undefined;
    if (!at) return undefined;
  }
  return at;
}

/**
 * The part of `node` an MMS alternate access selects: an element of an array by index, a component of a
 * structure by name; undefined when it is not there (as libiec61850 answers: object-non-existent).
 */
export function select(node: DataNode, access: AlternateAccess): DataNode | undefined {
  let at: DataNode | undefined = node;
  for (const step of access) {
    if (at.value !== undefined) return undefined;
    at = 'index' in step ? (at.array ? at.children[step.index] : undefined) : at.array ? undefined : descend(at, step.component.split('$'));
    if (!at) return undefined;
  }
  return at;
}

function applyConfigured(index: TemplateIndex, root: DataNode, path: string, fc: string | undefined, text: string): void {
  const names = path.split('.');
  for (const fcNode of root.children) {
    if (fc !== undefined && fcNode.name !== fc) continue;
    const target = descend(fcNode, names);
    if (!target || target.value === undefined || target.bType === undefined) continue;
    const enumType = target.enumId ? index.enumTypes.get(target.enumId) : undefined;
    const value = parseConfigured(target.bType, text, enumType);
    if (value) target.value = value;
  }
}

/**
 * The variable of a logical node, with template defaults and the instance's configured values applied;
 * `extra` FC nodes (RP, BR, LLN0's SP with its SGCB) are added in FC order, their children before the
 * data objects of that FC.
 */
export function buildLogicalNode(index: TemplateIndex, ln: LogicalNode, extra: DataNode[] = []): DataNode {
  const lnType = index.lNodeTypes.get(ln.lnType);
  const fcs: DataNode[] = [];
  for (const fc of FC_ORDER) {
    const added = extra.find((e) => e.name === fc)?.children ?? [];
    const dos = (lnType?.dataObjects ?? [])
      .map((d) => buildDataObject(index, d.name, d.type, fc, 0))
      .filter((n): n is DataNode => n !== undefined);
    if (added.length + dos.length > 0) fcs.push(struct(fc, [...added, ...dos]));
  }
  const root = struct(ln.name, fcs);
  for (const v of ln.values) applyConfigured(index, root, v.path, v.fc, v.value);
  return finalize(root, ln.name, '');
}

/** The current value of a node: a leaf's value, or the structure (array) of its children's. */
export function readNode(node: DataNode): MmsData {
  if (node.value !== undefined) return node.value;
  const value = node.children.map(readNode);
  return node.array ? { type: 'array', value } : { type: 'structure', value };
}

function sameValue(a: MmsData, b: MmsData): boolean {
  const x = encodeData(a);
  const y = encodeData(b);
  return x.length === y.length && x.every((byte, i) => byte === y[i]);
}

/** Stores a value that conforms to the node's type; returns the leaves whose value changed. */
export function assignNode(node: DataNode, value: MmsData, changed: DataNode[] = []): DataNode[] {
  if (node.value !== undefined) {
    if (!sameValue(node.value, value)) changed.push(node);
    node.value = value;
    return changed;
  }
  if (value.type !== 'structure' && value.type !== 'array') return changed;
  node.children.forEach((child, i) => {
    const v = value.value[i];
    if (v !== undefined) assignNode(child, v, changed);
  });
  return changed;
}

/** Every item name at and below `node` in depth-first order (array elements are not named). */
export function itemNames(node: DataNode, out: string[] = []): string[] {
  out.push(node.item);
  if (node.value === undefined && !node.array) for (const child of node.children) itemNames(child, out);
  return out;
}

/** True when `node` is `ancestor` or lies below it. */
export function isWithin(node: DataNode, ancestor: DataNode): boolean {
  for (let at: DataNode | undefined = node; at; at = at.parent) if (at === ancestor) return true;
  return false;
}
