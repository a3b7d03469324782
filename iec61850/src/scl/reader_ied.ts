/**
 * Element handlers for the IED section: IED → AccessPoint → Server → LDevice → LN0/LN → DOI/SDI/DAI/Val.
 * Data sets and control blocks inside a logical node are read by `reader_controls.ts`.
 */
import type { AccessPoint, ConfiguredValue, Ied, LogicalDevice, LogicalNode, Server } from './model.ts';
import {
  attr,
  edition2Only,
  enter,
  intern,
  need,
  optional,
  typeName,
  whole,
  type Closer,
  type Opener,
  type ReadContext,
  type Tag,
} from './reader_context.ts';
import type { Origin } from './report.ts';

/** What a DOI, SDI or DAI frame holds: its logical node and the dotted path so far. */
type InstancePath = { ln: LogicalNode; path: string };

const ied: Opener = (ctx, tag, _parent, origin) => {
  const node: Ied = { name: need(ctx, tag, 'name', origin), accessPoints: [] };
  optional(ctx, tag, origin, node, ['desc', 'manufacturer', 'type', 'configVersion', 'originalSclVersion', 'originalSclRevision']);
  edition2Only(ctx, tag, origin, ['originalSclVersion', 'originalSclRevision', 'originalSclRelease', 'engRight', 'owner']);
  ctx.model.ieds.push(node);
  ctx.reporter.place(node, origin);
  ctx.iedName = node.name;
  return enter(origin, 'IED', node);
};

const accessPoint: Opener = (ctx, tag, parent, origin) => {
  const node: AccessPoint = { name: need(ctx, tag, 'name', origin) };
  optional(ctx, tag, origin, node, ['desc']);
  (parent as Ied).accessPoints.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'AccessPoint', node);
};

const server: Opener = (ctx, tag, parent, origin) => {
  const ap = parent as AccessPoint;
  const node: Server = { logicalDevices: [] };
  optional(ctx, tag, origin, node, ['desc']);
  const timeout = whole(ctx, tag, 'timeout', origin);
  if (timeout !== undefined) node.timeout = timeout;
  ap.server = node;
  return enter(origin, 'Server', node);
};

const serverAt: Opener = (ctx, tag, parent, origin) => {
  if (ctx.edition1) ctx.reporter.warnOnce('ed2:ServerAt', 'ServerAt is an edition-2 element in an edition-1 (2003) file', origin);
  (parent as AccessPoint).serverAt = need(ctx, tag, 'apName', origin);
  return undefined;
};

const lDevice: Opener = (ctx, tag, parent, origin) => {
  const inst = need(ctx, tag, 'inst', origin);
  const ldName = attr(ctx, tag, 'ldName', origin);
  edition2Only(ctx, tag, origin, ['ldName']);
  const node: LogicalDevice = { inst, domain: ldName || intern(ctx, ctx.iedName + inst), logicalNodes: [] };
  if (ldName) node.ldName = ldName;
  optional(ctx, tag, origin, node, ['desc']);
  if (node.domain.length > 64) {
    ctx.reporter.warning(`the MMS domain name ${node.domain} is longer than 64 characters`, origin);
  }
  (parent as Server).logicalDevices.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'LDevice', node);
};

function logicalNode(zero: boolean): Opener {
  return (ctx, tag, parent, origin) => {
    const lnClass = need(ctx, tag, 'lnClass', origin);
    const prefix = zero ? '' : (attr(ctx, tag, 'prefix', origin) ?? '');
    const inst = zero ? (attr(ctx, tag, 'inst', origin) ?? '') : need(ctx, tag, 'inst', origin);
    if (zero && lnClass !== 'LLN0' && lnClass !== '') ctx.reporter.error(`LN0 with lnClass ${lnClass}; it must be LLN0`, origin);
    if (zero && inst !== '') ctx.reporter.warning(`LN0 with inst "${inst}"; it must be empty`, origin);
    const node: LogicalNode = {
      name: intern(ctx, prefix + lnClass + inst),
      prefix,
      lnClass,
      inst,
      lnType: typeName(ctx, tag, 'lnType', origin),
      dataSets: [],
      reportControls: [],
      gooseControls: [],
      sampledValueControls: [],
      values: [],
    };
    optional(ctx, tag, origin, node, ['desc']);
    const ld = parent as LogicalDevice;
    if (zero) ld.logicalNodes.unshift(node);
    else ld.logicalNodes.push(node);
    origin.key = node.name;
    // The place kept for later checks is a bare origin: the frame itself carries four more fields, and a
    // large file has a hundred thousand logical nodes.
    ctx.reporter.place(node, { element: origin.element, key: node.name, line: origin.line, column: origin.column, parent: origin.parent });
    return enter(origin, 'LN', node, closeLogicalNode);
  };
}

