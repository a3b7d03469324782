/**
 * Whether an alarm's condition holds for a value: a boolean's state, an analog value against its limits
 * (with a deadband: an alarm that holds clears only once the value is back inside a limit by the deadband,
 * so a value wandering around a limit does not chatter), or the value's quality. Stale alarms are a matter
 * of time, not of a value (`staleNow`).
 */
import type { EvaluatedAlarm, ValueQuality } from '@scada/contracts';

/** A value of the watched attribute, as it arrived. */
export type Sample = { value: unknown; quality: ValueQuality | null };

/** Whether the condition holds for `sample`, given whether it held before; null when the value says nothing (not a number, …). */
export function conditionOf(def: EvaluatedAlarm, sample: Sample, wasActive: boolean): boolean | null {
  switch (def.type) {
    case 'state': {
      const v = sample.value;
      const on = typeof v === 'boolean' ? v : typeof v === 'number' ? v !== 0 : null;
      return on === null ? null : on === def.alarmWhen;
    }
    case 'analog': {
      const v = typeof sample.value === 'number' ? sample.value : Number.NaN;
      if (!Number.isFinite(v)) return null;
      const band = wasActive ? (def.deadband ?? 0) : 0;
      const high = lowest(def.h, def.hh);
      const low = highest(def.l, def.ll);
      return (high !== null && v >= high - band) || (low !== null && v <= low + band);
    }
    case 'quality':
      return sample.quality !== null && sample.quality.validity !== 'good';
    default:
      return null;
  }
}

/** Whether a stale alarm holds at `now`: no value arrived for `staleSeconds` since `lastValueAt` (none yet: it does not). */
export function staleNow(def: EvaluatedAlarm, lastValueAt: Date | null, now: Date): boolean {
  if (def.type !== 'stale' || lastValueAt === null) return false;
  return now.getTime() - lastValueAt.getTime() >= (def.staleSeconds ?? 0) * 1000;
}

function lowest(...xs: (number | undefined)[]): number | null {
  const given = xs.filter((x): x is number => typeof x === 'number');
  return given.length ? Math.min(...given) : null;
}

function highest(...xs: (number | undefined)[]): number | null {
  const given = xs.filter((x): x is number => typeof x === 'number');
  return given.length ? Math.max(...given) : null;
}
