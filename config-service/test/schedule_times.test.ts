/**
 * When scheduled scripts are due: the periodic grid with its offset and first delay, a daily time of day
 * in a zone (daylight saving included), a single time, the counts of due times a replica skips, and what
 * cannot be scheduled.
 */
import t from 'tap';
import { scheduleOf, scheduleProblem } from '../src/scripts/schedule_times.ts';

const at = (iso: string) => Date.parse(iso);

t.test('Periodic: a grid of period ms from the epoch, shifted by offset, from the scheduling plus delay', async (t) => {
  const scheduledAt = at('2026-03-01T10:00:00.050Z');
  const s = scheduleOf({ type: 'Periodic', period: 1000, offset: 250, delay: 2000 }, scheduledAt, 'UTC')!;
  t.equal(
    new Date(s.next(scheduledAt)!).toISOString(),
    '2026-03-01T10:00:02.250Z',
    'the first at least delay after scheduling, on the grid',
  );
  t.equal(new Date(s.next(at('2026-03-01T10:00:02.250Z'))!).toISOString(), '2026-03-01T10:00:03.250Z', 'then every period');
  t.equal(s.count(at('2026-03-01T10:00:02.250Z'), at('2026-03-01T10:00:12.250Z')), 10, 'ten due in ten seconds');
  t.equal(s.count(scheduledAt, at('2026-03-01T10:00:02Z')), 0, 'none before the delay');
  const other = scheduleOf({ type: 'Periodic', period: 1000, offset: 250 }, at('2026-03-01T10:00:07.900Z'), 'UTC')!;
  t.equal(other.next(at('2026-03-01T10:00:07.900Z'))! % 1000, 250, 'any replica computes the same grid');
  t.equal(scheduleOf({ type: 'Periodic', period: 50 }, 0, 'UTC'), null, 'no period under 100 ms');
});

t.test('Daily: the time of day of `time`, in the zone, every day', async (t) => {
  const utc = scheduleOf({ type: 'Daily', time: '2020-01-01T06:30:00Z' }, 0, 'UTC')!;
  t.equal(new Date(utc.next(at('2026-03-01T07:00:00Z'))!).toISOString(), '2026-03-02T06:30:00.000Z');
  t.equal(new Date(utc.next(at('2026-03-01T06:00:00Z'))!).toISOString(), '2026-03-01T06:30:00.000Z');
  t.equal(utc.count(at('2026-03-01T00:00:00Z'), at('2026-03-08T00:00:00Z')), 7, 'seven in a week');
  // 06:30 in Berlin is 05:30 UTC in winter and 04:30 UTC in summer (clocks go forward on 2026-03-29).
  const berlin = scheduleOf({ type: 'Daily', time: '2020-01-01T05:30:00Z' }, 0, 'Europe/Berlin')!;
  t.equal(new Date(berlin.next(at('2026-03-28T00:00:00Z'))!).toISOString(), '2026-03-28T05:30:00.000Z', 'in winter');
  t.equal(
    new Date(berlin.next(at('2026-03-28T06:00:00Z'))!).toISOString(),
    '2026-03-29T04:30:00.000Z',
    'after the change, the same wall-clock time',
  );
});

t.test('Once: at its time, and never again', async (t) => {
  const once = scheduleOf({ type: 'Once', time: '2030-01-01T00:00:00Z' }, 0, 'UTC')!;
  t.equal(once.next(at('2029-12-31T00:00:00Z')), at('2030-01-01T00:00:00Z'));
  t.equal(once.next(at('2030-01-01T00:00:00Z')), null);
  t.equal(once.count(at('2029-01-01T00:00:00Z'), at('2031-01-01T00:00:00Z')), 1);
});

t.test('what cannot be scheduled says why', async (t) => {
  const now = at('2026-03-01T00:00:00Z');
  t.match(scheduleProblem({ type: 'None' }, now), /only by hand/);
  t.match(scheduleProblem({ type: 'Periodic', period: null }, now), /period of at least 100/);
  t.match(scheduleProblem({ type: 'Daily', time: null }, now), /needs a time/);
  t.match(scheduleProblem({ type: 'Once', time: '2025-01-01T00:00:00Z' }, now), /has passed/);
  t.equal(scheduleProblem({ type: 'Periodic', period: 100 }, now), null);
});
