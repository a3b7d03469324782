/**
 * An IEC 61850 device seen through one MMS association: browse its model, read and write values in either
 * reference notation as plain JSON (checked against the variable's type before sending), read data sets,
 * enable report control blocks and receive decoded reports, and operate controls. Types come from
 * GetVariableAccessAttributes once per reference (browse fills the cache for the whole model); an array
 * element's from its array's (`array_elements.ts`), and it is read and written through MMS alternate access.
 * A value read or reported carries the quality and time stamp of its data object when the same read or
 * report carries them (see `data_objects.ts`).
 */
import { EventEmitter } from 'node:events';
import { MmsClient, type MmsClientOptions, type MmsRequester } from '../mms/client.ts';
import { MmsConnectionError, MmsError } from '../mms/client_errors.ts';
import type { InformationReport } from '../mms/mms_pdu.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { typeBelow, variableBase } from './array_elements.ts';
import { browseDevice, type DeviceModel } from './browse.ts';
import { ControlTracker, type OperateOptions, type Origin } from './control.ts';
import { locate, stampValues, type DataObjectStamp } from './data_objects.ts';
import { Iec61850Error } from './errors.ts';
import {
  fromObjectName,
  hasIndex,
  leafName,
  parseReference,
  toMmsReference,
  toObjectName,
  toObjectReference,
  type DataReference,
} from './reference.ts';
import {
  dataSetName,
  decodeReport,
  disableReport,
  enableReport,
  isRpt,
  type Report,
  type ReportOptions,
  type ReportSubscription,
} from './reports.ts';
import { fromJson, toJson, type Json } from './values.ts';

/** Functional constraints of status, measurements and controls: the model says a client cannot write them (IEC 61850-7-2 §6.2). */
const READ_ONLY_FCS = new Set<string>(['ST', 'MX', 'OR', 'EX', 'CO']);

/**
 * A value read: the JSON value, or why there is none; `quality` and `timestamp` are its data object's `q`
 * and `t` when the same read carries them.
 */
export type ValueResult = { ref: string; value: Json | null; error?: string } & DataObjectStamp;

/** A data set read: its members in order. */
export type DataSetValues = { ref: string; members: ValueResult[] };

/** Options of the IEC 61850 layer. */
export type DeviceOptions = { origin?: Origin };

/** Events: decoded reports, reports that could not be decoded, the end of the association. */
export type DeviceEvents = { report: [Report]; reportError: [Error]; close: [MmsConnectionError] };

/** What every view of one device shares: the types learnt, the report blocks enabled, the controls under way. */
type Shared = {
  types: Map<string, MmsType>;
  pendingTypes: Map<string, Promise<MmsType>>;
  subscriptions: Map<string, ReportSubscription>;
  controls: ControlTracker;
};

/**
 * An IEC 61850 client over an {@link MmsClient}. {@link within} gives a view of it whose requests carry a
 * caller's deadline; the device itself (and every view) shares one cache of types, one set of report
 * blocks and one control tracker.
 */
export class Iec61850Device extends EventEmitter<DeviceEvents> {
  /** The association: its lifecycle (conclude, close, `close` events). */
  readonly client: MmsClient;
  /** The requests this device (or view) sends: the client's own, or bound to a caller's deadline. */
  readonly requests: MmsRequester;
  readonly #shared: Shared;

  /** `view`: the device this one is a view of and its requests (for {@link within}). */
  constructor(client: MmsClient, o: DeviceOptions = {}, view?: { of: Iec61850Device; requests: MmsRequester }) {
    super();
    this.client = client;
    this.requests = view?.requests ?? client;
    if (view) {
      // a view listens to nothing: the device it views does, for all of them
      this.#shared = view.of.#shared;
      return;
    }
    const shared: Shared = {
      types: new Map(),
      pendingTypes: new Map(),
      subscriptions: new Map(),
      controls: new ControlTracker(o.origin),
    };
    this.#shared = shared;
    client.on('report', (r) => this.#report(r));
    client.once('close', (reason) => {
      shared.controls.closeAll(reason);
      this.emit('close', reason);
    });
  }

  /**
   * This device with its requests bound to a caller's `deadline` (ms since 1970): none is sent once it has
   * passed, so an operation of several requests (a browse, a data set read, a select and its operate, a
   * report block's settings) stops between two of them when its caller has given up. A view emits nothing:
   * reports and the end of the association are the device's events.
   */
  within(deadline: number): Iec61850Device {
    return new Iec61850Device(this.client, {}, { of: this, requests: this.requests.within(deadline) });
  }

  get #types(): Map<string, MmsType> {
    return this.#shared.types;
  }

