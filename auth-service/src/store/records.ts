import { createHash } from 'node:crypto';
import type { Queryable } from '@scada/platform';
import type { IpSettingsResponse } from '@scada/contracts';

/** Appends one attempt to the auth log. */
export async function logAttempt(
  db: Queryable,
  entry: { username: string; ip: string | null; successful: boolean; msg: string },
): Promise<void> {
  await db.query('insert into auth.auth_log (username, ip, successful, msg) values ($1, $2, $3, $4)', [
    entry.username.slice(0, 200),
    entry.ip,
    entry.successful,
    entry.msg,
  ]);
}

/** A page of the auth log, newest first. */
export async function attemptsPage(db: Queryable, page: number, size: number) {
  const { rows } = await db.query(
    'select username, ip, dttm, successful, msg from auth.auth_log order by dttm desc, id desc limit $1 offset $2',
    [size, page * size],
  );
  const { rows: count } = await db.query<{ n: string | number }>('select count(*) as n from auth.auth_log');
  return {
    total: Number(count[0]?.n ?? 0),
    content: rows.map((r) => ({
      username: r.username as string,
      ip: (r.ip as string | null) ?? null,
      dttm: (r.dttm as Date).toISOString(),
      time: (r.dttm as Date).getTime(),
      isSuccessful: r.successful as boolean,
      msg: r.msg as string,
    })),
  };
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Stores an OTP challenge by the hash of its token. */
export async function saveChallenge(db: Queryable, token: string, usernameKey: string, ttlSeconds: number): Promise<void> {
  await db.query("delete from auth.otp_challenges where expires < now() - interval '1 hour'");
  await db.query('insert into auth.otp_challenges (token_hash, username_key, expires) values ($1, $2, now() + make_interval(secs => $3))', [
    hashOf(token),
    usernameKey,
    ttlSeconds,
  ]);
}

/** True when the challenge is live, unused and bound to this name. */
export async function challengeValid(db: Queryable, token: string, usernameKey: string): Promise<boolean> {
  const { rows } = await db.query(
    'select 1 from auth.otp_challenges where token_hash = $1 and username_key = $2 and not used and expires > now()',
    [hashOf(token), usernameKey],
  );
  return rows.length === 1;
}

/** Uses the challenge up; false when another request used it first. */
export async function useChallenge(db: Queryable, token: string): Promise<boolean> {
  const { rowCount } = await db.query('update auth.otp_challenges set used = true where token_hash = $1 and not used and expires > now()', [
    hashOf(token),
  ]);
  return rowCount === 1;
}

/** The IP filter settings (empty lists when never set). */
export async function readIpSettings(db: Queryable): Promise<IpSettingsResponse> {
  const { rows } = await db.query('select * from auth.ip_settings where id = 1');
  const r = rows[0];
  return {
    allowedIps: (r?.allowed_ips as string | undefined) ?? '',
    deniedIps: (r?.denied_ips as string | undefined) ?? '',
    lastModifiedBy: (r?.last_modified_by as string | null | undefined) ?? null,
    lastModifiedDate: r?.last_modified_date ? (r.last_modified_date as Date).toISOString() : null,
  };
}

/** Replaces the IP filter settings. */
export async function writeIpSettings(db: Queryable, allowedIps: string, deniedIps: string, actor: string | null): Promise<void> {
  await db.query(
    `insert into auth.ip_settings (id, allowed_ips, denied_ips, last_modified_by, last_modified_date) values (1, $1, $2, $3, now())
     on conflict (id) do update set allowed_ips = excluded.allowed_ips, denied_ips = excluded.denied_ips,
       last_modified_by = excluded.last_modified_by, last_modified_date = excluded.last_modified_date`,
    [allowedIps, deniedIps, actor],
  );
}
