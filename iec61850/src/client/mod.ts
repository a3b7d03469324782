/**
 * The IEC 61850 client layer: a device over an MMS association, references in both notations, JSON values,
 * setting groups.
 */
export { Iec61850Device, type DataSetValues, type DeviceEvents, type DeviceOptions, type ValueResult } from './device.ts';
export type { DaNode, DeviceModel, DoNode, LdNode, LnNode, RcbNode } from './browse.ts';
export {
  addCauseText,
  CONTROL_MODELS,
  OR_CATEGORIES,
  type ControlModel,
  type LastApplError,
  type OperateOptions,
  type Origin,
} from './control.ts';
export { dataObjectDepth, stampsOf, type DataObjectStamp, type StampedValue } from './data_objects.ts';
export { Iec61850Error, type Iec61850ErrorCode } from './errors.ts';
export {
  FUNCTIONAL_CONSTRAINTS,
  parseReference,
  toMmsReference,
  toObjectName,
  toObjectReference,
  type DataReference,
  type Fc,
} from './reference.ts';
export type { Report, ReportMember, ReportOptions, ReportSubscription, ReportValue } from './reports.ts';
export {
  decodeSgcb,
  editReference,
  readSettingGroupControls,
  setEditValues,
  settingReferences,
  sgcbMmsReference,
  writeSgcb,
  type EditValueResult,
  type SettingGroupContext,
  type SettingGroupControl,
  type SgcbAttribute,
} from './setting_groups.ts';
export { fromJson, toJson, typeName, type Json } from './values.ts';
export type { QualityJson, TimestampJson } from './values_bits.ts';
export {
  comtradeRecords,
  DeviceFile,
  deleteFile,
  fileDirectory,
  fileKind,
  type ComtradeRecord,
  type FileEntry,
  type FileKind,
  type FilePiece,
} from './files.ts';
export { journalName, queryLog, type LogEntry, type LogQuery, type LogValue } from './logs.ts';
