/**
 * Holds this replica's share of the scheduled scripts and fires each when it is due, as the protocol
 * service's supervisor holds connections: every tick it renews its leases (a script whose lease was lost is
 * dropped at once) and takes the lease of every scheduled script nobody holds. A lease not renewed for a
 * whole lease time is taken over by another replica; before that can happen this replica stops firing
 * (its last renewal older than the safety margin), and each firing is first recorded in the store under
 * the lease, so a script fires on one replica at a time.
 *
 * Skipped runs are counted, never made up: due times that passed while nobody held a script (counted by
 * the replica that takes it over) or while this replica could not fire it are `missed`; a due time that
 * comes while the previous run still goes is `overlapped`.
 */
import type { Logger } from 'pino';
import type { Store } from '@scada/platform';
import {
  acquireSchedule,
  recordDue,
  releaseSchedules,
  renewSchedules,
  unheldSchedules,
  unschedule,
  type ScheduleRow,
} from '../store/script_schedules.ts';
import { scheduleOf, type Schedule, type ScheduleSpec } from './schedule_times.ts';

/** A scheduled script as the scheduler needs it: its schedule fields and whatever the runner needs. */
export type ScheduledScript = ScheduleSpec & { space: string; id: string };

export type SchedulerOptions<S extends ScheduledScript> = {
  store: Store;
  log: Logger;
  /** This replica's instance id: the owner name on its leases. */
  owner: string;
  /** How long a lease lasts unrenewed. */
  leaseMs: number;
  /** How often leases are renewed and unheld scripts looked for (default: a fifth of the lease, at most 2 s). */
  tickMs?: number;
  timeZone: string;
  /** The script as it is now; null when it is gone. */
  load(space: string, id: string): Promise<S | null>;
  /** Runs the script; the scheduler waits for it before the script's next run can start. */
  fire(script: S): Promise<void>;
  /** Called when this replica takes a script: the runs are coming (the pool starts its workers). */
  onTake?(): void;
};

export type Scheduler = {
  /** Runs a tick now (after a schedule), resolving when it is done. */
  kick(): Promise<void>;
  /** Stops firing, waits for the runs under way, and gives every lease up so another replica takes over at once. */
  stop(): Promise<void>;
  /** Stops firing and holding without giving the leases up, as a replica that dies would (tests). */
  abandon(): void;
};

type Held = { row: ScheduleRow; lastDue: number; timer: NodeJS.Timeout | null; running: Promise<void> | null; dropped: boolean };

const key = (space: string, id: string) => `${space}/${id}`;
/** The longest a timer is set for; a due time further away is approached in steps (Node's timers stop at 24.8 days). */
const maxTimerMs = 3_600_000;

