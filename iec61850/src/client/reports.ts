/**
 * IEC 61850 reports over MMS (IEC 61850-8-1 §17): enabling a URCB (reserve with Resv) or BRCB (ResvTms when
 * the block has it), setting DatSet/OptFlds/TrgOps/IntgPd/BufTm and RptEna in one write, GI; and decoding the
 * `RPT` InformationReport by the block's OptFlds and data set: RptID, SqNum, TimeOfEntry, DatSet, BufOvfl,
 * EntryID, ConfRev, SubSeqNum/MoreSegmentsFollow, the inclusion bit string, data references, values, reasons;
 * each value with the quality and time stamp of its data object where the same report carries them (see
 * `data_objects.ts`).
 */
import type { MmsRequester } from '../mms/client.ts';
import { MmsError } from '../mms/client_errors.ts';
import { binaryTimeToMs, bitsOf, isoOfMs, type BitString } from '../mms/ber_values.ts';
import type { AccessResult, ObjectName } from '../mms/mms_access.ts';
import type { MmsData } from '../mms/mms_data.ts';
import type { InformationReport } from '../mms/mms_pdu.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { locate, stampValues, type DataObjectStamp } from './data_objects.ts';
import { Iec61850Error } from './errors.ts';
import {
  childOf,
  fromObjectName,
  leafName,
  parseReference,
  toMmsReference,
  toObjectName,
  toObjectReference,
  type DataReference,
} from './reference.ts';
import { fromJson, toJson, type Json } from './values.ts';
import { flagsOf, NAMED_BITS } from './values_bits.ts';

/** What to set when enabling; unset fields keep the block's values. Flags objects as in {@link NAMED_BITS}. */
export type ReportOptions = {
  trgOps?: Record<string, boolean>;
  optFlds?: Record<string, boolean>;
  intgPd?: number;
  bufTm?: number;
  /** Data set to report (`LD/LN$name`); the block's own by default. */
  dataSet?: string;
  /** BRCB reservation time in seconds, written when the block has ResvTms; 60 by default. */
  resvTms?: number;
  /** Ask for a general interrogation once enabled. */
  gi?: boolean;
  /**
   * BRCB: the last EntryID received (hex), written on its own before enabling so that the device resumes
   * after it (IEC 61850-7-2 §17.2.2). A device that no longer buffers that entry refuses the write; the
   * block is enabled all the same and sends everything it holds, with BufOvfl set.
   */
  entryId?: string;
};

/**
 * The block of this association that already sends an RptID, if any; enabling another block with the same
 * RptID writes a unique one into it first, so that every report is attributed to the block that sent it.
 */
export type RptIdOwner = (rptId: string) => string | undefined;

/**
 * A data set member a report can carry: `parsed` is its reference parsed (absent for a name that is not
 * domain-specific), `dataObjectDepth` how many elements of its path name its data object, from the
 * device's model (undefined when the device did not describe it).
 */
export type ReportMember = { ref: string; mmsRef: string; name: string; type?: MmsType; dataObjectDepth?: number; parsed?: DataReference };

/** An enabled report control block and what its reports contain. */
export type ReportSubscription = { rcb: string; rptId: string; buffered: boolean; dataSet: string; members: ReportMember[] };

/**
 * One reported value; `reason` lists the reasons for inclusion when the report carries them; `quality` and
 * `timestamp` are its data object's `q` and `t` when the same report carries them.
 */
export type ReportValue = { ref: string; value: Json | null; error?: string; reason?: string[] } & DataObjectStamp;

/** A decoded report. */
export type Report = {
  rcb: string;
  rptId: string;
  seqNum?: number;
  subSeqNum?: number;
  moreSegmentsFollow?: boolean;
  timeOfEntry?: string;
  dataSet?: string;
  bufferOverflow?: boolean;
  entryId?: string;
  confRev?: number;
  values: ReportValue[];
};

/** What enabling needs from the device. */
export type ReportContext = { client: MmsRequester; typeOf(mmsRef: string): Promise<MmsType | undefined> };

