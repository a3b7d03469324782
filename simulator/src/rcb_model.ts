/**
 * Report control blocks as IEC 61850-8-1 lays them out: `LN$RP$<name>` (unbuffered) and `LN$BR$<name>`
 * (buffered) structures whose components are the block's attributes, one instance per name the SCL gives
 * (`ControlEventsRCB01`, `…02` when indexed). Initial values come from the `ReportControl` element.
 */
import { bitStringFromBits, type MmsData, type MmsPdu, type OptFields, type ReportControl, type TrgOps } from '@scada/iec61850/wire';
import { leaf, struct, type DataNode } from './data_tree.ts';
import type { ReportBuffer } from './report_buffer.ts';

/** What a report is sent to: one association. */
export type ReportSink = { readonly id: number; send(pdu: MmsPdu): void };

/** Data set member indexes a report includes, with the reasons (`dchg`, `qchg`, `dupd`, `integrity`, `gi`). */
export type Inclusion = Map<number, Set<string>>;

/** One instance of a report control block and its run-time state. */
export type RcbInstance = {
  domain: string;
  /** Logical node holding the block (usually LLN0). */
  ln: string;
  name: string;
  buffered: boolean;
  /** The block's structure node (`LLN0$RP$name`); its leaves are the attributes. */
  node: DataNode;
  config: ReportControl;
  /** The association that reserved or enabled the block. */
  owner?: ReportSink;
  integrityTimer?: ReturnType<typeof setInterval>;
  bufferTimer?: ReturnType<typeof setTimeout>;
  /** Data set member indexes waiting for the buffer time, with their reason bits. */
  pending: Inclusion;
  /** A buffered block's entries, sent and not (made by the report engine on the first entry). */
  buffer?: ReportBuffer;
};

const text = (value: string): MmsData => ({ type: 'visible-string', value });
const unsigned = (value: number): MmsData => ({ type: 'unsigned', value });
const bool = (value: boolean): MmsData => ({ type: 'boolean', value });

/** OptFlds bits: reserved, sequence-number, report-time-stamp, reason-for-inclusion, data-set-name, data-reference, buffer-overflow, entryID, conf-revision, segmentation. */
export function optFldsBits(o: OptFields): MmsData {
  return {
    type: 'bit-string',
    value: bitStringFromBits([
      false,
      o.seqNum,
      o.timeStamp,
      o.reasonCode,
      o.dataSet,
      o.dataRef,
      o.bufOvfl,
      o.entryID,
      o.configRef,
      o.segmentation,
    ]),
  };
}

/** TrgOps bits: reserved, data-changed, quality-changed, data-update, integrity, general-interrogation. */
export function trgOpsBits(t: TrgOps): MmsData {
  return { type: 'bit-string', value: bitStringFromBits([false, t.dchg, t.qchg, t.dupd, t.period, t.gi]) };
}

/**
 * The instance names of a block: the model's, except that an indexed block with one instance is named
 * `<name>01` when `indexSingle` holds, as libiec61850 servers (and the captured one) name it.
 */
export function instanceNames(rc: ReportControl, indexSingle: boolean): string[] {
  return indexSingle && rc.indexed && rc.instances.length === 1 ? [`${rc.name}01`] : rc.instances;
}

/** The attribute leaves of one instance, in the order of IEC 61850-8-1. */
function attributes(rc: ReportControl, datSet: string): DataNode[] {
  const common = (rptId: string) => [leaf('RptID', 'ObjRef', text(rptId)), leaf('RptEna', 'BOOLEAN', bool(false))];
  const rptId = rc.rptID ?? '';
  const shared = [
    leaf('DatSet', 'ObjRef', text(datSet)),
    leaf('ConfRev', 'INT32U', unsigned(rc.confRev ?? 1)),
    leaf('OptFlds', 'OptFlds', optFldsBits(rc.optFields)),
    leaf('BufTm', 'INT32U', unsigned(rc.bufTime)),
    leaf('SqNum', rc.buffered ? 'INT16U' : 'INT8U', unsigned(0)),
    leaf('TrgOps', 'TrgOps', trgOpsBits(rc.trgOps)),
    leaf('IntgPd', 'INT32U', unsigned(rc.intgPd)),
    leaf('GI', 'BOOLEAN', bool(false)),
  ];
  if (!rc.buffered) return [...common(rptId), leaf('Resv', 'BOOLEAN', bool(false)), ...shared];
  return [
    ...common(rptId),
    ...shared,
    leaf('PurgeBuf', 'BOOLEAN', bool(false)),
    leaf('EntryID', 'EntryID'),
    leaf('TimeOfEntry', 'EntryTime'),
    leaf('ResvTms', 'INT16', { type: 'integer', value: 0 }),
  ];
}

/** The RP and BR FC nodes of a logical node's report control blocks (none when it has no blocks). */
export function rcbFcNodes(rcs: readonly ReportControl[], domain: string, lnName: string, indexSingle: boolean): DataNode[] {
  const out: DataNode[] = [];
  for (const [fc, buffered] of [
    ['RP', false],
    ['BR', true],
  ] as const) {
    const blocks = rcs
      .filter((rc) => rc.buffered === buffered)
      .flatMap((rc) => {
        const datSet = rc.datSet ? `${domain}/${lnName}$${rc.datSet}` : '';
        const rptId = rc.rptID ?? `${domain}/${lnName}$${fc}$${rc.name}`;
        return instanceNames(rc, indexSingle).map((inst) => struct(inst, attributes({ ...rc, rptID: rptId }, datSet)));
      });
    if (blocks.length > 0) out.push(struct(fc, blocks));
  }
  return out;
}

/** The run-time instances for the RP/BR nodes of a finalized logical node. */
export function rcbInstances(lnNode: DataNode, rcs: readonly ReportControl[], domain: string, indexSingle: boolean): RcbInstance[] {
  const out: RcbInstance[] = [];
  for (const fcNode of lnNode.children) {
    if (fcNode.name !== 'RP' && fcNode.name !== 'BR') continue;
    for (const node of fcNode.children) {
      const config = rcs.find((rc) => instanceNames(rc, indexSingle).includes(node.name) && rc.buffered === (fcNode.name === 'BR'));
      if (!config) continue;
      out.push({
        domain,
        ln: lnNode.name,
        name: node.name,
        buffered: config.buffered,
        node,
        config,
        pending: new Map(),
      });
    }
  }
  return out;
}

/** An attribute leaf of an instance. */
export function attr(rcb: RcbInstance, name: string): DataNode {
  const found = rcb.node.children.find((c) => c.name === name);
  if (!found) throw new Error(`report control block ${rcb.name} has no attribute ${name}`);
  return found;
}

/** A boolean, number or string attribute's value. */
export function attrValue(rcb: RcbInstance, name: string): boolean | number | string {
  const v = attr(rcb, name).value;
  if (v?.type === 'boolean' || v?.type === 'visible-string') return v.value;
  if (v?.type === 'integer' || v?.type === 'unsigned') return Number(v.value);
  return 0;
}

/** Bit `n` of a bit-string attribute. */
export function attrBit(rcb: RcbInstance, name: string, n: number): boolean {
  const v = attr(rcb, name).value;
  return v?.type === 'bit-string' && n < v.value.bitLength && (v.value.bytes[n >> 3] & (0x80 >> (n & 7))) !== 0;
}
