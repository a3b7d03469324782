/**
 * The model as a browse tree (`BrowseTree`, what `GET /api/connections/{connectionId}/browse` answers): IEDs → logical devices → logical nodes → data objects with their attributes, FCs and MMS
 * references, plus data sets, control blocks and addresses. Plain JSON, built on request from the model.
 */
import type { BrowseIed, BrowseLogicalNode, BrowseTree } from './browse_types.ts';
import type { Address, ConnectedAp, Ied, LogicalDevice, LogicalNode, SclModel } from './model.ts';
import { fcdaReference, lnMemberReference, mmsReference } from './references.ts';
import { TemplateIndex } from './template_index.ts';
import { attributeUnit, unitAt, type AttributeFacts } from './units.ts';

type BrowseLn = BrowseLogicalNode;

/** Which part of the model to put in the tree. */
export type BrowseOptions = {
  /** Only this IED (a CID or SCD file may describe several; a connection talks to one). */
  iedName?: string;
};

/** Copies an address into a plain object (the model keeps null-prototype records). */
function plain(address: Address): Record<string, string> {
  return { ...address };
}

function dataObjects(index: TemplateIndex, domain: string, ln: LogicalNode): BrowseLn['dataObjects'] {
  const configured = new Map<string, string>();
  for (const v of ln.values) if (!configured.has(v.path)) configured.set(v.path, v.value);
  const described = new Map<string, string>();
  for (const d of ln.descs ?? []) if (!described.has(d.path)) described.set(d.path, d.desc);
  return (index.lNodeTypes.get(ln.lnType)?.dataObjects ?? []).map((definition) => {
    const doType = index.doTypes.get(definition.type);
    const expanded = index.expand(definition.type);
    const facts = new Map<string, AttributeFacts>();
    for (const node of expanded?.attributes ?? []) {
      facts.set(node.name, { value: configured.get(`${definition.name}.${node.name}`) ?? node.value, type: node.type });
    }
    const attributes = (expanded?.attributes ?? []).map((node) => {
      const path = `${definition.name}.${node.name}`;
      const value = facts.get(node.name)?.value;
      const desc = described.get(path) ?? node.desc;
      const unit = attributeUnit(node.name, node.bType, facts, index.enumTypes);
      return {
        name: node.name,
        fc: node.fc,
        bType: node.bType,
        ...(node.type === undefined ? {} : { type: node.type }),
        ...(node.count === undefined ? {} : { count: node.count }),
        ref: mmsReference(domain, ln.name, node.fc, path),
        ...(value === undefined ? {} : { value }),
        ...(desc ? { desc } : {}),
        ...(unit ? { unit } : {}),
      };
    });
    // The instance's own words first: its DOI desc, then its dU, then the templates'.
    const desc = described.get(definition.name) || facts.get('dU')?.value || definition.desc || doType?.desc;
    const unit = unitAt('', facts, index.enumTypes);
    return {
      name: definition.name,
      cdc: doType?.cdc ?? '',
      type: definition.type,
      ...(desc ? { desc } : {}),
      ...(unit ? { unit } : {}),
      fcs: expanded?.fcs ?? [],
      ...(expanded?.arrays.length ? { arrays: expanded.arrays.map((a) => ({ ...a })) } : {}),
      attributes,
    };
  });
}

const TRG_OPS = ['dchg', 'qchg', 'dupd', 'period', 'gi'] as const;