/** The ObjectName of a data set reference `LD/LN$name` or `LD/LN.name`. */
export function dataSetName(ref: string): Extract<ObjectName, { scope: 'domain' }> {
  const m = /^([A-Za-z0-9_]+)\/([A-Za-z0-9_]+)[$.]([A-Za-z0-9_]+)$/.exec(ref.trim());
  if (!m) throw new Iec61850Error('bad_reference', `data set reference '${ref}': expected 'LD/LN$name' or 'LD/LN.name'`);
  return { scope: 'domain', domain: m[1], item: `${m[2]}$${m[3]}` };
}

/** The block reference, checked to name an RP or BR block. */
export function rcbReference(ref: string): DataReference {
  const r = parseReference(ref);
  if ((r.fc !== 'RP' && r.fc !== 'BR') || r.path.length !== 1)
    throw new Iec61850Error('bad_reference', `'${ref}' is not a report control block (LD/LN$RP$name or LD/LN$BR$name)`);
  return r;
}

function componentNames(type: MmsType | undefined): string[] {
  return type?.type === 'structure' ? type.components.flatMap((c) => (c.name === undefined ? [] : [c.name])) : [];
}

function componentType(type: MmsType | undefined, name: string): MmsType | undefined {
  return type?.type === 'structure' ? type.components.find((c) => c.name === name)?.type : undefined;
}

async function writeAll(client: MmsRequester, rcb: DataReference, items: { name: string; data: MmsData }[]): Promise<void> {
  if (items.length === 0) return;
  const results = await client.writeMany(items.map((i) => ({ ref: toObjectName(childOf(rcb, i.name)), data: i.data })));
  results.forEach((r, i) => {
    if (!r.ok) throw MmsError.fromAccess(r.error, r.errorText, toMmsReference(childOf(rcb, items[i].name)));
  });
}

async function membersOf(ctx: ReportContext, dataSet: string): Promise<ReportMember[]> {
  const { variables } = await ctx.client.getNamedVariableListAttributes(dataSetName(dataSet));
  return Promise.all(
    variables.map(async (v) => {
      // an array element keeps its index: `HA.phsAHar(7)`, from the member's alternate access
      const parsed = v.scope === 'domain' ? fromObjectName(v) : undefined;
      const mmsRef = parsed ? toMmsReference(parsed) : v.item;
      const member: ReportMember = { ref: parsed ? toObjectReference(parsed) : mmsRef, mmsRef, name: parsed ? leafName(parsed) : v.item };
      if (!parsed) return member;
      const { type, dataObjectDepth } = await locate((r) => ctx.typeOf(r), parsed);
      return { ...member, parsed, ...(type ? { type } : {}), ...(dataObjectDepth === undefined ? {} : { dataObjectDepth }) };
    }),
  );
}

/**
 * Enables a block: reserves it, sets what the options give and RptEna in one write, then GI when asked.
 * `register` receives the subscription before RptEna so the first reports are not missed.
 */
export async function enableReport(
  ctx: ReportContext,
  ref: string,
  o: ReportOptions,
  register: (s: ReportSubscription) => void,
  ownerOf: RptIdOwner = () => undefined,
): Promise<ReportSubscription> {
  const rcb = rcbReference(ref);
  const buffered = rcb.fc === 'BR';
  const rcbType = await ctx.typeOf(toMmsReference(rcb));
  const has = new Set(componentNames(rcbType));
  const typeFor = (name: string): MmsType => {
    const t = componentType(rcbType, name);
    if (!t) throw new Iec61850Error('not_found', `${toMmsReference(rcb)} has no ${name}`);
    return t;
  };
  const [current] = await ctx.client.read([toObjectName(rcb)]);
  if (!current.ok) throw MmsError.fromAccess(current.error, current.errorText, toMmsReference(rcb));
  const block = toJson(current.data, rcbType) as Record<string, Json>;
  const rptId = await distinctRptId(ctx, rcb, String(block.RptID ?? '') || toMmsReference(rcb), ownerOf, typeFor);
  if (!buffered && has.has('Resv')) await writeAll(ctx.client, rcb, [{ name: 'Resv', data: { type: 'boolean', value: true } }]);
  if (buffered && has.has('ResvTms'))
    await writeAll(ctx.client, rcb, [{ name: 'ResvTms', data: fromJson(o.resvTms ?? 60, typeFor('ResvTms'), 'ResvTms') }]);
  const settings: { name: string; data: MmsData }[] = [];
  const set = (name: string, value: unknown) => value !== undefined && settings.push({ name, data: fromJson(value, typeFor(name), name) });
  set('DatSet', o.dataSet === undefined ? undefined : `${dataSetName(o.dataSet).domain}/${dataSetName(o.dataSet).item}`);
  set('OptFlds', o.optFlds);
  set('TrgOps', o.trgOps);
  set('IntgPd', o.intgPd);
  set('BufTm', o.bufTm);
  const given = o.dataSet ?? String(block.DatSet ?? '');
  if (given === '') throw new Iec61850Error('not_found', `${toMmsReference(rcb)} has no data set; give one with dataSet`);
  const ds = dataSetName(given);
  const dataSet = `${ds.domain}/${ds.item}`;
  const subscription: ReportSubscription = { rcb: toMmsReference(rcb), rptId, buffered, dataSet, members: await membersOf(ctx, dataSet) };
  register(subscription);
  if (buffered && o.entryId !== undefined && has.has('EntryID')) await resynchronise(ctx.client, rcb, o.entryId);
  await writeAll(ctx.client, rcb, [...settings, { name: 'RptEna', data: { type: 'boolean', value: true } }]);
  if (o.gi) await writeAll(ctx.client, rcb, [{ name: 'GI', data: { type: 'boolean', value: true } }]);
  return subscription;
}

