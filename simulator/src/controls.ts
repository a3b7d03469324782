/**
 * Controls of the simulated device (IEC 61850-7-2 §20, IEC 61850-8-1 §20): the ctlModel of each data
 * object decides what a write of `$CO$<DO>$Oper`, `$SBOw` or `$Cancel` and a read of `$SBO` do. A
 * successful operate sets `stVal` (and `t`, `ctlNum`, `origin`, `opRcvd`/`opOk` where the DO has them);
 * enhanced security ends it with a CommandTermination; a refusal answers a write error after sending
 * LastApplError.
 */
import { utcTimeFromMs, type MmsData, type ObjectName } from '@scada/iec61850/wire';
import { DATA_ACCESS } from '@scada/iec61850/wire';
import { bitsFromText } from './basic_types.ts';
import { descend, readNode, type DataNode } from './data_tree.ts';
import type { Device } from './device.ts';
import type { ReportSink } from './rcb_model.ts';

/** The ctlModel values (IEC 61850-7-3). */
export const CTL_MODEL = { statusOnly: 0, directNormal: 1, sboNormal: 2, directEnhanced: 3, sboEnhanced: 4 } as const;

/** AddCause values the simulator uses (IEC 61850-7-2 AddCause). */
export const ADD_CAUSE = {
  unknown: 0,
  notSupported: 1,
  blockedByProcess: 9,
  commandAlreadyInExecution: 12,
  objectNotSelected: 18,
  objectAlreadySelected: 19,
} as const;

/** What happened to one control service, for the `control` event. */
export type ControlNotice = {
  /** `LD/LN$CO$DO`. */
  reference: string;
  action: 'select' | 'select-with-value' | 'operate' | 'cancel';
  accepted: boolean;
  ctlVal?: MmsData;
  addCause?: number;
  sink: number;
};

/** What the engine needs from the simulator. */
export type ControlHooks = {
  /** Stores a value and lets reports see the change. */
  apply(node: DataNode, value: MmsData): void;
  notify(n: ControlNotice): void;
  /** True when every control must be refused (`faults.refuseControls`). */
  refuseAll(): boolean;
  /** The faults of terminations: delayed, negative. */
  faults(): { negativeTermination?: number; terminationDelayMs?: number };
};

type Selection = { sink: ReportSink; timer: ReturnType<typeof setTimeout> };

/** The parts of a control object, found from any node of its CO structure. */
type ControlObject = { domain: string; ln: DataNode; path: string[]; key: string };

const DEFAULT_SBO_TIMEOUT_MS = 30_000;

function component(node: DataNode, value: MmsData, name: string): MmsData | undefined {
  if (node.type.type !== 'structure' || value.type !== 'structure') return undefined;
  const i = node.type.components.findIndex((c) => c.name === name);
  return i < 0 ? undefined : value.value[i];
}

/** Runs the control objects of a device. */
export class ControlEngine {
  readonly #device: Device;
  readonly #hooks: ControlHooks;
  readonly #selected = new Map<string, Selection>();
  /** Enhanced-security operates whose CommandTermination has not been sent yet. */
  readonly #executing = new Set<string>();

  constructor(device: Device, hooks: ControlHooks) {
    this.#device = device;
    this.#hooks = hooks;
  }

