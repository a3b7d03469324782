/**
 * The device an MMS server simulates, built from one IED of an SCL model: every logical device a domain,
 * every logical node a named variable (see `data_tree.ts`), every data set a named variable list
 * (`LLN0$<name>`), every report control block a structure under `$RP$`/`$BR$`. Lookups go by MMS names,
 * with the alternate access into an array (an element, a part of one) where there is one.
 */
import {
  fcdaReference,
  parseReference,
  TemplateIndex,
  toObjectName,
  type Ied,
  type NamedVariable,
  type ObjectName,
  type SclModel,
} from '@scada/iec61850/wire';
import { buildLogicalNode, descend, itemNames, select, type DataNode } from './data_tree.ts';
import { rcbFcNodes, rcbInstances, type RcbInstance } from './rcb_model.ts';
import { sgcbFcNodes } from './setting_groups.ts';

/**
 * A member of a data set: its reference, its MMS variable (an array element's with its alternate access,
 * as GetNamedVariableListAttributes answers it) and the node it names (absent when the model lacks it).
 */
export type DataSetMember = { reference: string; name: NamedVariable; node?: DataNode };

/** A data set as a named variable list. */
export type DataSetList = { domain: string; item: string; reference: string; members: DataSetMember[] };

/** One MMS domain (logical device). */
export type Domain = {
  name: string;
  /** Logical node variables by name, in model order. */
  lns: Map<string, DataNode>;
  /** Data sets by item (`LLN0$Events`). */
  dataSets: Map<string, DataSetList>;
  /** Every variable name of the domain in depth-first order (what GetNameList pages through). */
  variableNames: string[];
};

/** The simulated device. */
export type Device = {
  ied: Ied;
  index: TemplateIndex;
  domains: Map<string, Domain>;
  rcbs: RcbInstance[];
};

/**
 * Splits `LD/LN$FC$…` into its domain and item; an array element (`LD/MHAI1$MX$HA$phsAHar(2)$cVal`, as
 * FCDAs name them) into its array's name and the alternate access to it.
 */
export function splitReference(reference: string): NamedVariable | undefined {
  const slash = reference.indexOf('/');
  if (slash <= 0) return undefined;
  if (reference.includes('(')) {
    try {
      return toObjectName(parseReference(reference));
    } catch {
      return undefined;
    }
  }
  return { scope: 'domain', domain: reference.slice(0, slash), item: reference.slice(slash + 1) };
}

/** The IED to simulate: the one named, or the first with a server. */
export function pickIed(model: SclModel, iedName?: string): Ied {
  const ied =
    iedName === undefined ? model.ieds.find((i) => i.accessPoints.some((ap) => ap.server)) : model.ieds.find((i) => i.name === iedName);
  if (!ied) throw new Error(iedName === undefined ? 'the SCL model has no IED with a server' : `the SCL model has no IED named ${iedName}`);
  return ied;
}

/**
 * Builds the device of one IED (the first server access point). `indexSingle` names a one-instance indexed
 * report control block `<name>01` (see `instanceNames`).
 */
export function buildDevice(model: SclModel, iedName?: string, indexSingle = true): Device {
  const ied = pickIed(model, iedName);
  const index = new TemplateIndex(model.templates);
  const server = ied.accessPoints.find((ap) => ap.server)?.server;
  const device: Device = { ied, index, domains: new Map(), rcbs: [] };
  for (const ld of server?.logicalDevices ?? []) {
    const domain: Domain = { name: ld.domain, lns: new Map(), dataSets: new Map(), variableNames: [] };
    device.domains.set(ld.domain, domain);
    for (const ln of ld.logicalNodes) {
      const node = buildLogicalNode(index, ln, [...rcbFcNodes(ln.reportControls, ld.domain, ln.name, indexSingle), ...sgcbFcNodes(ln)]);
      domain.lns.set(ln.name, node);
      device.rcbs.push(...rcbInstances(node, ln.reportControls, ld.domain, indexSingle));
    }
  }
  for (const ld of server?.logicalDevices ?? []) {
    const domain = device.domains.get(ld.domain)!;
    for (const ln of ld.logicalNodes) {
      for (const ds of ln.dataSets) {
        const members = ds.members.map((m) => {
          const reference = fcdaReference(ied, m);
          const name = splitReference(reference)!;
          const node = findNode(device, name);
          return node ? { reference, name, node } : { reference, name };
        });
        const item = `${ln.name}$${ds.name}`;
        domain.dataSets.set(item, { domain: ld.domain, item, reference: `${ld.domain}/${item}`, members });
      }
    }
    for (const node of domain.lns.values()) itemNames(node, domain.variableNames);
  }
  return device;
}

/** The node a domain-specific name designates, through its alternate access when it has one; or undefined. */
export function findNode(device: Device, name: NamedVariable): DataNode | undefined {
  if (name.scope !== 'domain') return undefined;
  const [lnName, ...rest] = name.item.split('$');
  const ln = device.domains.get(name.domain)?.lns.get(lnName);
  const node = ln ? descend(ln, rest) : undefined;
  return node && name.alternateAccess ? select(node, name.alternateAccess) : node;
}

/** The data set a name designates, or undefined. */
export function findDataSet(device: Device, name: ObjectName): DataSetList | undefined {
  return name.scope === 'domain' ? device.domains.get(name.domain)?.dataSets.get(name.item) : undefined;
}

/** The data set an RCB's DatSet value (`LD/LN$name`) designates. */
export function dataSetByReference(device: Device, reference: string): DataSetList | undefined {
  const name = splitReference(reference);
  return name ? findDataSet(device, name) : undefined;
}

/** The report control block that holds `node` (an attribute or the block itself), if any. */
export function rcbOf(device: Device, domain: string, node: DataNode): RcbInstance | undefined {
  return device.rcbs.find((r) => r.domain === domain && (r.node === node || r.node === node.parent));
}