/** Writes a BRCB's EntryID; a device that refuses it (the entry is no longer buffered) sends all it holds once enabled. */
async function resynchronise(client: MmsRequester, rcb: DataReference, entryId: string): Promise<void> {
  try {
    await writeAll(client, rcb, [{ name: 'EntryID', data: { type: 'octet-string', value: new Uint8Array(Buffer.from(entryId, 'hex')) } }]);
  } catch (err) {
    if (!(err instanceof MmsError && err.kind === 'access')) throw err;
  }
}

/**
 * The RptID the block's reports will carry: its own, or, when another block of this association already
 * sends that one, a unique one written into the block (its own reference). A device that refuses the write
 * leaves both blocks as they were: `rptid_conflict`, naming the other block.
 */
async function distinctRptId(
  ctx: ReportContext,
  rcb: DataReference,
  rptId: string,
  ownerOf: RptIdOwner,
  typeFor: (name: string) => MmsType,
): Promise<string> {
  const self = toMmsReference(rcb);
  const other = ownerOf(rptId);
  if (other === undefined || other === self) return rptId;
  let unique = self;
  for (let n = 2; ownerOf(unique) !== undefined && ownerOf(unique) !== self; n++) unique = `${self}#${n}`;
  try {
    await writeAll(ctx.client, rcb, [{ name: 'RptID', data: fromJson(unique, typeFor('RptID'), 'RptID') }]);
  } catch (err) {
    if (!(err instanceof MmsError)) throw err;
    throw new Iec61850Error(
      'rptid_conflict',
      `${self} sends RptID '${rptId}' like ${other}, which is enabled here, and the device refused a unique RptID (${err.text})`,
      { rptIdOf: other },
    );
  }
  return unique;
}

/** Disables a block (RptEna false) and releases its reservation: Resv of a URCB, ResvTms of a BRCB. */
export async function disableReport(ctx: ReportContext, ref: string): Promise<void> {
  const rcb = rcbReference(ref);
  const rcbType = await ctx.typeOf(toMmsReference(rcb));
  const has = new Set(componentNames(rcbType));
  await writeAll(ctx.client, rcb, [{ name: 'RptEna', data: { type: 'boolean', value: false } }]);
  if (rcb.fc === 'RP' && has.has('Resv')) await writeAll(ctx.client, rcb, [{ name: 'Resv', data: { type: 'boolean', value: false } }]);
  const resvTms = componentType(rcbType, 'ResvTms');
  if (rcb.fc === 'BR' && resvTms) await writeAll(ctx.client, rcb, [{ name: 'ResvTms', data: fromJson(0, resvTms, 'ResvTms') }]);
}

/** True when an InformationReport is an IEC 61850 report (`RPT`). */
export function isRpt(r: InformationReport): boolean {
  return r.variables.kind === 'list' && r.variables.name.scope === 'vmd' && r.variables.name.item === 'RPT';
}