  get #pendingTypes(): Map<string, Promise<MmsType>> {
    return this.#shared.pendingTypes;
  }

  get #subscriptions(): Map<string, ReportSubscription> {
    return this.#shared.subscriptions;
  }

  get #controls(): ControlTracker {
    return this.#shared.controls;
  }

  /** What controls, report blocks and setting groups are given: this device's requests and its types. */
  get #ctx() {
    return { client: this.requests, typeOf: (ref: string) => this.typeOf(ref) };
  }

  /** Connects an MMS client and wraps it. */
  static async connect(o: MmsClientOptions & DeviceOptions): Promise<Iec61850Device> {
    return new Iec61850Device(await MmsClient.connect(o), o);
  }

  /** The whole model: LD → LN → DO (with FCs) → DA (with types); caches every type on the way. */
  browse(): Promise<DeviceModel> {
    return browseDevice(this.requests, (ref, type) => this.#types.set(ref, type));
  }

  /**
   * The MMS type of a reference (either notation), cached. An array element's, or a part of one's, is found
   * in its array's type; an index outside the array is `not_found`.
   */
  async typeOf(ref: string): Promise<MmsType> {
    const parsed = parseReference(ref);
    const key = toMmsReference(parsed);
    const known = this.#types.get(key);
    if (known) return known;
    const element = variableBase(parsed);
    if (!element) return this.#variableType(key);
    const type = typeBelow(parsed, await this.typeOf(toMmsReference(element.base)), element.below);
    this.#types.set(key, type);
    return type;
  }

  /** The type of a variable the device names, asked once however many ask at the same time. */
  async #variableType(key: string): Promise<MmsType> {
    const known = this.#types.get(key);
    if (known) return known;
    const shared = this.#pendingTypes.get(key);
    const pending = shared ?? this.requests.getVariableAccessAttributes(key);
    this.#pendingTypes.set(key, pending);
    try {
      const type = await pending;
      this.#types.set(key, type);
      return type;
    } catch (e) {
      // asked for by another caller, who gave up before it was sent: asked again within this one's deadline
      if (shared && e instanceof MmsConnectionError && e.code === 'deadline_passed') {
        if (this.#pendingTypes.get(key) === pending) this.#pendingTypes.delete(key);
        return this.#variableType(key);
      }
      throw e;
    } finally {
      if (this.#pendingTypes.get(key) === pending) this.#pendingTypes.delete(key);
    }
  }

  /**
   * Reads values in one request; each comes back as JSON or with the reason it could not be read. An array
   * element that the device's model says is not there (its index outside the array) refuses the read with
   * `not_found` before anything is sent, as a malformed reference does.
   */
  async readValues(refs: string[]): Promise<ValueResult[]> {
    const parsed = refs.map(parseReference);
    await Promise.all(parsed.filter(hasIndex).map((r) => this.#checkElement(r)));
    const located = await Promise.all(parsed.map((r) => locate((t) => this.typeOf(t), r)));
    const results = await this.requests.read(parsed.map(toObjectName));
    const values: ValueResult[] = results.map((r, i) =>
      r.ok
        ? { ref: refs[i], value: toJson(r.data, located[i].type, leafName(parsed[i])) }
        : { ref: refs[i], value: null, error: r.errorText },
    );
    return stampValues(
      values,
      parsed,
      located.map((l) => l.dataObjectDepth),
    );
  }

  /** Writes a JSON value, converted to the variable's type; a value that does not fit is refused before sending. */
  async write(ref: string, value: unknown): Promise<void> {
    const parsed = parseReference(ref);
    if (parsed.fc !== undefined && READ_ONLY_FCS.has(parsed.fc))
      throw new Iec61850Error(
        'read_only',
        `${toObjectReference(parsed)} is ${parsed.fc}, which a client cannot write${parsed.fc === 'CO' ? ' (operate it as a control)' : ''}`,
      );
    const type = await this.typeOf(ref);
    const data = fromJson(value, type, leafName(parsed), toObjectReference(parsed));
    await this.requests.write(toObjectName(parsed), data);
  }

  /**
   * Refuses an array element outside its array, as the device's model describes the array; an array the
   * device does not describe is left to the device to answer.
   */
  async #checkElement(r: DataReference): Promise<void> {
    try {
      await this.typeOf(toMmsReference(r));
    } catch (e) {
      if (e instanceof Iec61850Error && e.code === 'not_found') throw e;
    }
  }

  /** Reads a data set (`LD/LN$name` or `LD/LN.name`): its members and their values. */
  async readDataSet(ref: string): Promise<DataSetValues> {
    const name = dataSetName(ref);
    const { variables } = await this.requests.getNamedVariableListAttributes(name);
    const members = variables.map((v) => (v.scope === 'domain' ? fromObjectName(v) : undefined));
    const located = await Promise.all(
      members.map((m) => (m ? locate((t) => this.typeOf(t), m) : { type: undefined, dataObjectDepth: undefined })),
    );
    const results = await this.requests.readNamedVariableList(name);
    if (results.length !== variables.length)
      throw new Iec61850Error('bad_value', `data set ${ref} has ${variables.length} members but the read gave ${results.length} values`);
    const values: ValueResult[] = results.map((r, i) => {
      const m = members[i];
      const memberRef = m ? toObjectReference(m) : variables[i].item;
      return r.ok
        ? { ref: memberRef, value: toJson(r.data, located[i].type, m && leafName(m)) }
        : { ref: memberRef, value: null, error: r.errorText };
    });
    return {
      ref: `${name.domain}/${name.item}`,
      members: stampValues(
        values,
        members,
        located.map((l) => l.dataObjectDepth),
      ),
    };
  }

  /** Enables a report control block; its reports then arrive as `report` events. */
  enableReport(rcbRef: string, o: ReportOptions = {}): Promise<ReportSubscription> {
    const register = (s: ReportSubscription) => {
      for (const [id, known] of this.#subscriptions) if (known.rcb === s.rcb) this.#subscriptions.delete(id);
      this.#subscriptions.set(s.rptId, s);
    };
    return enableReport(this.#ctx, rcbRef, o, register, (rptId) => this.#subscriptions.get(rptId)?.rcb);
  }

  /** Disables a report control block and forgets its reports. */
  async disableReport(rcbRef: string): Promise<void> {
    await disableReport(this.#ctx, rcbRef);
    const rcb = toMmsReference(parseReference(rcbRef));
    for (const [id, s] of this.#subscriptions) if (s.rcb === rcb) this.#subscriptions.delete(id);
  }

  /** The report control blocks enabled through this device. */
  get subscriptions(): ReportSubscription[] {
    return [...this.#subscriptions.values()];
  }

  /** Operates a controllable data object (see {@link OperateOptions}). */
  operate(doRef: string, value: unknown, o: OperateOptions = {}): Promise<void> {
    return this.#controls.operate(this.#ctx, doRef, value, o);
  }

  /** Cancels a selection or a running control. */
  cancel(doRef: string, value: unknown, o: Omit<OperateOptions, 'model' | 'check'> = {}): Promise<void> {
    return this.#controls.cancel(this.#ctx, doRef, value, o);
  }

  /** Concludes the association gracefully. */
  conclude(): Promise<void> {
    return this.client.conclude();
  }

  /** Closes the connection at once. */
  close(): void {
    this.client.close();
  }

  #report(r: InformationReport): void {
    if (this.#controls.handle(r)) return;
    if (!isRpt(r))
      return void this.emit(
        'reportError',
        new Iec61850Error('bad_report', 'an InformationReport that is neither a report (RPT) nor a control answer'),
      );
    let report: Report;
    try {
      report = decodeReport(r, (id) => this.#subscriptions.get(id));
    } catch (e) {
      if (!(e instanceof Iec61850Error || e instanceof MmsError)) throw e;
      return void this.emit('reportError', e);
    }
    this.emit('report', report);
  }
}
