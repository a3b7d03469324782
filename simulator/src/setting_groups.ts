/**
 * Setting groups (IEC 61850-7-2 §8, mapped by IEC 61850-8-1 §19) as libiec61850 serves them: LLN0 of a
 * logical device whose SCL has `SettingControl` holds the setting group control block `LLN0$SP$SGCB`
 * (NumOfSG, ActSG, EditSG, CnfEdit, LActTm, and ResvTms when the SCL gives `resvTms`). Each setting is one
 * attribute under SG (the active group's value) and SE (the value of the group selected for edit), and the
 * device keeps its value in every group (from the SCL's `Val sGroup`).
 *
 * - A write of ActSG (1..NumOfSG) makes that group active: the SG values become its values, LActTm the time.
 * - A write of EditSG (1..NumOfSG) selects the group for edit by this association: the SE values become its
 *   values. 0 ends the selection. Another association's selection refuses it (temporarily-unavailable).
 * - SE values are writable only by the association that selected a group for edit (temporarily-unavailable
 *   otherwise); SG values never (object-access-denied).
 * - A write of CnfEdit true copies the SE values into the group selected (and into SG when it is the active
 *   one) and ends the selection; without a selection of this association: object-access-denied.
 * - A selection ends when its association does, or after the reservation time (ResvTms, else 300 s).
 * - NumOfSG, LActTm and ResvTms are read-only (object-access-denied); the block as a whole is not written
 *   (object-access-unsupported).
 */
import { utcTimeFromMs, type LogicalNode, type MmsData } from '@scada/iec61850';
import { parseConfigured } from './basic_types.ts';
import { descend, isWithin, leaf, readNode, struct, type DataNode } from './data_tree.ts';
import type { Device } from './device.ts';
import type { ReportSink } from './rcb_model.ts';
import { DATA_ACCESS } from '@scada/iec61850/wire';

/** How long a selection for edit lasts when the SCL gives no `resvTms` (libiec61850's CONFIG_IEC61850_SG_RESVTMS). */
const DEFAULT_RESERVATION_S = 300;

const unsigned = (value: number): MmsData => ({ type: 'unsigned', value });

/** The SP node that holds LLN0's SGCB, among a logical node's extra FC nodes; none without `SettingControl`. */
export function sgcbFcNodes(ln: LogicalNode): DataNode[] {
  const sc = ln.settingControl;
  if (!sc) return [];
  const leaves = [
    leaf('NumOfSG', 'INT8U', unsigned(sc.numOfSGs)),
    leaf('ActSG', 'INT8U', unsigned(sc.actSG)),
    leaf('EditSG', 'INT8U', unsigned(0)),
    leaf('CnfEdit', 'BOOLEAN', { type: 'boolean', value: false }),
    leaf('LActTm', 'Timestamp'),
  ];
  if (sc.resvTms !== undefined) leaves.push(leaf('ResvTms', 'INT16U', unsigned(0)));
  return [struct('SP', [struct('SGCB', leaves)])];
}

/** One setting: its SG leaf, its SE leaf, and its value in each group (index 0 is group 1). */
type Setting = { active: DataNode; edit?: DataNode; groups: MmsData[] };

/** The setting group control block of one logical device and its run-time state. */
type Control = {
  sgcb: DataNode;
  numOfSGs: number;
  reservationS: number;
  settings: Setting[];
  /** The association that selected a group for edit, and when its reservation ends. */
  editor?: ReportSink;
  reservation?: ReturnType<typeof setTimeout>;
};

/** What the engine needs from its simulator. */
export type SettingGroupHooks = {
  /** Stores a value and lets reports see the change. */
  apply(node: DataNode, value: MmsData): void;
  /** The reservation of a selection for edit, in ms, when a test shortens it. */
  reservationMs(): number | undefined;
};

function leaves(node: DataNode, out: DataNode[] = []): DataNode[] {
  if (node.value !== undefined || node.array) out.push(node);
  else for (const child of node.children) leaves(child, out);
  return out;
}

function numberOf(node: DataNode): number {
  const v = node.value;
  return v?.type === 'unsigned' || v?.type === 'integer' ? Number(v.value) : 0;
}

/** The settings of a logical device: every SG attribute with its SE twin and its value in each group. */
function settingsOf(device: Device, domain: string, numOfSGs: number, lns: readonly LogicalNode[]): Setting[] {
  const settings: Setting[] = [];
  for (const ln of lns) {
    const node = device.domains.get(domain)?.lns.get(ln.name);
    const sg = node?.children.find((c) => c.name === 'SG');
    const se = node?.children.find((c) => c.name === 'SE');
    if (!sg) continue;
    const byPath = new Map<string, Setting>();
    for (const active of leaves(sg)) {
      const path = active.item.split('$').slice(2);
      const edit = se ? descend(se, path) : undefined;
      const setting: Setting = { active, groups: Array.from({ length: numOfSGs }, () => readNode(active)) };
      if (edit) setting.edit = edit;
      settings.push(setting);
      byPath.set(path.join('.'), setting);
    }
    for (const v of ln.values) {
      const setting = v.sGroup === undefined ? undefined : byPath.get(v.path);
      if (!setting || v.sGroup! < 1 || v.sGroup! > numOfSGs || !setting.active.bType) continue;
      const enumType = setting.active.enumId ? device.index.enumTypes.get(setting.active.enumId) : undefined;
      const value = parseConfigured(setting.active.bType, v.value, enumType);
      if (value) setting.groups[v.sGroup! - 1] = value;
    }
  }
  return settings;
}