function bad(why: string): Iec61850Error {
  return new Iec61850Error('bad_report', `malformed report: ${why}`);
}

/** Reads the report's fields in order, each of an expected MMS type. */
function reader(results: AccessResult[]) {
  let at = 0;
  return {
    take<T extends MmsData['type']>(type: T, what: string): Extract<MmsData, { type: T }> {
      const r = results[at++];
      if (r === undefined) throw bad(`it ends before ${what}`);
      if (!r.ok) throw bad(`${what} is an access error (${r.errorText})`);
      if (r.data.type !== type) throw bad(`${what} is ${r.data.type}, ${type} expected`);
      return r.data as Extract<MmsData, { type: T }>;
    },
    next(what: string): AccessResult {
      const r = results[at++];
      if (r === undefined) throw bad(`it ends before ${what}`);
      return r;
    },
    get rest() {
      return results.length - at;
    },
  };
}

const num = (n: number | bigint) => Number(n);

/** Decodes an `RPT` report; `lookup` finds the subscription by RptID. Throws {@link Iec61850Error} on a bad or unknown report. */
export function decodeReport(r: InformationReport, lookup: (rptId: string) => ReportSubscription | undefined): Report {
  const f = reader(r.results);
  const rptId = f.take('visible-string', 'RptID').value;
  const sub = lookup(rptId);
  if (!sub) throw new Iec61850Error('unknown_report', `report '${rptId}' belongs to no report control block enabled here`, { rptId });
  const opt = flagsOf(f.take('bit-string', 'OptFlds').value, NAMED_BITS.OptFlds);
  const out: Report = { rcb: sub.rcb, rptId, values: [] };
  if (opt.sequenceNumber) out.seqNum = num(f.take('unsigned', 'SqNum').value);
  if (opt.reportTimeStamp) {
    const ms = binaryTimeToMs(f.take('binary-time', 'TimeOfEntry').value);
    if (ms !== undefined) out.timeOfEntry = isoOfMs(ms);
  }
  if (opt.dataSetName) out.dataSet = f.take('visible-string', 'DatSet').value;
  if (out.dataSet !== undefined && out.dataSet !== sub.dataSet)
    throw new Iec61850Error('unknown_report', `report '${rptId}' is for data set ${out.dataSet}, not the announced ${sub.dataSet}`, {
      rptId,
    });
  if (opt.bufferOverflow) out.bufferOverflow = f.take('boolean', 'BufOvfl').value;
  if (opt.entryId) out.entryId = Buffer.from(f.take('octet-string', 'EntryID').value).toString('hex');
  if (opt.configRevision) out.confRev = num(f.take('unsigned', 'ConfRev').value);
  if (opt.segmentation) {
    out.subSeqNum = num(f.take('unsigned', 'SubSeqNum').value);
    out.moreSegmentsFollow = f.take('boolean', 'MoreSegmentsFollow').value;
  }
  const inclusion: BitString = f.take('bit-string', 'inclusion bit string').value;
  if (inclusion.bitLength !== sub.members.length)
    throw bad(`inclusion has ${inclusion.bitLength} bits, data set ${sub.dataSet} has ${sub.members.length} members`);
  const includedBits = bitsOf(inclusion);
  const included = sub.members.filter((_, i) => includedBits[i]);
  if (opt.dataReference) for (const m of included) f.take('visible-string', `data reference of ${m.ref}`);
  out.values = included.map((m) => {
    const a = f.next(`value of ${m.ref}`);
    return a.ok ? { ref: m.ref, value: toJson(a.data, m.type, m.name) } : { ref: m.ref, value: null, error: a.errorText };
  });
  stampValues(
    out.values,
    included.map((m) => m.parsed),
    included.map((m) => m.dataObjectDepth),
  );
  if (opt.reasonForInclusion) {
    out.values.forEach((v) => {
      const reasons = flagsOf(f.take('bit-string', `reason of ${v.ref}`).value, NAMED_BITS.ReasonCode);
      v.reason = Object.keys(reasons).filter((k) => reasons[k]);
    });
  }
  if (f.rest !== 0) throw bad(`${f.rest} fields left over`);
  return out;
}
