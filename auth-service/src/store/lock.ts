import type { Queryable } from '@scada/platform';

/** Seconds a name stays locked, or 0 when it is not locked. */
export async function lockedFor(db: Queryable, usernameKey: string): Promise<number> {
  const { rows } = await db.query<{ s: string | number | null }>(
    'select ceil(extract(epoch from (locked_until - now()))) as s from auth.login_failures where username_key = $1 and locked_until > now()',
    [usernameKey],
  );
  return rows[0] ? Math.max(1, Number(rows[0].s)) : 0;
}

/**
 * Counts one failure in a single atomic statement: concurrent failures on several replicas count
 * exactly. A lock that has run out starts the count again; failures during a lock are not counted.
 * Answers the seconds of the lock when this failure locked the name, else 0.
 */
export async function countFailure(db: Queryable, usernameKey: string, threshold: number, lockSeconds: number): Promise<number> {
  const { rows } = await db.query<{ failures: number; locked: boolean }>(
    `insert into auth.login_failures as f (username_key, failures, locked_until)
       values ($1, 1, case when 1 >= $2 then now() + make_interval(secs => $3) end)
     on conflict (username_key) do update set
       failures = case when f.locked_until is not null and f.locked_until <= now() then 1 else f.failures + 1 end,
       locked_until = case
         when f.locked_until is not null and f.locked_until > now() then f.locked_until
         when (case when f.locked_until is not null and f.locked_until <= now() then 1 else f.failures + 1 end) >= $2
           then now() + make_interval(secs => $3)
         else null end
     returning failures, (locked_until is not null and locked_until > now()) as locked`,
    [usernameKey, threshold, lockSeconds],
  );
  return rows[0]?.locked && rows[0].failures >= threshold ? lockSeconds : 0;
}

/** Forgets the failures of a name (a completed login, or an administrator's unlock). */
export async function clearFailures(db: Queryable, usernameKey: string): Promise<void> {
  await db.query('delete from auth.login_failures where username_key = $1', [usernameKey]);
}

/** Names locked now. */
export async function lockedNames(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ username_key: string }>('select username_key from auth.login_failures where locked_until > now() order by username_key');
  return rows.map((r) => r.username_key);
}