  #object(domain: string, node: DataNode): ControlObject | undefined {
    const [lnName, fc, ...rest] = node.item.split('$');
    const ln = this.#device.domains.get(domain)?.lns.get(lnName);
    if (fc !== 'CO' || !ln || rest.length < 2) return undefined;
    const path = rest.slice(0, -1);
    return { domain, ln, path, key: `${domain}/${lnName}$CO$${path.join('$')}` };
  }

  #at(o: ControlObject, fc: string, name: string): DataNode | undefined {
    return descend(o.ln, [fc, ...o.path, name]);
  }

  #number(o: ControlObject, fc: string, name: string, fallback: number): number {
    const v = this.#at(o, fc, name)?.value;
    return v?.type === 'integer' || v?.type === 'unsigned' ? Number(v.value) : fallback;
  }

  /** The ctlModel of the control object a CO node belongs to. */
  ctlModel(domain: string, node: DataNode): number | undefined {
    const o = this.#object(domain, node);
    return o ? this.#number(o, 'CF', 'ctlModel', CTL_MODEL.directNormal) : undefined;
  }

  /** A read of a CO node: `SBO` selects (normal security) and answers the object's reference, or '' when refused. */
  read(sink: ReportSink, domain: string, node: DataNode): MmsData {
    const o = this.#object(domain, node);
    if (!o || node.name !== 'SBO') return readNode(node);
    const model = this.#number(o, 'CF', 'ctlModel', CTL_MODEL.directNormal);
    const holder = this.#selected.get(o.key);
    const ok = model === CTL_MODEL.sboNormal && !this.#hooks.refuseAll() && (!holder || holder.sink === sink);
    this.#hooks.notify({ reference: o.key, action: 'select', accepted: ok, sink: sink.id });
    if (!ok) return { type: 'visible-string', value: '' };
    this.#select(sink, o);
    return { type: 'visible-string', value: o.key };
  }

  /** A write of `Oper`, `SBOw` or `Cancel` (value already type-checked); a DataAccessError code, or undefined on success. */
  write(sink: ReportSink, domain: string, node: DataNode, value: MmsData): number | undefined {
    const o = this.#object(domain, node);
    if (!o || node.parent?.item !== `${o.ln.name}$CO$${o.path.join('$')}`) return DATA_ACCESS.objectAccessDenied;
    const model = this.#number(o, 'CF', 'ctlModel', CTL_MODEL.directNormal);
    const holder = this.#selected.get(o.key);
    const ctlVal = component(node, value, 'ctlVal');
    const notice = (action: ControlNotice['action'], addCause?: number): ControlNotice => {
      const n: ControlNotice = { reference: o.key, action, accepted: addCause === undefined, sink: sink.id };
      if (ctlVal) n.ctlVal = ctlVal;
      if (addCause !== undefined) n.addCause = addCause;
      return n;
    };
    const refuse = (action: ControlNotice['action'], addCause: number) => {
      this.#lastApplError(sink, o, node, value, addCause);
      this.#hooks.notify(notice(action, addCause));
      return DATA_ACCESS.objectAccessDenied;
    };
    if (model === CTL_MODEL.statusOnly)
      return refuse(node.name === 'SBOw' ? 'select-with-value' : node.name === 'Cancel' ? 'cancel' : 'operate', ADD_CAUSE.notSupported);
    if (node.name === 'Cancel') {
      if (holder && holder.sink !== sink) return refuse('cancel', ADD_CAUSE.objectAlreadySelected);
      this.#deselect(o);
      this.#hooks.notify(notice('cancel'));
      return undefined;
    }
    if (node.name === 'SBOw') {
      if (model !== CTL_MODEL.sboEnhanced) return refuse('select-with-value', ADD_CAUSE.notSupported);
      if (this.#hooks.refuseAll()) return refuse('select-with-value', ADD_CAUSE.blockedByProcess);
      if (holder && holder.sink !== sink) return refuse('select-with-value', ADD_CAUSE.objectAlreadySelected);
      this.#select(sink, o);
      this.#hooks.notify(notice('select-with-value'));
      return undefined;
    }
    if (node.name !== 'Oper') return DATA_ACCESS.objectAccessDenied;
    if (this.#hooks.refuseAll()) return refuse('operate', ADD_CAUSE.blockedByProcess);
    if (this.#executing.has(o.key)) return refuse('operate', ADD_CAUSE.commandAlreadyInExecution);
    const sbo = model === CTL_MODEL.sboNormal || model === CTL_MODEL.sboEnhanced;
    if (sbo && holder?.sink !== sink) return refuse('operate', ADD_CAUSE.objectNotSelected);
    this.#operate(o, node, value);
    if (sbo) this.#deselect(o);
    this.#hooks.notify(notice('operate'));
    if (model === CTL_MODEL.directEnhanced || model === CTL_MODEL.sboEnhanced) this.#terminate(sink, o, node, value);
    return undefined;
  }

  /** CommandTermination after the write response: positive (the Oper value), or LastApplError and the Oper value. */
  #terminate(sink: ReportSink, o: ControlObject, node: DataNode, value: MmsData): void {
    const { negativeTermination, terminationDelayMs } = this.#hooks.faults();
    const name: ObjectName = { scope: 'domain', domain: o.domain, item: node.item };
    this.#executing.add(o.key);
    const send = () => {
      this.#executing.delete(o.key);
      const oper = { ok: true as const, data: value };
      if (negativeTermination === undefined)
        return sink.send({ pdu: 'information-report', report: { variables: { kind: 'variables', names: [name] }, results: [oper] } });
      const error = { ok: true as const, data: this.#lastApplErrorData(o, node, value, negativeTermination) };
      sink.send({
        pdu: 'information-report',
        report: { variables: { kind: 'variables', names: [{ scope: 'vmd', item: 'LastApplError' }, name] }, results: [error, oper] },
      });
    };
    if (terminationDelayMs) setTimeout(send, terminationDelayMs).unref();
    else setImmediate(send);
  }

  #operate(o: ControlObject, node: DataNode, value: MmsData): void {
    const ctlVal = component(node, value, 'ctlVal');
    const stVal = this.#at(o, 'ST', 'stVal');
    const now: MmsData = { type: 'utc-time', value: utcTimeFromMs(Date.now()) };
    const set = (fc: string, name: string, v: MmsData | undefined) => {
      const target = this.#at(o, fc, name);
      if (target && v) this.#hooks.apply(target, v);
    };
    set('OR', 'opRcvd', { type: 'boolean', value: true });
    set('ST', 'ctlNum', component(node, value, 'ctlNum'));
    set('ST', 'origin', component(node, value, 'origin'));
    if (stVal && ctlVal) {
      // a double point (Dbpos) takes a boolean ctlVal as on (10) / off (01)
      const converted = stVal.bType === 'Dbpos' && ctlVal.type === 'boolean' ? bitsFromText(ctlVal.value ? '10' : '01', 2) : ctlVal;
      set('ST', 't', now);
      if (converted.type === stVal.value?.type) this.#hooks.apply(stVal, converted);
    }
    set('OR', 'opOk', { type: 'boolean', value: true });
    set('OR', 'tOpOk', now);
  }

  #select(sink: ReportSink, o: ControlObject): void {
    this.#deselect(o);
    const timeout = this.#number(o, 'CF', 'sboTimeout', DEFAULT_SBO_TIMEOUT_MS) || DEFAULT_SBO_TIMEOUT_MS;
    const timer = setTimeout(() => this.#deselect(o), timeout);
    timer.unref();
    this.#selected.set(o.key, { sink, timer });
    const seld = this.#at(o, 'ST', 'stSeld');
    if (seld) this.#hooks.apply(seld, { type: 'boolean', value: true });
  }

  #deselect(o: ControlObject): void {
    const held = this.#selected.get(o.key);
    if (!held) return;
    clearTimeout(held.timer);
    this.#selected.delete(o.key);
    const seld = this.#at(o, 'ST', 'stSeld');
    if (seld) this.#hooks.apply(seld, { type: 'boolean', value: false });
  }

  /** Sends LastApplError (CntrlObj, Error, Origin, ctlNum, AddCause) before the refusing write response. */
  #lastApplError(sink: ReportSink, o: ControlObject, node: DataNode, value: MmsData, addCause: number): void {
    const error = this.#lastApplErrorData(o, node, value, addCause);
    sink.send({
      pdu: 'information-report',
      report: { variables: { kind: 'variables', names: [{ scope: 'vmd', item: 'LastApplError' }] }, results: [{ ok: true, data: error }] },
    });
  }

  #lastApplErrorData(o: ControlObject, node: DataNode, value: MmsData, addCause: number): MmsData {
    const origin = component(node, value, 'origin') ?? {
      type: 'structure',
      value: [
        { type: 'integer', value: 0 },
        { type: 'octet-string', value: new Uint8Array(0) },
      ],
    };
    const ctlNum = component(node, value, 'ctlNum') ?? { type: 'unsigned', value: 0 };
    const error: MmsData = {
      type: 'structure',
      value: [
        { type: 'visible-string', value: `${o.domain}/${node.item}` },
        { type: 'integer', value: 1 },
        origin,
        ctlNum,
        { type: 'integer', value: addCause },
      ],
    };
    return error;
  }

  /** Drops the selections an association held (it closed). */
  release(sink: ReportSink): void {
    for (const [key, held] of this.#selected) {
      if (held.sink !== sink) continue;
      clearTimeout(held.timer);
      this.#selected.delete(key);
    }
  }

  /** Clears every selection timer (the simulator stops). */
  stop(): void {
    for (const held of this.#selected.values()) clearTimeout(held.timer);
    this.#selected.clear();
  }
}
