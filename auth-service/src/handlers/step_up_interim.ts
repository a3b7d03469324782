import { ProblemError } from '@scada/contracts';
import type { HandlerContext } from '@scada/platform';
import { passwordLength } from '../domain/passwords.ts';
import { matchTotp } from '../domain/totp.ts';
import { clearFailures, countFailure, lockedFor } from '../store/lock.ts';
import { logAttempt } from '../store/records.ts';
import { claimOtpStep, type UserRecord } from '../store/users.ts';
import { actorName, type AuthDeps } from './deps.ts';

/** What a signed-in user sends to confirm a sensitive change to their own account. */
export type StepUpProof = { currentPassword?: string; otpCode?: string };

/**
 * Asks a signed-in user to prove themself again before a sensitive change to their own account: their
 * password, and a fresh TOTP code when they are enrolled. Missing proof is 403
 * `reauthentication_required`; a wrong password or code is the same 403 and counts toward the account
 * lock, as a failed sign-in does; a locked name is 423. A code already used (at sign-in or here) does
 * not work again.
 *
 * Interim: the sign-in work brings the shared step-up check (and the auth-log helper below) under the same
 * names; once it lands, the imports of this file move to it and this file goes.
 */
export async function requireStepUp(deps: AuthDeps, ctx: HandlerContext, user: UserRecord, proof: StepUpProof, what: string): Promise<void> {
  const key = user.username.toLowerCase();
  const refuse = (detail: string) => new ProblemError('reauthentication_required', detail);
  const locked = await lockedFor(deps.store, key);
  if (locked > 0) throw new ProblemError('account_locked', 'Too many failed attempts: try again later', { retryAfter: locked });
  const asked = user.otpSecret ? 'currentPassword and otpCode' : 'currentPassword';
  if (proof.currentPassword === undefined || (user.otpSecret && proof.otpCode === undefined)) throw refuse(`${what} needs ${asked}`);
  const fail = async (msg: string): Promise<never> => {
    await countFailure(deps.store, key, deps.config.lockoutThreshold, deps.config.lockoutSeconds);
    await logAttempt(deps.store, { username: user.username, ip: ctx.clientIp, successful: false, msg });
    throw refuse(`${what} needs ${asked}; what was sent does not match`);
  };
  const sane = proof.currentPassword.length >= passwordLength.min && proof.currentPassword.length <= passwordLength.max;
  const passwordOk = sane ? await deps.passwords.verify(proof.currentPassword, user.passwordHash) : await deps.passwords.burn(proof.currentPassword);
  if (!passwordOk) return fail('step-up password failed');
  if (user.otpSecret) {
    const step = matchTotp(user.otpSecret, (proof.otpCode ?? '').trim(), user.otpLastStep);
    // The claim is atomic: one code cannot confirm two changes, nor a sign-in and a change.
    if (step === null || !(await claimOtpStep(deps.store, user.id, step))) return fail('step-up otp failed');
  }
  await clearFailures(deps.store, key);
  await logAttempt(deps.store, { username: user.username, ip: ctx.clientIp, successful: true, msg: `step-up for ${what}` });
}

/** Writes an administrator's act on another user's account to the auth log, under the user's name. */
export function logAdminAct(deps: AuthDeps, ctx: HandlerContext, target: Pick<UserRecord, 'username'>, act: string): Promise<void> {
  return logAttempt(deps.store, { username: target.username, ip: ctx.clientIp, successful: true, msg: `${act} by administrator ${actorName(ctx) ?? 'unknown'}` });
}
