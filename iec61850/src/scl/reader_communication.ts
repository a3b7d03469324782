/**
 * Element handlers for `Header` and `Communication`: SubNetwork → ConnectedAP → Address/P, and the
 * multicast addresses of control blocks (`GSE`, `SMV`). Whether a ConnectedAP names an IED of the file is
 * checked after the last byte, since the IEDs usually come after the communication section.
 */
import type { Address, ConnectedAp, ControlBlockAddress, SclHeader, SubNetwork } from './model.ts';
import { attr, bareRecord, enter, intern, need, optional, type Closer, type Opener } from './reader_context.ts';

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

const header: Opener = (ctx, tag, _parent, origin) => {
  const node: SclHeader = { id: attr(ctx, tag, 'id', origin) ?? '' };
  if (tag.attributes.id === undefined) ctx.reporter.warning('Header without the required attribute id', origin);
  optional(ctx, tag, origin, node, ['version', 'revision', 'toolID', 'nameStructure']);
  ctx.model.header = node;
  return undefined;
};

const subNetwork: Opener = (ctx, tag, _parent, origin) => {
  const node: SubNetwork = { name: need(ctx, tag, 'name', origin), connectedAPs: [] };
  optional(ctx, tag, origin, node, ['type', 'desc']);
  ctx.model.subNetworks.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'SubNetwork', node);
};

type BitRateFrame = { subNetwork: SubNetwork; unit: string };

const closeBitRate: Closer = (_ctx, { node }, text) => {
  const { subNetwork, unit } = node as BitRateFrame;
  subNetwork.bitRate = `${text.trim()} ${unit}`;
};

const bitRate: Opener = (ctx, tag, parent, origin) => {
  const unit = `${attr(ctx, tag, 'multiplier', origin) ?? ''}${attr(ctx, tag, 'unit', origin) ?? 'b/s'}`;
  return enter(origin, 'BitRate', { subNetwork: parent as SubNetwork, unit } satisfies BitRateFrame, closeBitRate, true);
};

const connectedAp: Opener = (ctx, tag, parent, origin) => {
  const node: ConnectedAp = {
    iedName: need(ctx, tag, 'iedName', origin),
    apName: need(ctx, tag, 'apName', origin),
    address: bareRecord(),
    gse: [],
    smv: [],
  };
  optional(ctx, tag, origin, node, ['desc']);
  (parent as SubNetwork).connectedAPs.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'ConnectedAP', node);
};

function controlBlockAddress(list: 'gse' | 'smv'): Opener {
  return (ctx, tag, parent, origin) => {
    const node: ControlBlockAddress = {
      ldInst: need(ctx, tag, 'ldInst', origin),
      cbName: need(ctx, tag, 'cbName', origin),
      address: bareRecord(),
    };
    (parent as ConnectedAp)[list].push(node);
    ctx.reporter.place(node, origin);
    return enter(origin, 'CbAddress', node);
  };
}

const address: Opener = (_ctx, _tag, parent, origin) => enter(origin, 'Address', (parent as { address: Address }).address);

type ParameterFrame = { address: Address; type: string };

const closeParameter: Closer = (ctx, origin, raw) => {
  const { address: target, type } = origin.node as ParameterFrame;
  const value = intern(ctx, raw.trim());
  if (type in target) ctx.reporter.warning(`Address names P type ${type} twice; the last is kept`, origin);
  if ((type === 'IP' || type === 'IP-SUBNET' || type === 'IP-GATEWAY') && !IPV4.test(value)) {
    ctx.reporter.warning(`P type ${type} "${value}" is not an IPv4 address`, origin);
  }
  if (type === 'MMS-Port' && !(/^\d{1,5}$/.test(value) && Number(value) <= 65535)) {
    ctx.reporter.warning(`P type MMS-Port "${value}" is not a port number`, origin);
  }
  if (type) target[type] = value;
};

const parameter: Opener = (ctx, tag, parent, origin) =>
  enter(origin, 'P', { address: parent as Address, type: need(ctx, tag, 'type', origin) } satisfies ParameterFrame, closeParameter, true);

/** The handlers of `Header` and `Communication`, by the kind of the parent frame and the child's element name. */
export const communicationOpeners: Record<string, Record<string, Opener>> = {
  SCL: { Header: header, Communication: (_ctx, _tag, _parent, origin) => enter(origin, 'Communication', undefined) },
  Communication: { SubNetwork: subNetwork },
  SubNetwork: { BitRate: bitRate, ConnectedAP: connectedAp },
  ConnectedAP: { Address: address, GSE: controlBlockAddress('gse'), SMV: controlBlockAddress('smv') },
  CbAddress: { Address: address },
  Address: { P: parameter },
};
