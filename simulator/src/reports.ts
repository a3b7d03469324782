/**
 * The reporting of the simulated device (IEC 61850-7-2 §17, mapped by IEC 61850-8-1 §17.2): writes to
 * report control block attributes with their rules (reservation, what may change while enabled, GI,
 * PurgeBuf, EntryID), data-change and quality-change triggers, buffer time, integrity periods, the
 * buffers of buffered blocks (`report_buffer.ts`), and the InformationReport `RPT` a client receives,
 * fields in the order OptFlds selects.
 */
import { binaryTimeFromMs, bitStringFromBits, type MmsData, type MmsPdu } from '@scada/iec61850/wire';
import { DATA_ACCESS } from '@scada/iec61850/wire';
import { assignNode, isWithin, readNode, type DataNode } from './data_tree.ts';
import { dataSetByReference, type DataSetList, type Device } from './device.ts';
import { attr, attrBit, attrValue, type Inclusion, type RcbInstance, type ReportSink } from './rcb_model.ts';
import { entryIdOf, ReportBuffer, type BufferEntry } from './report_buffer.ts';

/** What the engine tells the simulator: a report went out. */
export type ReportNotice = { rcb: string; reasons: string[]; sink: number };

const REASON_BIT: Record<string, number> = { dchg: 1, qchg: 2, dupd: 3, integrity: 4, gi: 5 };
/** TrgOps bit that enables each reason. */
const TRIGGER_BIT = REASON_BIT;
const MAX_BUFFERED = 1000;
const OPT = { seqNum: 1, timeStamp: 2, reasonCode: 3, dataSet: 4, dataRef: 5, bufOvfl: 6, entryID: 7, configRef: 8, segmentation: 9 };
const READ_ONLY = new Set(['ConfRev', 'SqNum', 'TimeOfEntry']);
const FALSE: MmsData = { type: 'boolean', value: false };
const WHILE_ENABLED = new Set(['RptEna', 'GI', 'Resv', 'ResvTms']);

function set(rcb: RcbInstance, name: string, value: MmsData): void {
  assignNode(attr(rcb, name), value);
}

/** Runs the report control blocks of a device. */
export class ReportEngine {
  readonly #device: Device;
  readonly #notify: (n: ReportNotice) => void;

  /** How many entries a buffered block keeps; past it the oldest go (BufOvfl when one was not sent yet). */
  readonly #capacity: () => number;

  constructor(device: Device, notify: (n: ReportNotice) => void, capacity: () => number = () => MAX_BUFFERED) {
    this.#device = device;
    this.#notify = notify;
    this.#capacity = capacity;
  }

