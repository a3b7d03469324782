/**
 * Checks of the IED and communication sections made once the whole file is read. Errors: names given
 * twice, a logical node whose type does not exist, a control block whose data set does not exist, a
 * logical device without LN0. Warnings: configured values and data set members that name nothing in the
 * templates, a logical node class that differs from its type's, and a ConnectedAP that names an IED or
 * access point the file does not describe (CID files list their clients that way).
 */
import type { Ied, LogicalDevice, LogicalNode, SclModel } from './model.ts';
import type { Reporter } from './report.ts';
import { fcsAt, shownId, type TemplateIndex } from './template_index.ts';

/** The logical devices of an IED by `inst`, each with its logical nodes by name. */
type IedIndex = Map<string, { ld: LogicalDevice; lns: Map<string, LogicalNode> }>;

function indexIed(ied: Ied): IedIndex {
  const lds: IedIndex = new Map();
  for (const ap of ied.accessPoints) {
    for (const ld of ap.server?.logicalDevices ?? []) {
      if (!lds.has(ld.inst)) lds.set(ld.inst, { ld, lns: new Map(ld.logicalNodes.map((ln) => [ln.name, ln])) });
    }
  }
  return lds;
}

/** Reports the first of each name given twice. */
function unique<T>(reporter: Reporter, items: T[], nameOf: (item: T) => string, what: string) {
  const seen = new Set<string>();
  for (const item of items) {
    const name = nameOf(item);
    if (name && seen.has(name)) reporter.error(`${what} ${name} is given twice`, reporter.origin(item as object));
    seen.add(name);
  }
}

/**
 * The functional constraints of configured values. A setting is one attribute under SG and SE (and SP),
 * as IEC 61850-7-3 gives ASG and ING: its values (per group with `sGroup`) are those of SG. A value of an
 * attribute under several other FCs is left without one (it is the value under each).
 */
function checkValues(reporter: Reporter, index: TemplateIndex, ln: LogicalNode) {
  for (let i = 0; i < ln.values.length; i++) {
    const value = ln.values[i];
    const fcs = fcsAt(index, ln.lnType, value.path);
    if (fcs?.size === 1) value.fc = fcs.values().next().value;
    else if (fcs?.has('SG')) value.fc = 'SG';
    else if (fcs === undefined || fcs.size === 0)
      reporter.warning(
        `LN ${ln.name}: configured value ${value.path} names no attribute of LNodeType ${ln.lnType}`,
        reporter.itemOrigin(ln, i, 'DAI', value.path),
      );
  }
}

function checkControlBlocks(reporter: Reporter, ln: LogicalNode) {
  const blocks = [...ln.reportControls, ...ln.gooseControls, ...ln.sampledValueControls];
  if (ln.dataSets.length > 1) unique(reporter, ln.dataSets, (d) => d.name, `LN ${ln.name}: DataSet`);
  if (blocks.length > 1) unique(reporter, blocks, (c) => c.name, `LN ${ln.name}: control block`);
  const dataSets = new Set(ln.dataSets.map((d) => d.name));
  for (const block of blocks) {
    if (block.datSet && !dataSets.has(block.datSet)) {
      reporter.error(
        `control block ${block.name} names DataSet ${block.datSet}, which LN ${ln.name} does not have`,
        reporter.origin(block),
      );
    }
  }
}

function checkMembers(reporter: Reporter, index: TemplateIndex, ied: Ied, lds: IedIndex, ln: LogicalNode) {
  for (const dataSet of ln.dataSets) {
    for (const [i, member] of dataSet.members.entries()) {
      const target = lds.get(member.ldInst)?.lns.get(`${member.prefix}${member.lnClass}${member.lnInst}`);
      if (target && !index.lNodeTypes.has(target.lnType)) continue; // already an error of its own
      const path = member.daName ? `${member.doName}.${member.daName}` : member.doName;
      if (target && fcsAt(index, target.lnType, path)?.has(member.fc)) continue;
      const name = `${member.ldInst}/${member.prefix}${member.lnClass}${member.lnInst}.${path} [${member.fc}]`;
      reporter.warning(`DataSet ${dataSet.name}: member ${name} names no data of IED ${ied.name}`, reporter.itemOrigin(dataSet, i, 'FCDA'));
    }
  }
}

