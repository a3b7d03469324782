/**
 * When a scheduled script is due. Every schedule is a fixed sequence of instants that any replica computes
 * alike (a grid from the epoch, or a time of day in the zone), so a replica that takes a script over
 * continues the sequence where the last holder left it, and counts what fell in between.
 */

/** The schedule fields of a script. */
export type ScheduleSpec = {
  type: 'Periodic' | 'Daily' | 'Once' | 'None';
  period?: number | null;
  delay?: number | null;
  offset?: number | null;
  time?: string | null;
};

/** A schedule ready to compute: due instants after a given one. */
export type Schedule = {
  /** The first due instant strictly after `after` (ms since the epoch), or null when there is none. */
  next(after: number): number | null;
  /** How many due instants lie in (from, to]. */
  count(from: number, to: number): number;
};

const day = 86_400_000;
/** Days looked at, at most, when counting the due times of a Daily script. */
const maxDays = 3660;

/** Why a script cannot be scheduled as it is, or null when it can. */
export function scheduleProblem(spec: ScheduleSpec, now: number): string | null {
  if (spec.type === 'None') return 'a script of type None runs only by hand';
  if (spec.type === 'Periodic' && !(typeof spec.period === 'number' && spec.period >= 100))
    return 'a Periodic script needs a period of at least 100 ms';
  if ((spec.type === 'Daily' || spec.type === 'Once') && !spec.time) return `a ${spec.type} script needs a time`;
  if (spec.type === 'Once' && Date.parse(spec.time!) <= now) return `the time of this Once script (${spec.time}) has passed`;
  return null;
}

/** The schedule of a script scheduled at `scheduledAt`, in `zone` (for Daily); null for None or an incomplete one. */
export function scheduleOf(spec: ScheduleSpec, scheduledAt: number, zone: string): Schedule | null {
  if (spec.type === 'Periodic' && typeof spec.period === 'number' && spec.period >= 100) {
    return periodic(spec.period, spec.offset ?? 0, scheduledAt + (spec.delay ?? 0));
  }
  if (spec.type === 'Once' && spec.time) return once(Date.parse(spec.time));
  if (spec.type === 'Daily' && spec.time) return daily(new Date(spec.time), zone);
  return null;
}

/** Every `period` ms from the epoch shifted by `offset`, from `start` on. */
function periodic(period: number, offset: number, start: number): Schedule {
  const phase = ((offset % period) + period) % period;
  /** The first grid instant at or after `t`. */
  const atOrAfter = (t: number) => phase + Math.ceil((t - phase) / period) * period;
  return {
    next: (after) => atOrAfter(Math.max(start, after + 1)),
    count: (from, to) => {
      const first = atOrAfter(Math.max(start, from + 1));
      return to < first ? 0 : Math.floor((to - first) / period) + 1;
    },
  };
}

function once(at: number): Schedule {
  return {
    next: (after) => (at > after ? at : null),
    count: (from, to) => (at > from && at <= to ? 1 : 0),
  };
}

/** The wall-clock fields of an instant in a zone. */
function fieldsIn(t: number, zone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number; ms: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(t));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return {
    y: get('year'),
    mo: get('month'),
    d: get('day'),
    h: get('hour'),
    mi: get('minute'),
    s: get('second'),
    ms: new Date(t).getUTCMilliseconds(),
  };
}

/** The instant a wall-clock time in a zone stands for (the earlier one in a repeated hour, the later one in a skipped hour). */
function instantIn(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, zone: string): number {
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  let t = wall;
  // Two corrections by the zone's offset at the guess find the instant, daylight saving included.
  for (let i = 0; i < 2; i++) {
    const f = fieldsIn(t, zone);
    t += wall - Date.UTC(f.y, f.mo - 1, f.d, f.h, f.mi, f.s, f.ms);
  }
  return t;
}

/** Every day at the time of day `time` shows in `zone`. */
function daily(time: Date, zone: string): Schedule {
  const at = fieldsIn(time.getTime(), zone);
  /** The due instant on the local date of `t`. */
  const onDateOf = (t: number) => {
    const f = fieldsIn(t, zone);
    return instantIn(f.y, f.mo, f.d, at.h, at.mi, at.s, at.ms, zone);
  };
  const next = (after: number) => {
    for (let probe = after - day; probe <= after + 2 * day; probe += day / 2) {
      const due = onDateOf(probe);
      if (due > after) return due;
    }
    return null;
  };
  return {
    next,
    count: (from, to) => {
      let n = 0;
      for (let due = next(from); due !== null && due <= to && n < maxDays; due = next(due)) n++;
      return n;
    },
  };
}
