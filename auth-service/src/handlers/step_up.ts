import { ProblemError } from '@scada/contracts';
import type { HandlerContext } from '@scada/platform';
import { passwordLength } from '../domain/passwords.ts';
import { totpPurpose } from '../domain/secrets.ts';
import { matchTotp } from '../domain/totp.ts';
import { logAttempt } from '../store/records.ts';
import { claimOtpStep, type UserRecord } from '../store/users.ts';
import { lockedCheck } from './checks.ts';
import { actorName, type AuthDeps } from './deps.ts';

/** What a signed-in user sends to confirm a sensitive change to their own account. */
export type StepUpProof = { currentPassword?: string; otpCode?: string };

/**
 * Asks a signed-in user to prove themself again before a sensitive change to their own account: their
 * password, and a fresh TOTP code when they are enrolled. Missing proof is 403
 * `reauthentication_required`; a wrong password or code is the same 403 and counts toward the account
 * lock, as a failed sign-in does (the check takes its place in the lock first, so a locked name is 423,
 * and it waits its turn with the sign-ins' password checks). A code already used (at sign-in or here)
 * does not work again. Administrators acting on themselves are asked the same.
 */
export async function requireStepUp(
  deps: AuthDeps,
  ctx: HandlerContext,
  user: UserRecord,
  proof: StepUpProof,
  what: string,
): Promise<void> {
  const asked = user.otpSecret ? 'currentPassword and otpCode' : 'currentPassword';
  const refuse = (detail: string) => new ProblemError('reauthentication_required', detail);
  const password = proof.currentPassword;
  if (password === undefined || password === '' || (user.otpSecret && !proof.otpCode)) throw refuse(`${what} needs ${asked}`);
  const { verdict } = await lockedCheck(deps, ctx, user.username, { hashes: true }, async () => {
    const sane = password.length >= passwordLength.min && password.length <= passwordLength.max;
    const passwordOk = sane
      ? await deps.passwords.verify(password, user.passwordHash)
      : await deps.passwords.burn(password, user.passwordHash);
    if (!passwordOk) return { verdict: 'failed' } as const;
    if (user.otpSecret) {
      const step = matchTotp(deps.secrets.open(user.otpSecret, totpPurpose(user.id)), (proof.otpCode ?? '').trim(), user.otpLastStep);
      // The claim is atomic: one code cannot confirm two changes, nor a sign-in and a change.
      if (step === null || !(await claimOtpStep(deps.store, user.id, step))) return { verdict: 'failed' } as const;
    }
    return { verdict: 'completed' } as const;
  });
  if (verdict !== 'completed') {
    await logAttempt(deps.store, { username: user.username, ip: ctx.clientIp, successful: false, msg: `step-up failed for ${what}` });
    throw refuse(`${what} needs ${asked}; what was sent does not match`);
  }
  await logAttempt(deps.store, { username: user.username, ip: ctx.clientIp, successful: true, msg: `step-up for ${what}` });
}

/** Writes an administrator's act on another user's account to the auth log, under the user's name. */
export function logAdminAct(deps: AuthDeps, ctx: HandlerContext, target: Pick<UserRecord, 'username'>, act: string): Promise<void> {
  return logAttempt(deps.store, {
    username: target.username,
    ip: ctx.clientIp,
    successful: true,
    msg: `${act} by administrator ${actorName(ctx) ?? 'unknown'}`,
  });
}
