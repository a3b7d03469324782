/**
 * Element handlers for what a logical node holds besides its data: data sets (`DataSet`/`FCDA`), report
 * control blocks (`ReportControl` with `TrgOps`, `OptFields`, `RptEnabled`/`ClientLN`), GOOSE control
 * blocks (`GSEControl`), sampled-value control blocks (`SampledValueControl`/`SmvOpts`) and LLN0's setting
 * group control block (`SettingControl`).
 */
import type {
  DataSet,
  Fcda,
  GooseControl,
  LogicalNode,
  OptFields,
  ReportControl,
  SampledValueControl,
  SettingControl,
  TrgOps,
} from './model.ts';
import {
  attr,
  edition2Only,
  flag,
  enter,
  need,
  optional,
  whole,
  type Closer,
  type Opener,
  type ReadContext,
  type Tag,
} from './reader_context.ts';
import type { Origin } from './report.ts';

/**
 * The names the server gives the instances of a report control block: an indexed block's instances are
 * `name01`, `name02`… (two digits at least), also when `max` is 1, as devices expose them; a block that
 * is not indexed keeps its name.
 */
export function reportInstances(name: string, indexed: boolean, max: number): string[] {
  if (!indexed) return [name];
  return Array.from({ length: Math.max(1, max) }, (_, i) => `${name}${String(i + 1).padStart(2, '0')}`);
}

const dataSet: Opener = (ctx, tag, parent, origin) => {
  const node: DataSet = { name: need(ctx, tag, 'name', origin), members: [] };
  optional(ctx, tag, origin, node, ['desc']);
  (parent as LogicalNode).dataSets.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'DataSet', node);
};

const fcda: Opener = (ctx, tag, parent, origin) => {
  const member: Fcda = {
    ldInst: attr(ctx, tag, 'ldInst', origin) ?? '',
    prefix: attr(ctx, tag, 'prefix', origin) ?? '',
    lnClass: attr(ctx, tag, 'lnClass', origin) ?? '',
    lnInst: attr(ctx, tag, 'lnInst', origin) ?? '',
    doName: attr(ctx, tag, 'doName', origin) ?? '',
    fc: need(ctx, tag, 'fc', origin),
  };
  const daName = attr(ctx, tag, 'daName', origin);
  if (daName) member.daName = daName;
  const ix = whole(ctx, tag, 'ix', origin);
  if (ix !== undefined) member.ix = ix;
  if (!member.ldInst || !member.lnClass || !member.doName) {
    ctx.reporter.warning('FCDA without ldInst, lnClass or doName: it names no data', origin);
  }
  (parent as DataSet).members.push(member);
  ctx.reporter.placeItem(parent as DataSet, origin.line, origin.column);
  return undefined;
};

function readTrgOps(ctx: ReadContext, tag: Tag, origin: Origin): TrgOps {
  edition2Only(ctx, tag, origin, ['gi']);
  return {
    dchg: flag(ctx, tag, 'dchg', false, origin),
    qchg: flag(ctx, tag, 'qchg', false, origin),
    dupd: flag(ctx, tag, 'dupd', false, origin),
    period: flag(ctx, tag, 'period', false, origin),
    gi: flag(ctx, tag, 'gi', true, origin),
  };
}

const OPT_FIELDS = ['seqNum', 'timeStamp', 'dataSet', 'reasonCode', 'dataRef', 'entryID', 'configRef', 'bufOvfl', 'segmentation'] as const;

/** Optional fields as read, or their schema defaults when there is no `OptFields` element. */
function readOptFields(ctx: ReadContext, tag: Tag | undefined, origin: Origin): OptFields {
  const fields = {} as OptFields;
  for (const name of OPT_FIELDS) {
    const fallback = name === 'bufOvfl' && !ctx.edition1;
    fields[name] = tag ? flag(ctx, tag, name, fallback, origin) : fallback;
  }
  return fields;
}

const closeReportControl: Closer = (_ctx, { node }) => {
  const rcb = node as ReportControl;
  rcb.instances = reportInstances(rcb.name, rcb.indexed, rcb.max);
};

const reportControl: Opener = (ctx, tag, parent, origin) => {
  edition2Only(ctx, tag, origin, ['indexed']);
  const node: ReportControl = {
    name: need(ctx, tag, 'name', origin),
    buffered: flag(ctx, tag, 'buffered', false, origin),
    intgPd: whole(ctx, tag, 'intgPd', origin) ?? 0,
    bufTime: whole(ctx, tag, 'bufTime', origin) ?? 0,
    indexed: flag(ctx, tag, 'indexed', true, origin),
    trgOps: { dchg: false, qchg: false, dupd: false, period: false, gi: true },
    optFields: readOptFields(ctx, undefined, origin),
    max: 1,
    clients: [],
    instances: [],
  };
  optional(ctx, tag, origin, node, ['desc', 'rptID', 'datSet']);
  const confRev = whole(ctx, tag, 'confRev', origin);
  if (confRev !== undefined) node.confRev = confRev;
  (parent as LogicalNode).reportControls.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'ReportControl', node, closeReportControl);
};

const trgOps: Opener = (ctx, tag, parent, origin) => {
  (parent as ReportControl).trgOps = readTrgOps(ctx, tag, origin);
  return undefined;
};

