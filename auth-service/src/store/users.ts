import type { Queryable } from '@scada/platform';
import type { UserResponse } from '@scada/contracts';

/** A user row with what sign-in needs, and the default space they chose (null: none). */
export type UserRecord = UserResponse & {
  passwordHash: string;
  otpSecret: string | null;
  otpLastStep: number | null;
  defaultSpace: string | null;
};

const columns = `u.id, u.username, u.email, u.phone, u.enabled, u.password_hash, u.otp_secret, u.otp_last_step,
  u.default_space, u.require_password_reset,
  u.created_by, u.creation_date, u.last_modified_by, u.last_modified_date,
  coalesce((select array_agg(r.role order by r.role) from auth.user_roles r where r.user_id = u.id), '{}') as roles,
  coalesce((select array_agg(s.space_id order by s.space_id) from auth.user_spaces s where s.user_id = u.id), '{}') as spaces`;

type Row = Record<string, unknown>;

function toUser(r: Row): UserRecord {
  return {
    id: r.id as string,
    username: r.username as string,
    email: (r.email as string | null) ?? null,
    phone: (r.phone as string | null) ?? null,
    enabled: r.enabled as boolean,
    otpType: r.otp_secret ? 'totp' : 'none',
    roles: r.roles as UserResponse['roles'],
    spaces: r.spaces as string[],
    requirePasswordReset: Boolean(r.require_password_reset),
    createdBy: (r.created_by as string | null) ?? null,
    creationDate: (r.creation_date as Date).toISOString(),
    lastModifiedBy: (r.last_modified_by as string | null) ?? null,
    lastModifiedDate: (r.last_modified_date as Date).toISOString(),
    passwordHash: r.password_hash as string,
    otpSecret: (r.otp_secret as string | null) ?? null,
    otpLastStep: r.otp_last_step === null || r.otp_last_step === undefined ? null : Number(r.otp_last_step),
    defaultSpace: (r.default_space as string | null) ?? null,
  };
}

/** The public view of a user record: no hash, no secret. */
export function publicUser(user: UserRecord): UserResponse {
  const { passwordHash: _h, otpSecret: _s, otpLastStep: _l, defaultSpace: _d, ...rest } = user;
  return rest;
}

/** Users by id or by name (case-insensitive). */
export async function findUser(db: Queryable, by: { id?: string; username?: string }): Promise<UserRecord | null> {
  const { rows } =
    by.id !== undefined
      ? await db.query(`select ${columns} from auth.users u where u.id = $1`, [by.id])
      : await db.query(`select ${columns} from auth.users u where u.username_key = $1`, [(by.username ?? '').toLowerCase()]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** Every user, by name. */
export async function listUsers(db: Queryable): Promise<UserRecord[]> {
  const { rows } = await db.query(`select ${columns} from auth.users u order by u.username_key`);
  return rows.map(toUser);
}

/** Inserts a user with roles and spaces; `requirePasswordReset` when someone else chose the password (default: no). */
export async function insertUser(
  db: Queryable,
  user: {
    id: string;
    username: string;
    passwordHash: string;
    email: string | null;
    phone: string | null;
    enabled: boolean;
    roles: string[];
    spaces: string[];
    actor: string | null;
    requirePasswordReset?: boolean;
  },
): Promise<void> {
  await db.query(
    `insert into auth.users (id, username, username_key, password_hash, email, phone, enabled, require_password_reset, created_by, last_modified_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
    [
      user.id,
      user.username,
      user.username.toLowerCase(),
      user.passwordHash,
      user.email,
      user.phone,
      user.enabled,
      user.requirePasswordReset ?? false,
      user.actor,
    ],
  );
  await setRolesAndSpaces(db, user.id, user.roles, user.spaces);
}

/** Replaces the roles and/or spaces of a user. */
export async function setRolesAndSpaces(db: Queryable, userId: string, roles?: string[], spaces?: string[]): Promise<void> {
  if (roles) {
    await db.query('delete from auth.user_roles where user_id = $1', [userId]);
    for (const role of roles) await db.query('insert into auth.user_roles (user_id, role) values ($1, $2)', [userId, role]);
  }
  if (spaces) {
    await db.query('delete from auth.user_spaces where user_id = $1', [userId]);
    for (const space of spaces) await db.query('insert into auth.user_spaces (user_id, space_id) values ($1, $2)', [userId, space]);
  }
}

/**
 * Updates the plain fields of a user that are given. A new password hash clears `requirePasswordReset`
 * unless the change says otherwise (an administrator's reset sets it).
 */
export async function updateUserFields(
  db: Queryable,
  userId: string,
  fields: {
    username?: string;
    passwordHash?: string;
    requirePasswordReset?: boolean;
    email?: string | null;
    phone?: string | null;
    enabled?: boolean;
  },
  actor: string | null,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [userId, actor];
  const add = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (fields.username !== undefined) {
    add('username', fields.username);
    add('username_key', fields.username.toLowerCase());
  }
  if (fields.passwordHash !== undefined) {
    add('password_hash', fields.passwordHash);
    add('require_password_reset', fields.requirePasswordReset ?? false);
  }
  if (fields.email !== undefined) add('email', fields.email);
  if (fields.phone !== undefined) add('phone', fields.phone);
  if (fields.enabled !== undefined) add('enabled', fields.enabled);
  await db.query(
    `update auth.users set ${[...sets, 'last_modified_by = $2', 'last_modified_date = now()'].join(', ')} where id = $1`,
    params,
  );
}

/**
 * Replaces a password hash by one of the same password at the current cost, only while the stored hash is
 * still `previous` (a password changed meanwhile wins); true when it was replaced. Not a change of the
 * password: nothing else of the user moves.
 */
export async function rehashPassword(db: Queryable, userId: string, previous: string, next: string): Promise<boolean> {
  const { rowCount } = await db.query('update auth.users set password_hash = $3 where id = $1 and password_hash = $2', [
    userId,
    previous,
    next,
  ]);
  return rowCount === 1;
}

/** Sets or clears the OTP secret; clearing also forgets the last used step. */
export async function setOtpSecret(db: Queryable, userId: string, secret: string | null, actor: string | null): Promise<void> {
  await db.query(
    'update auth.users set otp_secret = $2, otp_last_step = null, last_modified_by = $3, last_modified_date = now() where id = $1',
    [userId, secret, actor],
  );
}

/** Records a used TOTP step unless a later or equal one was recorded first; true when this one won. */
export async function claimOtpStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query(
    'update auth.users set otp_last_step = $2 where id = $1 and (otp_last_step is null or otp_last_step < $2)',
    [userId, step],
  );
  return rowCount === 1;
}

/** Number of enabled administrators other than the given user. */
export async function otherEnabledAdmins(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(
    `select count(*) as n from auth.users u join auth.user_roles r on r.user_id = u.id and r.role = 'admin' where u.enabled and u.id <> $1`,
    [userId],
  );
  return Number(rows[0]?.n ?? 0);
}
