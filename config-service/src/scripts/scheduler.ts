/**
 * Holds this replica's share of the scheduled scripts and fires each when it is due, as the protocol
 * service's supervisor holds connections: every tick it renews its leases (a script whose lease was lost is
 * dropped at once), reads its scripts again, and takes the lease of every scheduled script nobody holds.
 * A lease not renewed for a whole lease time is taken over by another replica; before that can happen
 * this replica stops firing (its last renewal older than the safety margin), so a script fires on one
 * replica at a time. Between ticks it hears of changes at once (`changed`, `unscheduled`): the service
 * passes on its scripts' events, so a new schedule, code or unscheduling takes effect at the next run.
 *
 * Skipped runs are counted, never made up: due times that passed while nobody held a script (counted by
 * the replica that takes it over) or while this replica could not fire it are `missed`; a due time that
 * comes while the previous run still goes is `overlapped`. What was due is written to the store in one
 * statement at most every 250 ms, not per run.
 */
import type { Logger } from 'pino';
import type { Store } from '@scada/platform';
import {
  acquireSchedule,
  recordDues,
  msUntilLeaseExpiry,
  releaseSchedules,
  renewSchedules,
  unheldSchedules,
  unschedule,
  type DueRecord,
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
  /** The scripts of a space as they are now, by id (those gone are left out). */
  load(space: string, ids: string[]): Promise<Map<string, S>>;
  /** Runs the script; the scheduler waits for it before the script's next run can start. */
  fire(script: S): Promise<void>;
  /** Called when this replica takes a script: the runs are coming (the pool starts its workers). */
  onTake?(): void;
  /** Called when this replica stops holding a script. */
  onDrop?(space: string, id: string): void;
};

export type Scheduler = {
  /** Runs a tick now (after a schedule), resolving when it is done. */
  kick(): Promise<void>;
  /** A script changed (code, schedule) or was deleted: read it again now if this replica holds it. */
  changed(space: string, id: string): Promise<void>;
  /** A script was unscheduled: fire it no more. */
  unscheduled(space: string, id: string): void;
  /** Stops firing, waits for the runs under way, and gives every lease up so another replica takes over at once. */
  stop(): Promise<void>;
  /**
   * Stops firing and holding without giving the leases up, as a replica that dies would (tests); settles
   * once a renewal already sent has landed or failed, as one sent by a dying replica may still land.
   */
  abandon(): Promise<void>;
};

type Held<S> = {
  row: ScheduleRow;
  script: S;
  schedule: Schedule | null;
  lastDue: number;
  /** Skips not written yet, and whether `lastDue` was. */
  missed: number;
  overlapped: number;
  dirty: boolean;
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
  dropped: boolean;
};

const key = (space: string, id: string) => `${space}/${id}`;
/** The longest a timer is set for; a due time further away is approached in steps (Node's timers stop at 24.8 days). */
const maxTimerMs = 3_600_000;
/** How often what was due is written to the store. */
const recordMs = 250;

