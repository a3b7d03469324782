/**
 * Checks of `DataTypeTemplates` made once the whole file is read: ids defined twice differently, references
 * to types that do not exist or are of the wrong kind, types that contain themselves or expand without
 * bound (errors); a type repeated identically (the repeat is dropped), an empty type id, and common data
 * classes or basic types the standard does not know (warnings: tools in the field accept such files).
 *
 * A reference that names no type, or a Struct without a type, inside a type that no logical node of the
 * file's IEDs uses (directly or through other types) is a warning, not an error: such a type describes
 * nothing the device has, and tools leave incomplete ones behind (libiec61850's `sg_demo.cid` declares a
 * DOType whose `Oper` names a DAType it never defines, and no data object of that DOType).
 */
import type { BdaDefinition, DataTypeTemplates } from './model.ts';
import type { Origin, Reporter } from './report.ts';
import { shownId, type TemplateIndex } from './template_index.ts';

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

/** The definition as compared for repeats: every field but the descriptions, which change nothing. */
const definitionOf = (item: object): string => JSON.stringify(item, (key, value: unknown) => (key === 'desc' ? undefined : value));

/**
 * Ids defined more than once: a repeat identical to the first definition is a warning and is dropped from
 * the model; a different one is an error, since which of the two a device has cannot be told.
 */
function duplicates<T extends { id: string }>(reporter: Reporter, kind: string, items: T[]) {
  const first = new Map<string, T>();
  const repeats = new Set<T>();
  for (const item of items) {
    const earlier = first.get(item.id);
    if (!earlier) {
      first.set(item.id, item);
      continue;
    }
    if (definitionOf(item) === definitionOf(earlier)) {
      reporter.warning(`${kind} id ${shownId(item.id)} is defined twice, identically; the first definition is used`, reporter.origin(item));
      repeats.add(item);
    } else reporter.error(`${kind} id ${shownId(item.id)} is defined twice, differently`, reporter.origin(item));
  }
  if (repeats.size > 0) items.splice(0, items.length, ...items.filter((item) => !repeats.has(item)));
}

