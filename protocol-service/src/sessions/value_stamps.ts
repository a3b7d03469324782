/**
 * The quality and device time of a value as the API gives them, from what the IEC 61850 layer found of the
 * value's data object in the same report or read (its `q` and `t`), and the report's TimeOfEntry where
 * the data object's `t` was not there.
 */
import type { TimestampSource, ValueQuality } from '@scada/contracts';

/** ValueQuality from the IEC 61850 layer's quality JSON (`{validity, flags, source}`); null without one. */
export function qualityOf(q: unknown): ValueQuality | null {
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

/** The ISO time of a TimeStamp JSON (`{time, flags, accuracy}`); null without one. */
function timeOf(t: unknown): string | null {
  return typeof t === 'object' && t !== null && typeof (t as { time?: unknown }).time === 'string' ? (t as { time: string }).time : null;
}

/** A read value's device time: its data object's `t` from the same read, else none (a read has no TimeOfEntry). */
export function readTimestampOf(t: unknown): { timestamp: string | null; timestampSource: 'attribute' | null } {
  const own = timeOf(t);
  return own === null ? { timestamp: null, timestampSource: null } : { timestamp: own, timestampSource: 'attribute' };
}

/** A reported value's device time and where it comes from: its data object's `t`, else the report's TimeOfEntry, else none. */
export function timestampOf(t: unknown, timeOfEntry: string | undefined): { timestamp: string | null; timestampSource: TimestampSource } {
  const own = readTimestampOf(t);
  if (own.timestamp !== null || timeOfEntry === undefined) return own;
  return { timestamp: timeOfEntry, timestampSource: 'entry' };
}