export function startScheduler<S extends ScheduledScript>(options: SchedulerOptions<S>): Scheduler {
  const { store, owner, leaseMs } = options;
  const tickMs = options.tickMs ?? Math.min(2000, Math.floor(leaseMs / 5));
  const log = options.log.child({ part: 'scheduler' });
  const held = new Map<string, Held>();
  let lastRenewal = Date.now();
  let stopped = false;
  let ticking: Promise<void> | null = null;

  const drop = (k: string) => {
    const h = held.get(k);
    if (!h) return;
    h.dropped = true;
    if (h.timer) clearTimeout(h.timer);
    held.delete(k);
  };

  /** Whether this replica may still fire: its leases surely have not expired. */
  const mayFire = () => !stopped && Date.now() - lastRenewal < leaseMs * 0.7;

  const scheduleOfScript = (script: S, h: Held): Schedule | null => scheduleOf(script, h.row.scheduledAt.getTime(), options.timeZone);

  /** Sets the timer for the script's next due time after `after`. */
  const arm = (h: Held, schedule: Schedule | null, after: number) => {
    if (h.dropped) return;
    const due = schedule?.next(after) ?? null;
    if (due === null) return;
    const wait = due - Date.now();
    h.timer = setTimeout(() => (wait > maxTimerMs ? arm(h, schedule, after) : void due_(h, due)), Math.min(Math.max(0, wait), maxTimerMs));
  };

  /** A due time came: skip it (counted) or fire, then arm the next. */
  const due_ = async (h: Held, dueAt: number) => {
    h.timer = null;
    const k = key(h.row.space, h.row.scriptId);
    try {
      if (!mayFire()) return drop(k);
      const script = await options.load(h.row.space, h.row.scriptId);
      if (!script) return drop(k);
      const schedule = scheduleOfScript(script, h);
      const missed = Math.max(0, (schedule?.count(h.lastDue, dueAt) ?? 1) - 1);
      const overlapped = h.running ? 1 : 0;
      if (!(await recordDue(store, { space: h.row.space, scriptId: h.row.scriptId, owner }, new Date(dueAt), { missed, overlapped })))
        return drop(k);
      h.lastDue = dueAt;
      if (!h.running) {
        const run = options.fire(script).catch((err: unknown) => log.error({ err, script: k }, 'a scheduled run failed'));
        h.running = run.finally(() => (h.running = null));
      }
      if (script.type === 'Once') {
        drop(k);
        await unschedule(store, h.row.space, h.row.scriptId);
        return;
      }
      // Due times that pass while this one is handled are counted missed at the next.
      arm(h, schedule, Math.max(dueAt, Date.now() - 1));
    } catch (err) {
      log.warn({ err, script: k }, 'a due time could not be handled; trying again at the next tick');
      drop(k);
    }
  };

  /** Takes a script over: counts what fell due since its last holder dealt with it, then arms it. */
  const take = async (row: ScheduleRow) => {
    const k = key(row.space, row.scriptId);
    const now = Date.now();
    const h: Held = { row, lastDue: row.lastDueAt?.getTime() ?? now, timer: null, running: null, dropped: false };
    held.set(k, h);
    options.onTake?.();
    const script = await options.load(row.space, row.scriptId);
    if (!script) return drop(k);
    const schedule = scheduleOfScript(script, h);
    const missed = row.lastDueAt ? (schedule?.count(h.lastDue, now) ?? 0) : 0;
    if (missed > 0) {
      if (!(await recordDue(store, { space: row.space, scriptId: row.scriptId, owner }, new Date(now), { missed, overlapped: 0 })))
        return drop(k);
      log.info({ script: k, missed }, 'took a scheduled script over; the runs due meanwhile are skipped');
      h.lastDue = now;
    }
    if (script.type === 'Once' && !schedule?.next(h.lastDue)) {
      drop(k);
      await unschedule(store, row.space, row.scriptId);
      return;
    }
    arm(h, schedule, h.lastDue);
  };

  const tick = async () => {
    try {
      const renewed = await renewSchedules(store, owner, leaseMs);
      lastRenewal = Date.now();
      for (const k of [...held.keys()]) if (!renewed.has(k)) drop(k);
      if (stopped) return;
      for (const row of await unheldSchedules(store)) {
        if (stopped || held.has(key(row.space, row.scriptId))) continue;
        const taken = await acquireSchedule(store, row.space, row.scriptId, owner, leaseMs);
        if (taken) await take(taken);
      }
    } catch (err) {
      // The store is away: hold on only while the leases surely have not expired (mayFire says so at each due time).
      if (!mayFire() && held.size > 0) {
        log.warn({ err }, 'leases of scheduled scripts could not be renewed in time; firing none');
        for (const k of [...held.keys()]) drop(k);
      } else log.debug({ err }, 'scheduler tick failed');
    }
  };

  const run = () => {
    ticking ??= tick().finally(() => (ticking = null));
    return ticking;
  };
  const timer = setInterval(() => void run(), tickMs);
  timer.unref();
  void run();

  const halt = () => {
    stopped = true;
    clearInterval(timer);
    const running = [...held.values()].map((h) => h.running);
    for (const k of [...held.keys()]) drop(k);
    return running;
  };

  return {
    kick: async () => {
      await ticking;
      await run();
    },
    stop: async () => {
      const running = halt();
      await ticking;
      await Promise.all(running);
      await releaseSchedules(store, owner).catch((err: unknown) => log.warn({ err }, 'leases of scheduled scripts were not given up'));
    },
    abandon: () => void halt(),
  };
}
