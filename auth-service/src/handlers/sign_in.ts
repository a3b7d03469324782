import { randomBytes } from 'node:crypto';
import { login, ProblemError, validateOtp } from '@scada/contracts';
import { implement, type HandlerContext, type Implementation } from '@scada/platform';
import { passwordLength } from '../domain/passwords.ts';
import { matchTotp } from '../domain/totp.ts';
import { clearFailures, countFailure, lockedFor } from '../store/lock.ts';
import { challengeValid, logAttempt, saveChallenge, useChallenge } from '../store/records.ts';
import { claimOtpStep, findUser, type UserRecord } from '../store/users.ts';
import { invalidCredentials, openGrant, type AuthDeps } from './deps.ts';

const challengeSeconds = 300;

/** `login` and `validateOtp`: the password step and the TOTP step of a sign-in. */
export function signInHandlers(deps: AuthDeps): Implementation[] {
  const record = (ctx: HandlerContext, username: string, successful: boolean, msg: string) =>
    logAttempt(deps.store, { username, ip: ctx.clientIp, successful, msg });

  const refuseWhileLocked = async (ctx: HandlerContext, username: string) => {
    const seconds = await lockedFor(deps.store, username.toLowerCase());
    if (seconds > 0) {
      await record(ctx, username, false, 'account locked');
      throw new ProblemError('account_locked', 'Too many failed attempts: try again later', { retryAfter: seconds });
    }
  };

  const fail = async (ctx: HandlerContext, username: string, msg: string): Promise<never> => {
    await countFailure(deps.store, username.toLowerCase(), deps.config.lockoutThreshold, deps.config.lockoutSeconds);
    await record(ctx, username, false, msg);
    throw invalidCredentials();
  };

  const checkPassword = async (username: string, password: string): Promise<UserRecord | null> => {
    const user = await findUser(deps.store, { username });
    const sane = password.length >= passwordLength.min && password.length <= passwordLength.max;
    const ok = user && sane ? await deps.passwords.verify(password, user.passwordHash) : await deps.passwords.burn(password);
    return ok && user?.enabled ? user : null;
  };

  return [
    implement(login, async ({ body }, ctx) => {
      await refuseWhileLocked(ctx, body.username);
      const user = await checkPassword(body.username, body.password);
      if (!user) return fail(ctx, body.username, 'invalid credentials');
      if (user.otpSecret) {
        const token = randomBytes(32).toString('base64url');
        await saveChallenge(deps.store, token, user.username.toLowerCase(), challengeSeconds);
        await record(ctx, user.username, true, 'otp required');
        return { kind: 'otp', otp_required: true, otp_type: 'TOTP', username: user.username, otp_token: token, 'expire-seconds': challengeSeconds } as const;
      }
      await clearFailures(deps.store, user.username.toLowerCase());
      const grant = await openGrant(deps, user);
      await record(ctx, user.username, true, 'login succeeded');
      return grant;
    }),

    implement(validateOtp, async ({ body }, ctx) => {
      await refuseWhileLocked(ctx, body.username);
      const key = body.username.toLowerCase();
      const user = await findUser(deps.store, { username: body.username });
      if (!user?.enabled || !user.otpSecret || !(await challengeValid(deps.store, body.otp_token, key))) {
        await record(ctx, body.username, false, 'otp challenge invalid');
        throw invalidCredentials();
      }
      const step = matchTotp(user.otpSecret, body.otp_code.trim(), user.otpLastStep);
      if (step === null) return fail(ctx, user.username, 'otp failed');
      // Both claims are atomic, so two requests racing with one code cannot both win.
      if (!(await claimOtpStep(deps.store, user.id, step)) || !(await useChallenge(deps.store, body.otp_token))) {
        return fail(ctx, user.username, 'otp failed');
      }
      await clearFailures(deps.store, key);
      const grant = await openGrant(deps, user);
      await record(ctx, user.username, true, 'otp succeeded');
      return grant;
    }),
  ];
}
