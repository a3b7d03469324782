/**
 * Checks of `DataTypeTemplates` made once the whole file is read: ids defined twice, references to types
 * that do not exist or are of the wrong kind, types that contain themselves or expand without bound
 * (errors), and common data classes or basic types the standard does not know (warnings).
 */
import type { BdaDefinition, DataTypeTemplates } from './model.ts';
import type { Reporter } from './report.ts';
import type { TemplateIndex } from './template_index.ts';

/** Common data classes of IEC 61850-7-3 (editions 1, 2 and 2.1); others, such as 7-420 SCA, are warned about. */
const KNOWN_CDCS = new Set(
  (
    'SPS DPS INS ENS ACT ACD SEC BCR HST VSS ORS TCS MV CMV SAV WYE DEL SEQ HMV HWYE HDEL SPC DPC INC ENC BSC ISC APC BAC ' +
    'SPG ING ENG ORG TSG CUG VSG ASG CURVE CSG DPL LPL CSD VSD CST BTS UTS LTS GTS MTS NTS STS OTS'
  ).split(' '),
);

/** Basic types of IEC 61850-6 (`tBasicTypeEnum`, editions 1 and 2). */
const KNOWN_BTYPES = new Set(
  (
    'BOOLEAN INT8 INT16 INT24 INT32 INT64 INT128 INT8U INT16U INT24U INT32U FLOAT32 FLOAT64 Enum Dbpos Tcmd Quality ' +
    'Timestamp VisString32 VisString64 VisString65 VisString129 VisString255 Octet64 Octet6 Octet16 Unicode255 Struct ' +
    'EntryTime Check ObjRef Currency PhyComAddr TrgOps OptFlds SvOptFlds LogOptFlds EntryID'
  ).split(' '),
);

function duplicates<T extends { id: string }>(reporter: Reporter, kind: string, items: T[]) {
  const seen = new Set<string>();
  for (const item of items) {
    if (item.id && seen.has(item.id)) reporter.error(`${kind} id ${item.id} is defined twice`, reporter.origin(item));
    seen.add(item.id);
  }
}

function checkAttributeType(reporter: Reporter, index: TemplateIndex, node: BdaDefinition, owner: string) {
  const at = reporter.origin(node);
  if (node.bType && !KNOWN_BTYPES.has(node.bType)) {
    reporter.warnOnce(`btype:${node.bType}`, `unknown basic type ${node.bType} (${owner}.${node.name})`, at);
  }
  if (node.bType === 'Struct') {
    if (!node.type) reporter.error(`${owner}.${node.name} is a Struct without a type`, at);
    else if (!index.daTypes.has(node.type)) reporter.error(`${owner}.${node.name} names DAType ${node.type}, which is not defined`, at);
  } else if (node.bType === 'Enum') {
    if (!node.type) reporter.warning(`${owner}.${node.name} is an Enum without a type: its values are unknown`, at);
    else if (!index.enumTypes.has(node.type)) reporter.error(`${owner}.${node.name} names EnumType ${node.type}, which is not defined`, at);
  }
}

/** Reports what is wrong with the templates. */
export function validateTemplates(reporter: Reporter, templates: DataTypeTemplates, index: TemplateIndex): void {
  duplicates(reporter, 'LNodeType', templates.lNodeTypes);
  duplicates(reporter, 'DOType', templates.doTypes);
  duplicates(reporter, 'DAType', templates.daTypes);
  duplicates(reporter, 'EnumType', templates.enumTypes);

  for (const lnType of templates.lNodeTypes) {
    const names = new Set<string>();
    for (const dataObject of lnType.dataObjects) {
      const at = reporter.origin(dataObject);
      if (names.has(dataObject.name)) reporter.error(`LNodeType ${lnType.id} has two DOs named ${dataObject.name}`, at);
      names.add(dataObject.name);
      if (dataObject.type && !index.doTypes.has(dataObject.type)) {
        reporter.error(`DO ${dataObject.name} of LNodeType ${lnType.id} names DOType ${dataObject.type}, which is not defined`, at);
      }
    }
  }

  for (const doType of templates.doTypes) {
    if (doType.cdc && !KNOWN_CDCS.has(doType.cdc)) {
      reporter.warnOnce(`cdc:${doType.cdc}`, `unknown common data class ${doType.cdc} (DOType ${doType.id})`, reporter.origin(doType));
    }
    for (const child of doType.children) {
      if (child.kind === 'DA') checkAttributeType(reporter, index, child, `DOType ${doType.id}`);
      else if (child.type && !index.doTypes.has(child.type)) {
        reporter.error(`SDO ${child.name} of DOType ${doType.id} names DOType ${child.type}, which is not defined`, reporter.origin(child));
      }
    }
    const problem = index.expand(doType.id)?.problem;
    if (problem) reporter.error(`DOType ${doType.id} cannot be expanded: ${problem}`, reporter.origin(doType));
  }

  for (const daType of templates.daTypes) {
    for (const bda of daType.components) checkAttributeType(reporter, index, bda, `DAType ${daType.id}`);
  }
}