function logicalNode(index: TemplateIndex, ied: Ied, ld: LogicalDevice, ln: LogicalNode, cap: ConnectedAp | undefined): BrowseLn {
  const domain = ld.domain;
  const addressOf = (list: ConnectedAp['gse'], cbName: string) => {
    const found = list.find((a) => a.ldInst === ld.inst && a.cbName === cbName);
    return found ? { address: plain(found.address) } : {};
  };
  return {
    name: ln.name,
    prefix: ln.prefix,
    lnClass: ln.lnClass,
    inst: ln.inst,
    lnType: ln.lnType,
    ...(ln.desc ? { desc: ln.desc } : {}),
    dataObjects: dataObjects(index, domain, ln),
    dataSets: ln.dataSets.map((ds) => ({
      name: ds.name,
      ref: lnMemberReference(domain, ln.name, ds.name),
      ...(ds.desc ? { desc: ds.desc } : {}),
      members: ds.members.map(({ ix: _ix, ...m }) => ({ ref: fcdaReference(ied, m), ...m })),
    })),
    reportControls: ln.reportControls.map(({ clients: _clients, trgOps, optFields, instances, ...rcb }) => ({
      ...rcb,
      trgOps: TRG_OPS.filter((name) => trgOps[name]),
      optFields: Object.entries(optFields)
        .filter(([, on]) => on)
        .map(([name]) => name),
      instances: instances.map((name) => ({ name, ref: lnMemberReference(domain, ln.name, name, rcb.buffered ? 'BR' : 'RP') })),
    })),
    gooseControls: ln.gooseControls.map((gc) => ({
      ...gc,
      ref: lnMemberReference(domain, ln.name, gc.name, gc.type === 'GSSE' ? 'GS' : 'GO'),
      ...addressOf(cap?.gse ?? [], gc.name),
    })),
    sampledValueControls: ln.sampledValueControls.map(({ opts: _opts, ...sv }) => ({
      ...sv,
      ref: lnMemberReference(domain, ln.name, sv.name, sv.multicast ? 'MS' : 'US'),
      ...addressOf(cap?.smv ?? [], sv.name),
    })),
  };
}

function ied(model: SclModel, index: TemplateIndex, node: Ied): BrowseIed {
  const connected = (apName: string) => {
    for (const subNetwork of model.subNetworks) {
      const cap = subNetwork.connectedAPs.find((c) => c.iedName === node.name && c.apName === apName);
      if (cap) return { subNetwork, cap };
    }
    return undefined;
  };
  const { accessPoints, originalSclVersion: _v, originalSclRevision: _r, ...fields } = node;
  return {
    ...fields,
    accessPoints: accessPoints.map((ap) => {
      const link = connected(ap.name);
      return {
        name: ap.name,
        ...(ap.desc ? { desc: ap.desc } : {}),
        ...(link ? { subNetwork: link.subNetwork.name, address: plain(link.cap.address) } : {}),
      };
    }),
    logicalDevices: accessPoints.flatMap((ap) =>
      (ap.server?.logicalDevices ?? []).map((ld) => ({
        name: ld.domain,
        inst: ld.inst,
        accessPoint: ap.name,
        ...(ld.desc ? { desc: ld.desc } : {}),
        logicalNodes: ld.logicalNodes.map((ln) => logicalNode(index, node, ld, ln, connected(ap.name)?.cap)),
      })),
    ),
  };
}

/** The browse tree of a parsed model, for every IED or for one. */
export function toBrowseTree(model: SclModel, options: BrowseOptions = {}): BrowseTree {
  const index = new TemplateIndex(model.templates);
  return {
    ...treeFrame(model),
    ieds: model.ieds.filter((i) => options.iedName === undefined || i.name === options.iedName).map((i) => ied(model, index, i)),
  };
}

/**
 * The browse tree in parts, made one at a time: first the tree without its IEDs (edition, subnetworks,
 * enumerations), then each IED's subtree. A station file of hundreds of IEDs is kept and served this way
 * without ever holding its whole tree.
 */
export function* browseParts(model: SclModel): Generator<{ iedName: null; tree: BrowseTree } | { iedName: string; tree: BrowseIed }> {
  yield { iedName: null, tree: treeFrame(model) };
  const index = new TemplateIndex(model.templates);
  for (const i of model.ieds) yield { iedName: i.name, tree: ied(model, index, i) };
}

/** The tree without IEDs. */
function treeFrame(model: SclModel): BrowseTree {
  const described = new Set(model.ieds.map((i) => i.name));
  return {
    edition: model.edition,
    ieds: [],
    subNetworks: model.subNetworks.map((sn) => ({
      name: sn.name,
      ...(sn.type ? { type: sn.type } : {}),
      ...(sn.desc ? { desc: sn.desc } : {}),
      connectedAPs: sn.connectedAPs.map((c) => ({
        iedName: c.iedName,
        apName: c.apName,
        described: described.has(c.iedName),
        address: plain(c.address),
      })),
    })),
    enumTypes: model.templates.enumTypes.map((e) => ({
      id: e.id,
      ...(e.desc ? { desc: e.desc } : {}),
      values: e.values.map((v) => ({ ...v })),
    })),
  };
}