/** One empty list shared by every logical node that has nothing of a kind: frozen, so no one fills it. */
const NONE: never[] = Object.freeze([]) as unknown as never[];

/**
 * A large file has a hundred thousand logical nodes, most without data sets or control blocks and with a
 * few configured values: their empty lists become the shared one and the values list is cut to its
 * length (V8 leaves room for 17 after a first push), which keeps the model about a third smaller.
 */
const closeLogicalNode: Closer = (_ctx, origin) => {
  const ln = origin.node as LogicalNode;
  if (ln.dataSets.length === 0) ln.dataSets = NONE;
  if (ln.reportControls.length === 0) ln.reportControls = NONE;
  if (ln.gooseControls.length === 0) ln.gooseControls = NONE;
  if (ln.sampledValueControls.length === 0) ln.sampledValueControls = NONE;
  ln.values = ln.values.length === 0 ? NONE : ln.values.slice();
};

/** Keeps the `desc` an instance element gives the object at `path`; the list is made only for a node that has one. */
function keepDesc(ctx: ReadContext, tag: Tag, origin: Origin, ln: LogicalNode, path: string): void {
  const desc = attr(ctx, tag, 'desc', origin);
  if (desc) (ln.descs ??= []).push({ path: intern(ctx, path), desc });
}

const doi: Opener = (ctx, tag, parent, origin) => {
  const node: InstancePath = { ln: parent as LogicalNode, path: need(ctx, tag, 'name', origin) };
  keepDesc(ctx, tag, origin, node.ln, node.path);
  return enter(origin, 'DOI', node);
};

const sdi: Opener = (ctx, tag, parent, origin) => {
  const up = parent as InstancePath;
  const path = `${up.path}.${need(ctx, tag, 'name', origin)}`;
  keepDesc(ctx, tag, origin, up.ln, path);
  return enter(origin, 'DOI', { ln: up.ln, path } satisfies InstancePath);
};

const dai: Opener = (ctx, tag, parent, origin) => {
  const up = parent as InstancePath;
  const path = `${up.path}.${need(ctx, tag, 'name', origin)}`;
  keepDesc(ctx, tag, origin, up.ln, path);
  return enter(origin, 'DAI', { ln: up.ln, path } satisfies InstancePath);
};

type ValueFrame = InstancePath & { sGroup: number | undefined };

const closeValue: Closer = (ctx, origin, text) => {
  const { ln, path, sGroup } = origin.node as ValueFrame;
  // `fc` is declared now (and filled in by the checks), so that adding it later allocates nothing.
  const value: ConfiguredValue = { path: intern(ctx, path), value: intern(ctx, text.trim()), fc: undefined };
  if (sGroup !== undefined) value.sGroup = sGroup;
  ln.values.push(value);
  const dai = origin.parent ?? origin;
  ctx.reporter.placeItem(ln, dai.line, dai.column);
};

const val: Opener = (ctx, tag, parent, origin) => {
  const { ln, path } = parent as InstancePath;
  return enter(origin, 'Val', { ln, path, sGroup: whole(ctx, tag, 'sGroup', origin) } satisfies ValueFrame, closeValue, true);
};

/** The handlers of the IED section, by the kind of the parent frame and the child's element name. */
export const iedOpeners: Record<string, Record<string, Opener>> = {
  SCL: { IED: ied },
  IED: { AccessPoint: accessPoint },
  AccessPoint: { Server: server, ServerAt: serverAt },
  Server: { LDevice: lDevice },
  LDevice: { LN0: logicalNode(true), LN: logicalNode(false) },
  LN: { DOI: doi },
  DOI: { SDI: sdi, DAI: dai },
  DAI: { Val: val },
};