/** How many references each type id of one kind has. */
function countReferences(ids: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/**
 * A type with the empty id is a warning: tools in the field accept it when references with an empty type
 * name that type and no other (a reference with an empty type where no such type exists stays an error,
 * found where the reference is checked).
 */
function emptyIds(reporter: Reporter, kind: string, items: { id: string }[], references: Map<string, number>) {
  const empty = items.find((item) => item.id === '');
  if (!empty) return;
  const uses = references.get('') ?? 0;
  const how = uses === 0 ? 'nothing refers to it' : `${uses} reference${uses === 1 ? '' : 's'} with an empty type name it`;
  reporter.warning(`${kind} with an empty id; ${how}`, reporter.origin(empty));
}

/** Every type id the templates and the IEDs refer to, by the kind of type referred to. */
function referencesOf(model: { templates: DataTypeTemplates; lnTypes: string[] }) {
  const { templates } = model;
  const attributes = [
    ...templates.doTypes.flatMap((d) => d.children.filter((c) => c.kind === 'DA')),
    ...templates.daTypes.flatMap((d) => d.components),
  ];
  return {
    lNodeType: countReferences(model.lnTypes),
    doType: countReferences([
      ...templates.lNodeTypes.flatMap((l) => l.dataObjects.map((d) => d.type)),
      ...templates.doTypes.flatMap((d) => d.children.filter((c) => c.kind === 'SDO').map((c) => c.type)),
    ]),
    daType: countReferences(attributes.filter((a) => a.bType === 'Struct' && a.type !== undefined).map((a) => a.type!)),
    enumType: countReferences(attributes.filter((a) => a.bType === 'Enum' && a.type !== undefined).map((a) => a.type!)),
  };
}

/** The ids of the types the IEDs' logical nodes use, directly or through other types. */
type UsedTypes = { lNodeTypes: Set<string>; doTypes: Set<string>; daTypes: Set<string> };

function usedTypes(index: TemplateIndex, lnTypes: string[]): UsedTypes {
  const used: UsedTypes = { lNodeTypes: new Set(lnTypes), doTypes: new Set(), daTypes: new Set() };
  const useDa = (id: string) => {
    if (used.daTypes.has(id)) return;
    used.daTypes.add(id);
    for (const bda of index.daTypes.get(id)?.components ?? []) if (bda.bType === 'Struct' && bda.type !== undefined) useDa(bda.type);
  };
  const useDo = (id: string) => {
    if (used.doTypes.has(id)) return;
    used.doTypes.add(id);
    for (const child of index.doTypes.get(id)?.children ?? []) {
      if (child.kind === 'SDO') useDo(child.type);
      else if (child.bType === 'Struct' && child.type !== undefined) useDa(child.type);
    }
  };
  for (const id of used.lNodeTypes) for (const d of index.lNodeTypes.get(id)?.dataObjects ?? []) useDo(d.type);
  return used;
}

/**
 * How a broken reference inside one type is reported: an error in a type something uses; a warning, saying
 * so, in a type nothing uses.
 */
type Finding = (message: string, at: Origin) => void;

function findingFor(reporter: Reporter, kind: string, id: string, used: boolean): Finding {
  return used
    ? (message, at) => reporter.error(message, at)
    : (message, at) => void reporter.warning(`${message} (no logical node uses ${kind} ${shownId(id)}, so it is not refused)`, at);
}

function checkAttributeType(reporter: Reporter, index: TemplateIndex, node: BdaDefinition, owner: string, broken: Finding) {
  const at = reporter.origin(node);
  if (node.bType && !KNOWN_BTYPES.has(node.bType)) {
    reporter.warnOnce(`btype:${node.bType}`, `unknown basic type ${node.bType} (${owner}.${node.name})`, at);
  }
  if (node.bType === 'Struct') {
    if (node.type === undefined) broken(`${owner}.${node.name} is a Struct without a type`, at);
    else if (!index.daTypes.has(node.type)) broken(`${owner}.${node.name} names DAType ${shownId(node.type)}, which is not defined`, at);
  } else if (node.bType === 'Enum') {
    if (node.type === undefined) reporter.warning(`${owner}.${node.name} is an Enum without a type: its values are unknown`, at);
    else if (!index.enumTypes.has(node.type))
      broken(`${owner}.${node.name} names EnumType ${shownId(node.type)}, which is not defined`, at);
  }
}

/** Reports what is wrong with the templates; `lnTypes` are the types the IEDs' logical nodes name. */
export function validateTemplates(reporter: Reporter, templates: DataTypeTemplates, index: TemplateIndex, lnTypes: string[] = []): void {
  duplicates(reporter, 'LNodeType', templates.lNodeTypes);
  duplicates(reporter, 'DOType', templates.doTypes);
  duplicates(reporter, 'DAType', templates.daTypes);
  duplicates(reporter, 'EnumType', templates.enumTypes);
  const references = referencesOf({ templates, lnTypes });
  emptyIds(reporter, 'LNodeType', templates.lNodeTypes, references.lNodeType);
  emptyIds(reporter, 'DOType', templates.doTypes, references.doType);
  emptyIds(reporter, 'DAType', templates.daTypes, references.daType);
  emptyIds(reporter, 'EnumType', templates.enumTypes, references.enumType);

  const used = usedTypes(index, lnTypes);
  for (const lnType of templates.lNodeTypes) {
    const broken = findingFor(reporter, 'LNodeType', lnType.id, used.lNodeTypes.has(lnType.id));
    const names = new Set<string>();
    for (const dataObject of lnType.dataObjects) {
      const at = reporter.origin(dataObject);
      if (names.has(dataObject.name)) reporter.error(`LNodeType ${lnType.id} has two DOs named ${dataObject.name}`, at);
      names.add(dataObject.name);
      if (!index.doTypes.has(dataObject.type)) {
        broken(
          `DO ${dataObject.name} of LNodeType ${shownId(lnType.id)} names DOType ${shownId(dataObject.type)}, which is not defined`,
          at,
        );
      }
    }
  }

  for (const doType of templates.doTypes) {
    if (doType.cdc && !KNOWN_CDCS.has(doType.cdc)) {
      reporter.warnOnce(`cdc:${doType.cdc}`, `unknown common data class ${doType.cdc} (DOType ${doType.id})`, reporter.origin(doType));
    }
    const broken = findingFor(reporter, 'DOType', doType.id, used.doTypes.has(doType.id));
    for (const child of doType.children) {
      if (child.kind === 'DA') checkAttributeType(reporter, index, child, `DOType ${doType.id}`, broken);
      else if (!index.doTypes.has(child.type)) {
        broken(
          `SDO ${child.name} of DOType ${shownId(doType.id)} names DOType ${shownId(child.type)}, which is not defined`,
          reporter.origin(child),
        );
      }
    }
    const problem = index.expand(doType.id)?.problem;
    if (problem) reporter.error(`DOType ${doType.id} cannot be expanded: ${problem}`, reporter.origin(doType));
  }

  for (const daType of templates.daTypes) {
    const broken = findingFor(reporter, 'DAType', daType.id, used.daTypes.has(daType.id));
    for (const bda of daType.components) checkAttributeType(reporter, index, bda, `DAType ${daType.id}`, broken);
  }
}