  /** The data set a block's DatSet names. */
  dataSetOf(rcb: RcbInstance): DataSetList | undefined {
    return dataSetByReference(this.#device, String(attrValue(rcb, 'DatSet')));
  }

  /** Writes one attribute (value already type-checked); returns a DataAccessError code, or undefined on success. */
  write(sink: ReportSink, rcb: RcbInstance, name: string, value: MmsData): number | undefined {
    if (rcb.owner && rcb.owner !== sink) return DATA_ACCESS.temporarilyUnavailable;
    if (READ_ONLY.has(name)) return DATA_ACCESS.objectAccessDenied;
    const enabled = attrValue(rcb, 'RptEna') === true;
    if (enabled && !WHILE_ENABLED.has(name)) return DATA_ACCESS.temporarilyUnavailable;
    const on = value.type === 'boolean' && value.value;
    switch (name) {
      case 'RptEna':
        return on ? this.#enable(sink, rcb) : this.#disable(rcb);
      case 'GI':
        if (on && enabled && attrBit(rcb, 'TrgOps', TRIGGER_BIT.gi)) this.#sendAll(rcb, 'gi');
        return undefined;
      case 'Resv':
        set(rcb, 'Resv', value);
        if (on) rcb.owner = sink;
        else if (!enabled) rcb.owner = undefined;
        return undefined;
      case 'ResvTms':
        set(rcb, 'ResvTms', value);
        if (Number(value.type === 'integer' ? value.value : 0) !== 0) rcb.owner = sink;
        return undefined;
      case 'PurgeBuf':
        if (on && rcb.buffered) this.#bufferOf(rcb).purge();
        return undefined;
      case 'EntryID':
        if (rcb.buffered && !this.#bufferOf(rcb).resync(value)) return DATA_ACCESS.objectValueInvalid;
        set(rcb, 'EntryID', value);
        return undefined;
      case 'DatSet': {
        const ref = value.type === 'visible-string' ? value.value : '';
        if (ref !== '' && !dataSetByReference(this.#device, ref)) return DATA_ACCESS.objectValueInvalid;
        set(rcb, 'DatSet', value);
        set(rcb, 'ConfRev', { type: 'unsigned', value: Number(attrValue(rcb, 'ConfRev')) + 1 });
        return undefined;
      }
      default:
        set(rcb, name, value);
        return undefined;
    }
  }

  #enable(sink: ReportSink, rcb: RcbInstance): number | undefined {
    if (!this.dataSetOf(rcb)) return DATA_ACCESS.objectValueInvalid;
    if (attrValue(rcb, 'RptEna') === true) return undefined;
    rcb.owner = sink;
    set(rcb, 'RptEna', { type: 'boolean', value: true });
    const period = Number(attrValue(rcb, 'IntgPd'));
    if (period > 0 && attrBit(rcb, 'TrgOps', TRIGGER_BIT.integrity)) {
      rcb.integrityTimer = setInterval(() => this.#sendAll(rcb, 'integrity'), period);
      rcb.integrityTimer.unref();
    }
    if (rcb.buffered) {
      // what the buffer holds for the client goes out once the response has left
      this.#bufferOf(rcb).enabled();
      setImmediate(() => this.#transmit(rcb));
    }
    return undefined;
  }

  #disable(rcb: RcbInstance): undefined {
    this.#flush(rcb);
    if (rcb.buffered) this.#bufferOf(rcb).disabled();
    this.#stopTimers(rcb);
    set(rcb, 'RptEna', { type: 'boolean', value: false });
    const reserved = rcb.buffered ? attrValue(rcb, 'ResvTms') !== 0 : attrValue(rcb, 'Resv') === true;
    if (!reserved) rcb.owner = undefined;
    return undefined;
  }

  #stopTimers(rcb: RcbInstance): void {
    clearInterval(rcb.integrityTimer);
    clearTimeout(rcb.bufferTimer);
    rcb.integrityTimer = undefined;
    rcb.bufferTimer = undefined;
  }

  /** Releases every block an association held (it closed): disabled, unreserved. */
  release(sink: ReportSink): void {
    for (const rcb of this.#device.rcbs) {
      if (rcb.owner !== sink) continue;
      this.#stopTimers(rcb);
      rcb.pending.clear();
      rcb.owner = undefined;
      set(rcb, 'RptEna', { type: 'boolean', value: false });
      if (!rcb.buffered) set(rcb, 'Resv', { type: 'boolean', value: false });
      else {
        set(rcb, 'ResvTms', { type: 'integer', value: 0 });
        this.#bufferOf(rcb).released();
      }
    }
  }

  /** Stops every timer (the simulator stops). */
  stop(): void {
    for (const rcb of this.#device.rcbs) this.#stopTimers(rcb);
  }

  /** Leaves whose value changed: reports for every block whose data set holds them and whose triggers match. */
  onChanges(leaves: readonly DataNode[]): void {
    if (leaves.length === 0) return;
    for (const rcb of this.#device.rcbs) {
      const ds = this.dataSetOf(rcb);
      if (!ds) continue;
      const included: Inclusion = new Map();
      ds.members.forEach((m, i) => {
        for (const l of leaves) {
          if (!m.node || !isWithin(l, m.node)) continue;
          const reason = l.bType === 'Quality' ? 'qchg' : 'dchg';
          if (!attrBit(rcb, 'TrgOps', TRIGGER_BIT[reason])) continue;
          if (!included.has(i)) included.set(i, new Set());
          included.get(i)!.add(reason);
        }
      });
      if (included.size > 0) this.#trigger(rcb, included);
    }
  }

  #trigger(rcb: RcbInstance, included: Inclusion): void {
    if (attrValue(rcb, 'RptEna') !== true) {
      if (rcb.buffered) this.#send(rcb, included, Date.now());
      return;
    }
    const bufTm = Number(attrValue(rcb, 'BufTm'));
    if (bufTm <= 0) {
      this.#send(rcb, included, Date.now());
      return;
    }
    for (const [i, reasons] of included) {
      const had = rcb.pending.get(i);
      if (had) for (const r of reasons) had.add(r);
      else rcb.pending.set(i, new Set(reasons));
    }
    if (!rcb.bufferTimer) rcb.bufferTimer = setTimeout(() => this.#flush(rcb), bufTm);
  }

  #flush(rcb: RcbInstance): void {
    clearTimeout(rcb.bufferTimer);
    rcb.bufferTimer = undefined;
    if (rcb.pending.size === 0) return;
    const included = rcb.pending;
    rcb.pending = new Map();
    this.#send(rcb, included, Date.now());
  }

  #sendAll(rcb: RcbInstance, reason: string): void {
    this.#flush(rcb);
    const ds = this.dataSetOf(rcb);
    if (!ds) return;
    this.#send(rcb, new Map(ds.members.map((_, i) => [i, new Set([reason])])), Date.now());
  }

  #bufferOf(rcb: RcbInstance): ReportBuffer {
    rcb.buffer ??= new ReportBuffer(this.#capacity);
    return rcb.buffer;
  }

  /**
   * One entry: the included members with their values now. A buffered block keeps it (EntryID and
   * TimeOfEntry name the newest entry) and transmits what its client has not had yet; an unbuffered one
   * sends it when enabled and owned.
   */
  #send(rcb: RcbInstance, included: Inclusion, ms: number): void {
    const ds = this.dataSetOf(rcb);
    if (!ds) return;
    const values = new Map([...included.keys()].map((i) => [i, ds.members[i].node ? readNode(ds.members[i].node) : FALSE]));
    if (!rcb.buffered) {
      if (rcb.owner) this.#deliver(rcb, ds, { id: 0, ms, included, values });
      return;
    }
    const entry = this.#bufferOf(rcb).add(ms, included, values);
    set(rcb, 'EntryID', entryIdOf(entry.id));
    set(rcb, 'TimeOfEntry', { type: 'binary-time', value: binaryTimeFromMs(ms) });
    if (attrValue(rcb, 'RptEna') === true) this.#transmit(rcb);
  }

  /** Sends a buffered block's entries its client has not had yet, oldest first. */
  #transmit(rcb: RcbInstance): void {
    const ds = this.dataSetOf(rcb);
    if (!ds || !rcb.owner || attrValue(rcb, 'RptEna') !== true) return;
    for (const entry of this.#bufferOf(rcb).take()) this.#deliver(rcb, ds, entry);
  }

  #deliver(rcb: RcbInstance, ds: DataSetList, entry: BufferEntry): void {
    if (!rcb.owner) return;
    rcb.owner.send(this.#report(rcb, ds, entry));
    const reasons = [...new Set([...entry.included.values()].flatMap((s) => [...s]))];
    this.#notify({ rcb: `${rcb.domain}/${rcb.ln}$${rcb.buffered ? 'BR' : 'RP'}$${rcb.name}`, reasons, sink: rcb.owner.id });
  }

  /** The InformationReport of one entry; advances SqNum. */
  #report(rcb: RcbInstance, ds: DataSetList, entry: BufferEntry): MmsPdu {
    const { included, ms } = entry;
    const opt = (n: number) => attrBit(rcb, 'OptFlds', n) && (rcb.buffered || (n !== OPT.bufOvfl && n !== OPT.entryID));
    const bits = Array.from({ length: 10 }, (_, n) => n !== 0 && opt(n));
    const order = [...included.keys()].sort((a, b) => a - b);
    const values: MmsData[] = [
      { type: 'visible-string', value: String(attrValue(rcb, 'RptID')) },
      { type: 'bit-string', value: bitStringFromBits(bits) },
    ];
    const sqNum = Number(attrValue(rcb, 'SqNum'));
    if (opt(OPT.seqNum)) values.push({ type: 'unsigned', value: sqNum });
    if (opt(OPT.timeStamp)) values.push({ type: 'binary-time', value: binaryTimeFromMs(ms) });
    if (opt(OPT.dataSet)) values.push({ type: 'visible-string', value: ds.reference });
    if (opt(OPT.bufOvfl)) values.push({ type: 'boolean', value: rcb.buffer?.overflowed === true });
    if (rcb.buffer) rcb.buffer.overflowed = false;
    if (opt(OPT.entryID)) values.push(entryIdOf(entry.id));
    if (opt(OPT.configRef)) values.push({ type: 'unsigned', value: Number(attrValue(rcb, 'ConfRev')) });
    if (opt(OPT.segmentation)) values.push({ type: 'unsigned', value: 0 }, { type: 'boolean', value: false });
    values.push({ type: 'bit-string', value: bitStringFromBits(ds.members.map((_, i) => included.has(i))) });
    if (opt(OPT.dataRef)) for (const i of order) values.push({ type: 'visible-string', value: ds.members[i].reference });
    for (const i of order) values.push(entry.values.get(i) ?? FALSE);
    if (opt(OPT.reasonCode)) {
      for (const i of order) {
        const reasons = included.get(i)!;
        values.push({
          type: 'bit-string',
          value: bitStringFromBits(Array.from({ length: 6 }, (_, n) => [...reasons].some((r) => REASON_BIT[r] === n))),
        });
      }
    }
    set(rcb, 'SqNum', { type: 'unsigned', value: (sqNum + 1) % (rcb.buffered ? 65536 : 256) });
    return {
      pdu: 'information-report',
      report: {
        variables: { kind: 'list', name: { scope: 'vmd', item: 'RPT' } },
        results: values.map((data) => ({ ok: true as const, data })),
      },
    };
  }
}