/** The setting groups of a simulated device, one control block per logical device that has one. */
export class SettingGroupEngine {
  readonly #controls = new Map<string, Control>();
  readonly #hooks: SettingGroupHooks;

  constructor(device: Device, hooks: SettingGroupHooks) {
    this.#hooks = hooks;
    for (const ap of device.ied.accessPoints) {
      for (const ld of ap.server?.logicalDevices ?? []) {
        const sc = ld.logicalNodes.find((ln) => ln.settingControl)?.settingControl;
        const lln0 = device.domains.get(ld.domain)?.lns.get('LLN0');
        const sgcb = lln0 ? descend(lln0, ['SP', 'SGCB']) : undefined;
        if (!sc || !sgcb) continue;
        const control: Control = {
          sgcb,
          numOfSGs: sc.numOfSGs,
          reservationS: sc.resvTms ?? DEFAULT_RESERVATION_S,
          settings: settingsOf(device, ld.domain, sc.numOfSGs, ld.logicalNodes),
        };
        for (const s of control.settings) {
          s.active.value = s.groups[sc.actSG - 1];
          if (s.edit) s.edit.value = s.groups[sc.actSG - 1];
        }
        this.#controls.set(ld.domain, control);
      }
    }
  }

  /** True when a write of `node` is a matter of setting groups: the SGCB, or an SG or SE value where there is one. */
  owns(domain: string, node: DataNode): boolean {
    const control = this.#controls.get(domain);
    return control !== undefined && (isWithin(node, control.sgcb) || node.fc === 'SG' || node.fc === 'SE');
  }

  /** Writes what {@link owns} claims; undefined when taken, else the DataAccessError code. */
  write(sink: ReportSink, domain: string, node: DataNode, value: MmsData): number | undefined {
    const control = this.#controls.get(domain)!;
    if (node.fc === 'SG') return DATA_ACCESS.objectAccessDenied;
    if (node.fc === 'SE') {
      if (control.editor !== sink) return DATA_ACCESS.temporarilyUnavailable;
      this.#hooks.apply(node, value);
      return undefined;
    }
    if (node === control.sgcb) return DATA_ACCESS.objectAccessUnsupported;
    const n = value.type === 'unsigned' || value.type === 'integer' ? Number(value.value) : -1;
    switch (node.name) {
      case 'ActSG':
        return this.#selectActive(control, n);
      case 'EditSG':
        return this.#selectEdit(sink, control, n);
      case 'CnfEdit':
        return this.#confirm(sink, control, value.type === 'boolean' && value.value);
      default:
        return DATA_ACCESS.objectAccessDenied;
    }
  }

  /** Ends the selections of an association that ended. */
  release(sink: ReportSink): void {
    for (const control of this.#controls.values()) if (control.editor === sink) this.#unselect(control);
  }

  stop(): void {
    for (const control of this.#controls.values()) clearTimeout(control.reservation);
  }

  #attr(control: Control, name: string): DataNode {
    return control.sgcb.children.find((c) => c.name === name)!;
  }

  #selectActive(control: Control, group: number): number | undefined {
    if (group < 1 || group > control.numOfSGs) return DATA_ACCESS.objectValueInvalid;
    const act = this.#attr(control, 'ActSG');
    if (numberOf(act) === group) return undefined;
    this.#hooks.apply(act, unsigned(group));
    this.#hooks.apply(this.#attr(control, 'LActTm'), { type: 'utc-time', value: utcTimeFromMs(Date.now()) });
    for (const s of control.settings) this.#hooks.apply(s.active, s.groups[group - 1]);
    return undefined;
  }

  #selectEdit(sink: ReportSink, control: Control, group: number): number | undefined {
    if (control.editor !== undefined && control.editor !== sink) return DATA_ACCESS.temporarilyUnavailable;
    if (group === 0) return this.#unselect(control);
    if (group < 1 || group > control.numOfSGs) return DATA_ACCESS.objectValueInvalid;
    control.editor = sink;
    this.#hooks.apply(this.#attr(control, 'EditSG'), unsigned(group));
    for (const s of control.settings) if (s.edit) this.#hooks.apply(s.edit, s.groups[group - 1]);
    const ms = this.#hooks.reservationMs() ?? control.reservationS * 1000;
    const resvTms = control.sgcb.children.find((c) => c.name === 'ResvTms');
    if (resvTms) this.#hooks.apply(resvTms, unsigned(Math.ceil(ms / 1000)));
    clearTimeout(control.reservation);
    control.reservation = setTimeout(() => this.#unselect(control), ms);
    control.reservation.unref?.();
    return undefined;
  }

  #confirm(sink: ReportSink, control: Control, value: boolean): number | undefined {
    if (!value) return DATA_ACCESS.objectValueInvalid;
    const group = numberOf(this.#attr(control, 'EditSG'));
    if (group === 0 || control.editor !== sink) return DATA_ACCESS.objectAccessDenied;
    const active = numberOf(this.#attr(control, 'ActSG'));
    for (const s of control.settings) {
      if (!s.edit) continue;
      s.groups[group - 1] = readNode(s.edit);
      if (group === active) this.#hooks.apply(s.active, s.groups[group - 1]);
    }
    this.#unselect(control);
    return undefined;
  }

  #unselect(control: Control): undefined {
    clearTimeout(control.reservation);
    control.reservation = undefined;
    control.editor = undefined;
    this.#hooks.apply(this.#attr(control, 'EditSG'), unsigned(0));
    const resvTms = control.sgcb.children.find((c) => c.name === 'ResvTms');
    if (resvTms) this.#hooks.apply(resvTms, unsigned(0));
    return undefined;
  }
}