function checkLogicalNode(reporter: Reporter, index: TemplateIndex, ied: Ied, lds: IedIndex, ln: LogicalNode) {
  const lnType = index.lNodeTypes.get(ln.lnType);
  if (!lnType) reporter.error(`LN ${ln.name} names LNodeType ${shownId(ln.lnType)}, which is not defined`, reporter.origin(ln));
  if (lnType && ln.lnClass && lnType.lnClass !== ln.lnClass) {
    reporter.warning(
      `LN ${ln.name} has lnClass ${ln.lnClass} but its LNodeType ${lnType.id} is of class ${lnType.lnClass}`,
      reporter.origin(ln),
    );
  }
  if (lnType) checkValues(reporter, index, ln);
  if (ln.dataSets.length + ln.reportControls.length + ln.gooseControls.length + ln.sampledValueControls.length > 0) {
    checkControlBlocks(reporter, ln);
    checkMembers(reporter, index, ied, lds, ln);
  }
}

function checkIed(reporter: Reporter, index: TemplateIndex, ied: Ied) {
  unique(reporter, ied.accessPoints, (ap) => ap.name, `IED ${ied.name}: AccessPoint`);
  const apNames = new Set(ied.accessPoints.map((ap) => ap.name));
  const lds = ied.accessPoints.flatMap((ap) => ap.server?.logicalDevices ?? []);
  unique(reporter, lds, (ld) => ld.inst, `IED ${ied.name}: LDevice inst`);
  unique(reporter, lds, (ld) => ld.domain, `IED ${ied.name}: MMS domain`);
  const byInst = indexIed(ied);
  for (const ap of ied.accessPoints) {
    if (ap.serverAt !== undefined && !apNames.has(ap.serverAt)) {
      reporter.warning(
        `AccessPoint ${ap.name} points at the server of AccessPoint ${ap.serverAt}, which IED ${ied.name} does not have`,
        reporter.origin(ap),
      );
    }
  }
  for (const ld of lds) {
    if (!ld.logicalNodes.some((ln) => ln.lnClass === 'LLN0')) reporter.error(`LDevice ${ld.inst} has no LN0`, reporter.origin(ld));
    unique(reporter, ld.logicalNodes, (ln) => ln.name, `LDevice ${ld.inst}: LN`);
    for (const ln of ld.logicalNodes) checkLogicalNode(reporter, index, ied, byInst, ln);
  }
}

function checkCommunication(reporter: Reporter, model: SclModel) {
  const ieds = new Map(model.ieds.map((ied) => [ied.name, ied]));
  for (const subNetwork of model.subNetworks) {
    for (const cap of subNetwork.connectedAPs) {
      const ied = ieds.get(cap.iedName);
      const at = reporter.origin(cap);
      if (!ied) {
        reporter.warning(`ConnectedAP names IED ${cap.iedName}, which the file does not describe`, at);
        continue;
      }
      if (!ied.accessPoints.some((ap) => ap.name === cap.apName)) {
        reporter.warning(`ConnectedAP names AccessPoint ${cap.apName}, which IED ${cap.iedName} does not have`, at);
      }
      const lds = indexIed(ied);
      for (const block of [...cap.gse, ...cap.smv]) {
        const ln0 = lds.get(block.ldInst)?.ld.logicalNodes.find((ln) => ln.lnClass === 'LLN0');
        const known = [...(ln0?.gooseControls ?? []), ...(ln0?.sampledValueControls ?? [])].some((c) => c.name === block.cbName);
        if (!known)
          reporter.warning(
            `address for control block ${block.ldInst}/${block.cbName}, which IED ${cap.iedName} does not have`,
            reporter.origin(block),
          );
      }
    }
  }
}

/** Reports what is wrong with the IEDs and the communication section; fills in the FC of configured values. */
export function validateModel(reporter: Reporter, model: SclModel, index: TemplateIndex): void {
  if (!model.header) reporter.warning('the file has no Header', reporter.origin(model));
  unique(reporter, model.ieds, (ied) => ied.name, 'IED');
  for (const ied of model.ieds) checkIed(reporter, index, ied);
  checkCommunication(reporter, model);
}
