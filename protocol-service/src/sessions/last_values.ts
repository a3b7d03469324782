/**
 * The last value of every attribute a connection's device reported, as the platform answers and forwards
 * it: with the quality and the device's time stamp of its data object in the same report (found by the
 * IEC 61850 layer from the device's model, at any depth), else the report's TimeOfEntry as its time, the
 * reason for inclusion, the sequence number, the block that sent it, and `stale` once the association that
 * delivered it has ended.
 */
import type { ReportedValue } from '@scada/contracts';
import type { DeviceReport } from './live_device.ts';
import { qualityOf, timestampOf } from './value_stamps.ts';

/** A kept value: the reported attribute without its connection, and whether it is stale. */
export type LastValue = Omit<ReportedValue, 'connectionId'> & { stale: boolean };

const REASONS: Record<string, ReportedValue['reason'] extends (infer R)[] | null ? R : never> = {
  dataChange: 'data-change',
  qualityChange: 'quality-change',
  dataUpdate: 'data-update',
  integrity: 'integrity',
  gi: 'general-interrogation',
};

/** The reasons for inclusion as the API names them, from the IEC 61850 layer's (`dataChange`, …); null without any. */
export function inclusionReasonsOf(reasons: readonly string[] | undefined): ReportedValue['reason'] {
  return reasons?.flatMap((r) => (REASONS[r] ? [REASONS[r]] : [])) ?? null;
}

/** The last values of one connection. */
export class LastValues {
  readonly #values = new Map<string, LastValue>();

  /** Keeps a report's values; answers them as reported attributes. */
  record(report: DeviceReport, receivedAt: string): LastValue[] {
    const out: LastValue[] = report.values.map((v) => {
      const reason = inclusionReasonsOf(v.reason);
      return {
        reference: v.ref,
        value: v.value,
        quality: qualityOf(v.quality),
        ...timestampOf(v.timestamp, report.timeOfEntry),
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

  /** Keeps values as given: those a session takes up from the store when it starts (stale). */
  keep(values: readonly LastValue[]): void {
    for (const v of values) this.#values.set(v.reference, v);
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