const optFields: Opener = (ctx, tag, parent, origin) => {
  (parent as ReportControl).optFields = readOptFields(ctx, tag, origin);
  return undefined;
};

const rptEnabled: Opener = (ctx, tag, parent, origin) => {
  const rcb = parent as ReportControl;
  rcb.max = whole(ctx, tag, 'max', origin) ?? 1;
  return enter(origin, 'RptEnabled', rcb);
};

const clientLn: Opener = (ctx, tag, parent, origin) => {
  edition2Only(ctx, tag, origin, ['apRef']);
  const client = {
    iedName: need(ctx, tag, 'iedName', origin),
    ldInst: attr(ctx, tag, 'ldInst', origin) ?? '',
    prefix: attr(ctx, tag, 'prefix', origin) ?? '',
    lnClass: need(ctx, tag, 'lnClass', origin),
    lnInst: attr(ctx, tag, 'lnInst', origin) ?? '',
  };
  (parent as ReportControl).clients.push(optional(ctx, tag, origin, client as typeof client & { apRef?: string }, ['apRef']));
  return undefined;
};

const gseControl: Opener = (ctx, tag, parent, origin) => {
  edition2Only(ctx, tag, origin, ['fixedOffs', 'securityEnable']);
  const type = attr(ctx, tag, 'type', origin) ?? 'GOOSE';
  if (type !== 'GOOSE' && type !== 'GSSE')
    ctx.reporter.warning(`GSEControl type ${type} is neither GOOSE nor GSSE; GOOSE is assumed`, origin);
  const node: GooseControl = {
    name: need(ctx, tag, 'name', origin),
    type: type === 'GSSE' ? 'GSSE' : 'GOOSE',
    appID: need(ctx, tag, 'appID', origin),
    fixedOffs: flag(ctx, tag, 'fixedOffs', false, origin),
  };
  optional(ctx, tag, origin, node, ['desc', 'datSet']);
  const confRev = whole(ctx, tag, 'confRev', origin);
  if (confRev !== undefined) node.confRev = confRev;
  (parent as LogicalNode).gooseControls.push(node);
  ctx.reporter.place(node, origin);
  return undefined;
};

const sampledValueControl: Opener = (ctx, tag, parent, origin) => {
  edition2Only(ctx, tag, origin, ['smpMod', 'securityEnable']);
  const node: SampledValueControl = {
    name: need(ctx, tag, 'name', origin),
    smvID: need(ctx, tag, 'smvID', origin),
    multicast: flag(ctx, tag, 'multicast', true, origin),
    opts: {},
  };
  optional(ctx, tag, origin, node, ['desc', 'datSet', 'smpMod']);
  for (const name of ['confRev', 'smpRate', 'nofASDU'] as const) {
    const value = whole(ctx, tag, name, origin);
    if (value !== undefined) node[name] = value;
  }
  (parent as LogicalNode).sampledValueControls.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'SampledValueControl', node);
};

const SMV_OPTS = ['refreshTime', 'sampleSynchronized', 'sampleRate', 'security', 'dataRef', 'dataSet', 'synchSourceId'];

const smvOpts: Opener = (ctx, tag, parent, origin) => {
  const opts: Record<string, boolean> = {};
  for (const name of SMV_OPTS) opts[name] = flag(ctx, tag, name, false, origin);
  (parent as SampledValueControl).opts = opts;
  return undefined;
};

/**
 * LLN0's setting group control block. A count of groups that is missing or 0 describes no setting groups
 * (the element is ignored with a warning); an active group outside 1..numOfSGs is read as 1, with a warning.
 */
const settingControl: Opener = (ctx, tag, parent, origin) => {
  const ln = parent as LogicalNode;
  if (ln.lnClass !== 'LLN0') {
    ctx.reporter.warning(`SettingControl in ${ln.name}: only LLN0 holds a setting group control block; ignored`, origin);
    return undefined;
  }
  const numOfSGs = whole(ctx, tag, 'numOfSGs', origin) ?? 0;
  if (numOfSGs < 1) {
    ctx.reporter.warning('SettingControl without numOfSGs of at least 1 describes no setting groups; ignored', origin);
    return undefined;
  }
  let actSG = whole(ctx, tag, 'actSG', origin) ?? 1;
  if (actSG < 1 || actSG > numOfSGs) {
    ctx.reporter.warning(`SettingControl@actSG="${actSG}" is not one of the ${numOfSGs} setting groups; group 1 is active`, origin);
    actSG = 1;
  }
  const node: SettingControl = { numOfSGs, actSG };
  const resvTms = whole(ctx, tag, 'resvTms', origin);
  if (resvTms !== undefined) node.resvTms = resvTms;
  ln.settingControl = optional(ctx, tag, origin, node, ['desc']);
  return undefined;
};

/** The handlers for data sets and control blocks, by the kind of the parent frame and the child's element name. */
export const controlOpeners: Record<string, Record<string, Opener>> = {
  LN: {
    DataSet: dataSet,
    ReportControl: reportControl,
    GSEControl: gseControl,
    SampledValueControl: sampledValueControl,
    SettingControl: settingControl,
  },
  DataSet: { FCDA: fcda },
  ReportControl: { TrgOps: trgOps, OptFields: optFields, RptEnabled: rptEnabled },
  RptEnabled: { ClientLN: clientLn },
  SampledValueControl: { SmvOpts: smvOpts },
};
