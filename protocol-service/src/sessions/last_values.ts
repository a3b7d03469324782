/**
 * The last value of every attribute a connection's device reported, as the platform answers and forwards
 * it: with the quality and the device's time stamp of the same data object in the same report (where the
 * data set carries them), the reason for inclusion, the sequence number, the block that sent it, and
 * `stale` once the association that delivered it has ended.
 */
import type { ReportedValue, ValueQuality } from '@scada/contracts';
import { parseReference, toObjectReference } from '@scada/iec61850';
import type { DeviceReport } from './live_device.ts';

/** A kept value: the reported attribute without its connection, and whether it is stale. */
export type LastValue = Omit<ReportedValue, 'connectionId'> & { stale: boolean };

const REASONS: Record<string, ReportedValue['reason'] extends (infer R)[] | null ? R : never> = {
  dataChange: 'data-change',
  qualityChange: 'quality-change',
  dataUpdate: 'data-update',
  integrity: 'integrity',
  gi: 'general-interrogation',
};

/** The reference of the data object an attribute belongs to (`LD/LN.DO[FC]`), or undefined for a DO itself. */
function dataObjectOf(reference: string): string | undefined {
  try {
    const r = parseReference(reference);
    return r.path.length < 2 ? undefined : toObjectReference({ ...r, path: r.path.slice(0, -1) });
  } catch {
    return undefined;
  }
}

function lastName(reference: string): string | undefined {
  try {
    return parseReference(reference).path.at(-1);
  } catch {
    return undefined;
  }
}

/** ValueQuality from the IEC 61850 layer's quality JSON (`{validity, flags, source}`). */
function qualityOf(q: unknown): ValueQuality | null {
  if (typeof q !== 'object' || q === null || !('validity' in q)) return null;
  const { validity, flags, source } = q as { validity: ValueQuality['validity']; flags?: string[]; source?: ValueQuality['source'] };
  const set = flags ?? [];
  return {
    validity,
    detail: set.filter((f) => f !== 'test' && f !== 'operatorBlocked'),
    source: source ?? 'process',
    test: set.includes('test'),
    operatorBlocked: set.includes('operatorBlocked'),
  };
}

/** The ISO time of a TimeStamp JSON (`{time, flags, accuracy}`). */
function timeOf(t: unknown): string | null {
  return typeof t === 'object' && t !== null && typeof (t as { time?: unknown }).time === 'string' ? (t as { time: string }).time : null;
}

/** The quality and time stamp each data object of a report carries, by data object reference. */
function companions(report: DeviceReport): Map<string, { q?: unknown; t?: unknown }> {
  const out = new Map<string, { q?: unknown; t?: unknown }>();
  for (const v of report.values) {
    const name = lastName(v.ref);
    const owner = dataObjectOf(v.ref);
    if (!owner || (name !== 'q' && name !== 't')) continue;
    const entry = out.get(owner) ?? {};
    entry[name] = v.value;
    out.set(owner, entry);
  }
  return out;
}

/** The last values of one connection. */
export class LastValues {
  readonly #values = new Map<string, LastValue>();

  /** Keeps a report's values; answers them as reported attributes. */
  record(report: DeviceReport, receivedAt: string): LastValue[] {
    const withQt = companions(report);
    const out: LastValue[] = report.values.map((v) => {
      // A data object reported whole carries its own q and t; an attribute takes those of its data object.
      const own =
        typeof v.value === 'object' && v.value !== null && !Array.isArray(v.value) ? (v.value as { q?: unknown; t?: unknown }) : {};
      const beside = withQt.get(dataObjectOf(v.ref) ?? '') ?? {};
      const reason = v.reason?.flatMap((r) => (REASONS[r] ? [REASONS[r]] : [])) ?? null;
      return {
        reference: v.ref,
        value: v.value,
        quality: qualityOf(own.q ?? beside.q),
        timestamp: timeOf(own.t ?? beside.t),
        receivedAt,
        rcb: report.rcb,
        reason,
        seqNum: report.seqNum ?? null,
        stale: false,
      };
    });
    for (const v of out) this.#values.set(v.reference, v);
    return out;
  }

  /** The association that delivered them ended: every value is stale until reported again. */
  markStale(): void {
    for (const v of this.#values.values()) v.stale = true;
  }

  /** Drops the values a block reported (it was disabled). */
  dropBlock(rcb: string): void {
    for (const [reference, v] of this.#values) if (v.rcb === rcb) this.#values.delete(reference);
  }

  /** Drops every value (the device's identity or model changed). */
  clear(): void {
    this.#values.clear();
  }

  /** Every value, by reference. */
  list(): LastValue[] {
    return [...this.#values.values()].sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
  }
}