export function startScheduler<S extends ScheduledScript>(options: SchedulerOptions<S>): Scheduler {
  const { store, owner, leaseMs } = options;
  const tickMs = options.tickMs ?? Math.min(2000, Math.floor(leaseMs / 5));
  const log = options.log.child({ part: 'scheduler' });
  const held = new Map<string, Held<S>>();
  let lastRenewal = Date.now();
  let stopped = false;
  let ticking: Promise<void> | null = null;
  let expiryTimer: NodeJS.Timeout | null = null;
  let recording: Promise<void> = Promise.resolve();

  const drop = (k: string) => {
    const h = held.get(k);
    if (!h) return;
    h.dropped = true;
    if (h.timer) clearTimeout(h.timer);
    held.delete(k);
    options.onDrop?.(h.row.space, h.row.scriptId);
  };

  /** Whether this replica may still fire: its leases surely have not expired. */
  const mayFire = () => !stopped && Date.now() - lastRenewal < leaseMs * 0.7;

  /** Sets the timer for the script's next due time after `after`. */
  const arm = (h: Held<S>, after: number) => {
    if (h.timer) clearTimeout(h.timer);
    h.timer = null;
    if (h.dropped) return;
    const due = h.schedule?.next(after) ?? null;
    if (due === null) return;
    const wait = due - Date.now();
    h.timer = setTimeout(() => (wait > maxTimerMs ? arm(h, after) : onDue(h, due)), Math.min(Math.max(0, wait), maxTimerMs));
  };

  /** A due time came: skip it (counted) or fire, then arm the next. */
  const onDue = (h: Held<S>, dueAt: number) => {
    h.timer = null;
    const k = key(h.row.space, h.row.scriptId);
    if (!mayFire()) return drop(k);
    // Due times passed over (this replica was too busy to fire them) are missed; one still running makes this one skip.
    h.missed += Math.max(0, (h.schedule?.count(h.lastDue, dueAt) ?? 1) - 1);
    h.lastDue = dueAt;
    h.dirty = true;
    if (h.running) h.overlapped++;
    else {
      const run = options.fire(h.script).catch((err: unknown) => log.error({ err, script: k }, 'a scheduled run failed'));
      h.running = run.finally(() => (h.running = null));
    }
    if (h.script.type === 'Once') {
      drop(k);
      void unschedule(store, h.row.space, h.row.scriptId).catch((err: unknown) =>
        log.warn({ err, script: k }, 'a Once script stays scheduled'),
      );
      return;
    }
    // Due times that pass while this one is handled are counted missed at the next.
    arm(h, Math.max(dueAt, Date.now() - 1));
  };

  /** Writes what was due since the last write, for every held script. */
  const record = () => {
    const records: DueRecord[] = [];
    for (const h of held.values()) {
      if (!h.dirty) continue;
      records.push({
        space: h.row.space,
        scriptId: h.row.scriptId,
        lastDueAt: new Date(h.lastDue),
        missed: h.missed,
        overlapped: h.overlapped,
      });
      h.missed = 0;
      h.overlapped = 0;
      h.dirty = false;
    }
    recording = recording.then(() =>
      recordDues(store, owner, records).catch((err: unknown) => log.warn({ err }, 'what was due of scheduled scripts was not recorded')),
    );
    return recording;
  };

  /** Takes a script over: counts what fell due since its last holder dealt with it, then arms it. */
  const take = (row: ScheduleRow, script: S) => {
    const now = Date.now();
    const schedule = scheduleOf(script, row.scheduledAt.getTime(), options.timeZone);
    const lastDue = row.lastDueAt?.getTime() ?? now;
    const missed = row.lastDueAt ? (schedule?.count(lastDue, now) ?? 0) : 0;
    const h: Held<S> = {
      row,
      script,
      schedule,
      lastDue: missed > 0 ? now : lastDue,
      missed,
      overlapped: 0,
      dirty: missed > 0,
      timer: null,
      running: null,
      dropped: false,
    };
    held.set(key(row.space, row.scriptId), h);
    options.onTake?.();
    if (missed > 0)
      log.info({ script: key(row.space, row.scriptId), missed }, 'took a scheduled script over; the runs due meanwhile are skipped');
    if (script.type === 'Once' && !schedule?.next(h.lastDue)) {
      drop(key(row.space, row.scriptId));
      void unschedule(store, row.space, row.scriptId);
      return;
    }
    arm(h, h.lastDue);
  };

  /** Reads the held scripts of a space again; a changed schedule is armed anew, a script gone is dropped. */
  const reread = async (space: string, ids: string[]) => {
    const found = await options.load(space, ids);
    for (const id of ids) {
      const h = held.get(key(space, id));
      if (!h) continue;
      const script = found.get(id);
      if (!script) {
        drop(key(space, id));
        continue;
      }
      const before = JSON.stringify([h.script.type, h.script.period, h.script.delay, h.script.offset, h.script.time]);
      h.script = script;
      if (before === JSON.stringify([script.type, script.period, script.delay, script.offset, script.time])) continue;
      h.schedule = scheduleOf(script, h.row.scheduledAt.getTime(), options.timeZone);
      arm(h, Math.max(h.lastDue, Date.now() - 1));
    }
  };

  const tick = async () => {
    try {
      const renewed = await renewSchedules(store, owner, leaseMs);
      lastRenewal = Date.now();
      for (const k of [...held.keys()]) if (!renewed.has(k)) drop(k);
      if (stopped) return;
      const bySpace = new Map<string, string[]>();
      for (const h of held.values()) bySpace.set(h.row.space, [...(bySpace.get(h.row.space) ?? []), h.row.scriptId]);
      for (const [space, ids] of bySpace) await reread(space, ids);
      for (const row of await unheldSchedules(store)) {
        if (stopped || held.has(key(row.space, row.scriptId))) continue;
        const script = (await options.load(row.space, [row.scriptId])).get(row.scriptId);
        if (!script) continue;
        const taken = await acquireSchedule(store, row.space, row.scriptId, owner, leaseMs);
        if (taken) take(taken, script);
      }
      // The next lease of another replica to run out is looked at as it runs out, whenever that is: a dead
      // holder's scripts are taken over a lease time after its last renewal. Waiting for a tick instead
      // (only the leases that end before the next one had a timer) added up to a tick, and more when a
      // busy machine made a tick take longer than its interval, so that the interval skipped a beat.
      const expiry = stopped ? null : await msUntilLeaseExpiry(store, owner);
      if (expiryTimer) clearTimeout(expiryTimer);
      expiryTimer = null;
      if (expiry !== null && !stopped) {
        expiryTimer = setTimeout(async () => {
          expiryTimer = null;
          await ticking;
          if (!stopped) await run();
        }, expiry + 20);
        expiryTimer.unref();
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
  const ticker = setInterval(() => void run(), tickMs);
  ticker.unref();
  const recorder = setInterval(() => void record(), recordMs);
  recorder.unref();
  void run();

  const halt = () => {
    stopped = true;
    clearInterval(ticker);
    clearInterval(recorder);
    if (expiryTimer) clearTimeout(expiryTimer);
    const running = [...held.values()].map((h) => h.running);
    for (const h of held.values()) if (h.timer) clearTimeout(h.timer);
    return running;
  };

  return {
    kick: async () => {
      await ticking;
      await run();
    },
    changed: async (space, id) => {
      if (held.has(key(space, id))) await reread(space, [id]).catch((err: unknown) => log.debug({ err }, 'a changed script was not read'));
    },
    unscheduled: (space, id) => drop(key(space, id)),
    stop: async () => {
      const running = halt();
      await ticking;
      await Promise.all(running);
      await record();
      for (const k of [...held.keys()]) drop(k);
      await releaseSchedules(store, owner).catch((err: unknown) => log.warn({ err }, 'leases of scheduled scripts were not given up'));
    },
    abandon: async () => {
      halt();
      for (const k of [...held.keys()]) drop(k);
      await ticking;
    },
  };
}
