/**
 * The confirmed services of the simulated device: Identify, GetNameList (paged with continueAfter and
 * moreFollows), GetVariableAccessAttributes, Read (variables and data sets), Write (type-checked, by
 * functional constraint, report control blocks and controls by their rules) and
 * GetNamedVariableListAttributes. Reads and writes of a variable with an alternate access (an array
 * element, a part of one) go to that part; one that is not there is object-non-existent. Each answers a
 * response or a service error.
 */
import {
  dataAccessErrorText,
  type AccessResult,
  type ConfirmedRequest,
  type ConfirmedResponse,
  type MmsData,
  type NamedVariable,
  type WriteResult,
} from '@scada/iec61850/wire';
import { DATA_ACCESS } from '@scada/iec61850/wire';
import type { ServerError } from './server_pdus.ts';
import { conform } from './basic_types.ts';
import type { ControlEngine } from './controls.ts';
import { readNode, type DataNode } from './data_tree.ts';
import { findDataSet, findNode, rcbOf, type Device } from './device.ts';
import type { ReportSink } from './rcb_model.ts';
import type { ReportEngine } from './reports.ts';
import type { SettingGroupEngine } from './setting_groups.ts';
import type { Faults } from './association.ts';
import type { FileClient, FileStore } from './file_store.ts';
import type { Journals } from './journals.ts';

/** What Identify answers. */
export type Identity = { vendor: string; model: string; revision: string };

/** Everything a service needs. */
export type ServiceContext = {
  device: Device;
  /** The simulator's faults, read at every request (tests change them while it runs). */
  faults: Faults;
  reports: ReportEngine;
  controls: ControlEngine;
  settingGroups: SettingGroupEngine;
  identity: Identity;
  /** Most names one GetNameList response carries. */
  pageSize: number;
  /** Stores a written value and lets reports see the change. */
  apply(node: DataNode, value: MmsData): void;
  /** The device's files, for the file services. */
  files: FileStore;
  /** The device's logs, for ReadJournal. */
  journals: Journals;
};

/** A response, or the service error a confirmed-error PDU carries. */
export type ServiceOutcome = { ok: true; response: ConfirmedResponse } | { ok: false; error: ServerError };

/** Functional constraints a client may write directly. */
const WRITABLE_FCS = new Set(['CF', 'DC', 'SP', 'SV', 'SE', 'SG', 'BL', 'US']);
const OBJECT_UNDEFINED: ServerError = { errorClass: 'definition', code: 1 };
const NON_EXISTENT: ServerError = { errorClass: 'access', code: 2 };

function failure(code: number): { ok: false; error: number; errorText: string } {
  return { ok: false, error: code, errorText: dataAccessErrorText(code) };
}

function nameList(ctx: ServiceContext, r: Extract<ConfirmedRequest, { service: 'getNameList' }>): ServiceOutcome {
  let names: string[] = [];
  if (r.objectClass === 'domain' && r.scope.scope === 'vmd') names = [...ctx.device.domains.keys()];
  else if (r.scope.scope === 'domain') {
    const domain = ctx.device.domains.get(r.scope.domain);
    if (!domain) return { ok: false, error: OBJECT_UNDEFINED };
    if (r.objectClass === 'namedVariable') names = domain.variableNames;
    else if (r.objectClass === 'namedVariableList') names = [...domain.dataSets.keys()];
  }
  let start = 0;
  if (r.continueAfter !== undefined) {
    const at = names.indexOf(r.continueAfter);
    if (at < 0) return { ok: false, error: { errorClass: 'service', code: 4, description: `${r.continueAfter} is not in the list` } };
    start = at + 1;
  }
  const identifiers = names.slice(start, start + ctx.pageSize);
  return { ok: true, response: { service: 'getNameList', identifiers, moreFollows: start + identifiers.length < names.length } };
}

function readOne(ctx: ServiceContext, sink: ReportSink, name: NamedVariable): AccessResult {
  const node = findNode(ctx.device, name);
  if (!node || name.scope !== 'domain') return failure(DATA_ACCESS.objectNonExistent);
  return { ok: true, data: node.fc === 'CO' ? ctx.controls.read(sink, name.domain, node) : readNode(node) };
}

