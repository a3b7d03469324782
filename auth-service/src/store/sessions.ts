import type { Queryable } from '@scada/platform';
import type { PairClaims } from '../domain/tokens.ts';

/** A session family row. */
export type SessionRow = { sid: string; userId: string; revoked: boolean; expires: number; current: PairClaims };

function toSession(r: Record<string, unknown>, name: string): SessionRow {
  return {
    sid: r.sid as string,
    userId: r.user_id as string,
    revoked: r.revoked_at !== null,
    expires: Number(r.current_refresh_exp),
    current: {
      sub: r.user_id as string,
      sid: r.sid as string,
      name,
      iat: Number(r.current_iat),
      accessJti: r.current_access_jti as string,
      accessExp: Number(r.current_access_exp),
      refreshJti: r.current_refresh_jti as string,
      refreshExp: Number(r.current_refresh_exp),
    },
  };
}

/** Opens a session family with its first pair. */
export async function openSession(db: Queryable, claims: PairClaims): Promise<void> {
  await db.query(
    `insert into auth.sessions (sid, user_id, expires, current_access_jti, current_refresh_jti, current_iat, current_access_exp, current_refresh_exp)
     values ($1, $2, to_timestamp($6::bigint), $3, $4, $5::bigint, $7::bigint, $6::bigint)`,
    [claims.sid, claims.sub, claims.accessJti, claims.refreshJti, claims.iat, claims.refreshExp, claims.accessExp],
  );
  await db.query('insert into auth.refresh_tokens (jti, sid, expires) values ($1, $2, to_timestamp($3::bigint))', [
    claims.refreshJti,
    claims.sid,
    claims.refreshExp,
  ]);
}

/** Makes a new pair the family's current one and records its refresh token. */
export async function rotateSession(db: Queryable, claims: PairClaims): Promise<void> {
  await db.query(
    `update auth.sessions set current_access_jti = $2, current_refresh_jti = $3, current_iat = $4::bigint, current_access_exp = $5::bigint,
       current_refresh_exp = $6::bigint, expires = to_timestamp($6::bigint) where sid = $1`,
    [claims.sid, claims.accessJti, claims.refreshJti, claims.iat, claims.accessExp, claims.refreshExp],
  );
  await db.query('insert into auth.refresh_tokens (jti, sid, expires) values ($1, $2, to_timestamp($3::bigint))', [
    claims.refreshJti,
    claims.sid,
    claims.refreshExp,
  ]);
}

/** The session of a refresh token, locked for the rotation, with the token's use time (null if unused). */
export async function lockRefreshToken(
  db: Queryable,
  jti: string,
  sid: string,
): Promise<{ session: SessionRow; usedAt: Date | null } | null> {
  const { rows } = await db.query(
    `select s.*, u.username, t.used_at from auth.refresh_tokens t join auth.sessions s on s.sid = t.sid join auth.users u on u.id = s.user_id
     where t.jti = $1 and t.sid = $2 for update of t, s`,
    [jti, sid],
  );
  const r = rows[0];
  return r ? { session: toSession(r, r.username as string), usedAt: (r.used_at as Date | null) ?? null } : null;
}

/** Marks a refresh token used. */
export async function markUsed(db: Queryable, jti: string): Promise<void> {
  await db.query('update auth.refresh_tokens set used_at = now() where jti = $1', [jti]);
}

/** Revokes a family; answers when its last token expires (epoch seconds), or null when it was unknown. */
export async function revokeSession(db: Queryable, sid: string): Promise<number | null> {
  const { rows } = await db.query<{ until: string | number }>(
    'update auth.sessions set revoked_at = coalesce(revoked_at, now()) where sid = $1 returning current_refresh_exp as until',
    [sid],
  );
  return rows[0] ? Number(rows[0].until) : null;
}

/** Revokes every live family of a user; answers them. */
export async function revokeUserSessions(
  db: Queryable,
  userId: string,
  keepSid: string | null = null,
): Promise<{ sid: string; until: number }[]> {
  const { rows } = await db.query<{ sid: string; until: string | number }>(
    'update auth.sessions set revoked_at = now() where user_id = $1 and revoked_at is null and expires > now() and sid is distinct from $2 returning sid, current_refresh_exp as until',
    [userId, keepSid],
  );
  return rows.map((r) => ({ sid: r.sid, until: Number(r.until) }));
}

/** Revoked families whose tokens could still be presented. */
export async function liveRevocations(db: Queryable): Promise<{ sid: string; until: number }[]> {
  const { rows } = await db.query<{ sid: string; until: string | number }>(
    'select sid, current_refresh_exp as until from auth.sessions where revoked_at is not null and expires > now()',
  );
  return rows.map((r) => ({ sid: r.sid, until: Number(r.until) }));
}

/** Session families by sid, with when each ends, whether it was revoked, and its user's id. */
export async function sessionFamilies(
  db: Queryable,
  sids: string[],
): Promise<{ sid: string; userId: string; expires: number; revoked: boolean }[]> {
  if (sids.length === 0) return [];
  const { rows } = await db.query<{ sid: string; user_id: string; until: string | number; revoked: boolean }>(
    'select sid, user_id, current_refresh_exp as until, revoked_at is not null as revoked from auth.sessions where sid = any($1::text[])',
    [sids],
  );
  return rows.map((r) => ({ sid: r.sid, userId: r.user_id, expires: Number(r.until), revoked: r.revoked }));
}

/** Usernames with a live, unrevoked session. */
export async function loggedInUsernames(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ username: string }>(
    `select distinct u.username from auth.sessions s join auth.users u on u.id = s.user_id
     where s.revoked_at is null and s.expires > now() order by u.username`,
  );
  return rows.map((r) => r.username);
}
