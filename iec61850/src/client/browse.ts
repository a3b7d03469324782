/**
 * Browsing a live device: domains are logical devices; the variables of a domain without `$` are its logical
 * nodes; one GetVariableAccessAttributes per logical node gives the whole LN type (FC → DO → DA), from which
 * the tree is built and every type cached for later reads and writes. Report control blocks come from the
 * RP/BR components, data sets from the domain's named variable lists.
 *
 * MMS does not tell a sub-data-object from a structured attribute, so SDOs appear as structured attributes.
 * An array (of attributes or of sub data objects) says how many elements it has (`count`); its `children`
 * are the parts of one element, named with the references of the first (`phsAHar(0).cVal`).
 */
import type { MmsRequester } from '../mms/client.ts';
import { MmsError } from '../mms/client_errors.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { FUNCTIONAL_CONSTRAINTS, type Fc } from './reference.ts';
import { typeName } from './values.ts';

/**
 * A data attribute (or a structured one, or an SDO) under one functional constraint; an array has `count`
 * elements, addressed `name(0)` to `name(count - 1)`, and `children` of its first element when they are
 * structures.
 */
export type DaNode = { name: string; fc: Fc; ref: string; mmsRef: string; type: string; count?: number; children?: DaNode[] };

/** A data object: the FCs it appears under and its attributes. */
export type DoNode = { name: string; fcs: Fc[]; attributes: DaNode[] };

/** A report control block. */
export type RcbNode = { name: string; buffered: boolean; ref: string };

/** A logical node. */
export type LnNode = { name: string; dataObjects: DoNode[]; reportControls: RcbNode[] };

/** A logical device: its logical nodes and data sets (`LD/LN$name`). */
export type LdNode = { name: string; logicalNodes: LnNode[]; dataSets: string[] };

/** The device's model as browsed. */
export type DeviceModel = { logicalDevices: LdNode[] };

/** Remembers a type under its MMS reference. */
export type TypeSink = (mmsRef: string, type: MmsType) => void;

function isFc(s: string | undefined): s is Fc {
  return s !== undefined && (FUNCTIONAL_CONSTRAINTS as readonly string[]).includes(s);
}

function attributes(type: MmsType, fc: Fc, objectPrefix: string, mmsPrefix: string, sink: TypeSink): DaNode[] {
  if (type.type !== 'structure') return [];
  return type.components.flatMap((c) => {
    if (c.name === undefined) return [];
    const ref = `${objectPrefix}.${c.name}`;
    const mmsRef = `${mmsPrefix}$${c.name}`;
    sink(mmsRef, c.type);
    const node: DaNode = { name: c.name, fc, ref: `${ref}[${fc}]`, mmsRef, type: typeName(c.type, c.name) };
    if (c.type.type === 'structure') node.children = attributes(c.type, fc, ref, mmsRef, sink);
    if (c.type.type === 'array') {
      node.count = c.type.elements;
      const first = attributes(c.type.element, fc, `${ref}(0)`, `${mmsRef}(0)`, sink);
      if (first.length > 0) node.children = first;
    }
    return [node];
  });
}

/** The LN node of one logical node's type. */
export function logicalNodeOf(ld: string, ln: string, type: MmsType, sink: TypeSink): LnNode {
  sink(`${ld}/${ln}`, type);
  const objects = new Map<string, DoNode>();
  const reportControls: RcbNode[] = [];
  const fcs = type.type === 'structure' ? type.components : [];
  for (const fcComponent of fcs) {
    const fc = fcComponent.name;
    if (!isFc(fc) || fcComponent.type.type !== 'structure') continue;
    sink(`${ld}/${ln}$${fc}`, fcComponent.type);
    for (const d of fcComponent.type.components) {
      if (d.name === undefined) continue;
      const mmsRef = `${ld}/${ln}$${fc}$${d.name}`;
      sink(mmsRef, d.type);
      if (fc === 'RP' || fc === 'BR') {
        reportControls.push({ name: d.name, buffered: fc === 'BR', ref: mmsRef });
        continue;
      }
      const node = objects.get(d.name) ?? { name: d.name, fcs: [], attributes: [] };
      node.fcs.push(fc);
      node.attributes.push(...attributes(d.type, fc, `${ld}/${ln}.${d.name}`, mmsRef, sink));
      objects.set(d.name, node);
    }
  }
  return { name: ln, dataObjects: [...objects.values()], reportControls };
}

/** Names of a class in a domain; a server that does not list that class gives none. */
async function namesOrNone(client: MmsRequester, objectClass: 'namedVariableList', domain: string): Promise<string[]> {
  try {
    return await client.getAllNames({ objectClass, domain });
  } catch (e) {
    if (e instanceof MmsError) return [];
    throw e;
  }
}

/** Browses the whole device: a tree of LD → LN → DO (with FCs) → DA (with types). */
export async function browseDevice(client: MmsRequester, sink: TypeSink): Promise<DeviceModel> {
  const domains = await client.getAllNames({ objectClass: 'domain' });
  const logicalDevices: LdNode[] = [];
  for (const ld of domains) {
    const variables = await client.getAllNames({ objectClass: 'namedVariable', domain: ld });
    const lns = variables.filter((v) => !v.includes('$'));
    const types = await Promise.all(lns.map((ln) => client.getVariableAccessAttributes({ scope: 'domain', domain: ld, item: ln })));
    const dataSets = (await namesOrNone(client, 'namedVariableList', ld)).map((n) => `${ld}/${n}`);
    logicalDevices.push({ name: ld, logicalNodes: lns.map((ln, i) => logicalNodeOf(ld, ln, types[i], sink)), dataSets });
  }
  return { logicalDevices };
}
