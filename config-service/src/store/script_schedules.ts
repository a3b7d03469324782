import type { Queryable } from '@scada/platform';

/*
 * Which scripts are scheduled and which replica holds each (migrations/0002_script_runtime.sql). A lease is
 * granted when nobody holds the script, when its holder's lease has expired, or to its holder again;
 * expiry is judged by the database clock, so replica clocks do not matter.
 */

/** A scheduled script as its holder sees it. */
export type ScheduleRow = {
  space: string;
  scriptId: string;
  scheduledAt: Date;
  /** The last due time a holder dealt with; null before the first. */
  lastDueAt: Date | null;
};

const ttl = (ms: number) => `now() + make_interval(secs => ${Number(ms) / 1000})`;

const toRow = (r: Record<string, unknown>): ScheduleRow => ({
  space: r.space as string,
  scriptId: String(r.script_id),
  scheduledAt: new Date(r.scheduled_at as string),
  lastDueAt: r.last_due_at ? new Date(r.last_due_at as string) : null,
});

/** Schedules a script (its counters start at zero); false when it is scheduled already. */
export async function schedule(db: Queryable, space: string, scriptId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'insert into config.script_schedules (space, script_id) values ($1, $2) on conflict (space, script_id) do nothing',
    [space, scriptId],
  );
  return rowCount === 1;
}

/** Unschedules a script; false when it was not scheduled. */
export async function unschedule(db: Queryable, space: string, scriptId: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from config.script_schedules where space = $1 and script_id = $2', [space, scriptId]);
  return rowCount === 1;
}

/** Which of the scripts are scheduled. */
export async function scheduledAmong(db: Queryable, space: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ script_id: string }>(
    'select script_id from config.script_schedules where space = $1 and script_id = any($2::uuid[])',
    [space, ids],
  );
  return new Set(rows.map((r) => String(r.script_id)));
}

/** The skip counters of a script, and whether it is scheduled. */
export async function scheduleCounters(
  db: Queryable,
  space: string,
  scriptId: string,
): Promise<{ scheduled: boolean; missed: number; overlapped: number }> {
  const { rows } = await db.query<{ missed: string; overlapped: string }>(
    'select missed, overlapped from config.script_schedules where space = $1 and script_id = $2',
    [space, scriptId],
  );
  const row = rows[0];
  return { scheduled: row !== undefined, missed: Number(row?.missed ?? 0), overlapped: Number(row?.overlapped ?? 0) };
}

/** Every scheduled script nobody holds now (or whose holder's lease expired). */
export async function unheldSchedules(db: Queryable): Promise<ScheduleRow[]> {
  const { rows } = await db.query(
    'select space, script_id, scheduled_at, last_due_at from config.script_schedules where owner is null or expires_at < now() order by scheduled_at',
  );
  return rows.map(toRow);
}

/**
 * How long until the first lease another replica holds expires (by the database clock), in milliseconds;
 * null when no other replica holds one.
 */
export async function msUntilLeaseExpiry(db: Queryable, owner: string): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | number | null }>(
    `select extract(epoch from min(expires_at) - now()) * 1000 as ms
       from config.script_schedules where owner is not null and owner <> $1 and expires_at >= now()`,
    [owner],
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
}

/** Takes the lease of a scheduled script for `owner`; the row as taken, or null when another replica holds it. */
export async function acquireSchedule(
  db: Queryable,
  space: string,
  scriptId: string,
  owner: string,
  ttlMs: number,
): Promise<ScheduleRow | null> {
  const { rows } = await db.query(
    `update config.script_schedules set owner = $3, expires_at = ${ttl(ttlMs)}
       where space = $1 and script_id = $2 and (owner is null or owner = $3 or expires_at < now())
     returning space, script_id, scheduled_at, last_due_at`,
    [space, scriptId, owner],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** Renews every lease `owner` holds; answers the scripts (`space/id`) it holds after the renewal. */
export async function renewSchedules(db: Queryable, owner: string, ttlMs: number): Promise<Set<string>> {
  const { rows } = await db.query<{ space: string; script_id: string }>(
    `update config.script_schedules set expires_at = ${ttl(ttlMs)} where owner = $1 and expires_at >= now() returning space, script_id`,
    [owner],
  );
  return new Set(rows.map((r) => `${r.space}/${r.script_id}`));
}

/** Gives a lease up (the replica is stopping), so another replica takes the script over at once. */
export async function releaseSchedules(db: Queryable, owner: string): Promise<void> {
  await db.query('update config.script_schedules set owner = null, expires_at = null where owner = $1', [owner]);
}

/** What a holder did with a script's due times since it last said so. */
export type DueRecord = { space: string; scriptId: string; lastDueAt: Date; missed: number; overlapped: number };

/**
 * Records, in one statement, what the holder did with due times: each script's last one it dealt with, and
 * the runs it skipped (missed: due while nobody held it or while this replica could not fire it;
 * overlapped: due while the previous run went on). Only for the scripts whose lease `owner` still holds.
 */
export async function recordDues(db: Queryable, owner: string, records: readonly DueRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `update config.script_schedules s
        set last_due_at = r.last_due_at, missed = s.missed + r.missed, overlapped = s.overlapped + r.overlapped
       from jsonb_to_recordset($2::jsonb) as r(space text, script_id uuid, last_due_at timestamptz, missed bigint, overlapped bigint)
      where s.space = r.space and s.script_id = r.script_id and s.owner = $1 and s.expires_at >= now()`,
    [
      owner,
      JSON.stringify(
        records.map((r) => ({
          space: r.space,
          script_id: r.scriptId,
          last_due_at: r.lastDueAt.toISOString(),
          missed: r.missed,
          overlapped: r.overlapped,
        })),
      ),
    ],
  );
}