function read(ctx: ServiceContext, sink: ReportSink, r: Extract<ConfirmedRequest, { service: 'read' }>): ServiceOutcome {
  let results: AccessResult[];
  if (r.variables.kind === 'list') {
    const ds = findDataSet(ctx.device, r.variables.name);
    if (!ds) return { ok: false, error: NON_EXISTENT };
    results = ds.members.map((m) => (m.node ? { ok: true, data: readNode(m.node) } : failure(DATA_ACCESS.objectNonExistent)));
  } else {
    results = r.variables.names.map((n) => readOne(ctx, sink, n));
  }
  const response: ConfirmedResponse = r.specificationWithResult
    ? { service: 'read', variables: r.variables, results }
    : { service: 'read', results };
  return { ok: true, response };
}

function writeOne(ctx: ServiceContext, sink: ReportSink, name: NamedVariable, data: MmsData): number | undefined {
  const node = findNode(ctx.device, name);
  if (!node || name.scope !== 'domain') return DATA_ACCESS.objectNonExistent;
  const value = conform(node.type, data);
  if (!value) return DATA_ACCESS.typeInconsistent;
  // by the node's item, so that an array element is refused as `LD/LN$SP$Crv$crvPts(2)$xVal`
  const refusal = ctx.faults.refuseWrites?.[`${name.domain}/${node.item}`];
  if (refusal !== undefined) return refusal;
  if (ctx.faults.fixedRptIds && node.name === 'RptID' && (node.fc === 'RP' || node.fc === 'BR')) return DATA_ACCESS.objectAccessDenied;
  if (node.fc === 'RP' || node.fc === 'BR') {
    const rcb = rcbOf(ctx.device, name.domain, node);
    return rcb && node.parent === rcb.node ? ctx.reports.write(sink, rcb, node.name, value) : DATA_ACCESS.objectAccessDenied;
  }
  if (node.fc === 'CO') return ctx.controls.write(sink, name.domain, node, value);
  if (ctx.settingGroups.owns(name.domain, node)) return ctx.settingGroups.write(sink, name.domain, node, value);
  if (!WRITABLE_FCS.has(node.fc)) return DATA_ACCESS.objectAccessDenied;
  ctx.apply(node, value);
  return undefined;
}

function write(ctx: ServiceContext, sink: ReportSink, r: Extract<ConfirmedRequest, { service: 'write' }>): ServiceOutcome {
  let codes: (number | undefined)[];
  if (r.variables.kind === 'list') codes = r.data.map(() => DATA_ACCESS.objectAccessDenied);
  else {
    const names = r.variables.names;
    if (names.length !== r.data.length)
      return { ok: false, error: { errorClass: 'definition', code: 4, description: `${names.length} variables, ${r.data.length} values` } };
    codes = names.map((n, i) => writeOne(ctx, sink, n, r.data[i]));
  }
  const results: WriteResult[] = codes.map((c) => (c === undefined ? { ok: true } : failure(c)));
  return { ok: true, response: { service: 'write', results } };
}

/** Answers one confirmed request of an association. */
export function serve(ctx: ServiceContext, sink: ReportSink & FileClient, r: ConfirmedRequest): ServiceOutcome {
  switch (r.service) {
    case 'identify':
      return { ok: true, response: { service: 'identify', ...ctx.identity } };
    case 'getNameList':
      return nameList(ctx, r);
    case 'read':
      return read(ctx, sink, r);
    case 'write':
      return write(ctx, sink, r);
    case 'getVariableAccessAttributes': {
      const node = findNode(ctx.device, r.name);
      return node
        ? { ok: true, response: { service: 'getVariableAccessAttributes', deletable: false, type: node.type } }
        : { ok: false, error: NON_EXISTENT };
    }
    case 'getNamedVariableListAttributes': {
      const ds = findDataSet(ctx.device, r.name);
      if (!ds) return { ok: false, error: NON_EXISTENT };
      return {
        ok: true,
        response: { service: 'getNamedVariableListAttributes', deletable: false, variables: ds.members.map((m) => m.name) },
      };
    }
    // the logs and the file store answer their own services
    case 'readJournal':
      return ctx.journals.read(r);
    default:
      return ctx.files.serve(sink, r);
  }
}
