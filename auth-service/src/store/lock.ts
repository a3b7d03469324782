import type { Queryable } from '@scada/platform';

/*
 * The account lock as places: a check of a password or code first takes a place (one atomic statement,
 * so every replica sees the same count), then settles it as a failure, a success, or neither. Failures
 * and places held add up to at most the threshold, so however many attempts arrive at once, at most
 * `threshold` failed checks are ever evaluated before the lock.
 */

/** Seconds a name stays locked, or 0 when it is not locked. */
export async function lockedFor(db: Queryable, usernameKey: string): Promise<number> {
  const { rows } = await db.query<{ s: string | number | null }>(
    'select ceil(extract(epoch from (locked_until - now()))) as s from auth.login_failures where username_key = $1 and locked_until > now()',
    [usernameKey],
  );
  return rows[0] ? Math.max(1, Number(rows[0].s)) : 0;
}

/**
 * Takes a place for one check of a name: true when there is one. A lock that has run out starts the count
 * again; while locked, or while failures and checks in flight fill the threshold, there is none. A place
 * not settled within `holdSeconds` (its replica died) is given back by itself.
 */
export async function takePlace(db: Queryable, usernameKey: string, threshold: number, holdSeconds: number): Promise<boolean> {
  const { rows } = await db.query(
    `insert into auth.login_failures as f (username_key, failures, pending, pending_until)
       values ($1, 0, 1, now() + make_interval(secs => $3))
     on conflict (username_key) do update set
       failures = case when f.locked_until <= now() then 0 else f.failures end,
       locked_until = case when f.locked_until <= now() then null else f.locked_until end,
       pending = (case when f.pending_until > now() then f.pending else 0 end) + 1,
       pending_until = now() + make_interval(secs => $3)
     where not coalesce(f.locked_until > now(), false)
       and (case when f.locked_until <= now() then 0 else f.failures end)
         + (case when f.pending_until > now() then f.pending else 0 end) < $2
     returning 1`,
    [usernameKey, threshold, holdSeconds],
  );
  return rows.length > 0;
}

/**
 * Settles a place as a failure: the `threshold`-th failure locks the name for `lockSeconds`. Failures
 * during a lock do not extend it. Answers the seconds of the lock when the name is locked now, else 0.
 */
export async function settleFailure(db: Queryable, usernameKey: string, threshold: number, lockSeconds: number): Promise<number> {
  const { rows } = await db.query<{ locked: boolean }>(
    `insert into auth.login_failures as f (username_key, failures, pending, locked_until)
       values ($1, 1, 0, case when 1 >= $2 then now() + make_interval(secs => $3) end)
     on conflict (username_key) do update set
       failures = case when f.locked_until <= now() then 1 else f.failures + 1 end,
       pending = greatest(f.pending - 1, 0),
       locked_until = case
         when f.locked_until > now() then f.locked_until
         when (case when f.locked_until <= now() then 1 else f.failures + 1 end) >= $2 then now() + make_interval(secs => $3)
         else null end
     returning coalesce(locked_until > now(), false) as locked`,
    [usernameKey, threshold, lockSeconds],
  );
  return rows[0]?.locked ? lockSeconds : 0;
}

/** Settles a place as a completed sign-in: the count starts again. */
export async function settleSuccess(db: Queryable, usernameKey: string): Promise<void> {
  await db.query(
    'update auth.login_failures set failures = 0, locked_until = null, pending = greatest(pending - 1, 0) where username_key = $1',
    [usernameKey],
  );
}

/** Gives a place back without counting it (a right password that leads to the OTP step, a dropped check). */
export async function releasePlace(db: Queryable, usernameKey: string): Promise<void> {
  await db.query('update auth.login_failures set pending = greatest(pending - 1, 0) where username_key = $1', [usernameKey]);
}

/** Forgets the failures and the lock of a name (an administrator's unlock); checks in flight keep their places. */
export async function clearFailures(db: Queryable, usernameKey: string): Promise<void> {
  await db.query('update auth.login_failures set failures = 0, locked_until = null where username_key = $1', [usernameKey]);
}

/** Names locked now. */
export async function lockedNames(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ username_key: string }>(
    'select username_key from auth.login_failures where locked_until > now() order by username_key',
  );
  return rows.map((r) => r.username_key);
}
