import { ProblemError } from '@scada/contracts';
import type { HandlerContext } from '@scada/platform';
import { lockedFor, releasePlace, settleFailure, settleSuccess, takePlace } from '../store/lock.ts';
import { logAttempt } from '../store/records.ts';
import type { AuthDeps } from './deps.ts';

/**
 * What a check of a password or code came to: `failed` counts toward the lock, `completed` is a finished
 * sign-in (the count starts again), `released` is neither (a right password that leads to the OTP step,
 * a challenge that is not valid).
 */
export type Verdict = 'failed' | 'completed' | 'released';

/** Seconds a place in the lock is held at most, should the replica checking die before it settles. */
const placeHoldSeconds = 120;

/**
 * Runs one check of a name's password or code under the account lock and, when it hashes a password, in
 * this replica's check queue. In order: a turn in the queue is asked for (503 `overloaded` at once when
 * full), a place in the lock is taken (423 at once without one, whatever the password), the turn is waited
 * for (a request whose deadline passed meanwhile is dropped unhashed), the check runs, and its verdict
 * settles the place. Anything thrown gives the place back uncounted.
 */
export async function lockedCheck<T extends { verdict: Verdict }>(
  deps: AuthDeps,
  ctx: HandlerContext,
  username: string,
  options: { hashes: boolean },
  check: () => Promise<T>,
): Promise<T> {
  const key = username.toLowerCase();
  const ticket = options.hashes ? deps.checks.admit(ctx.clientIp, ctx.deadline) : null;
  let result: T;
  try {
    if (!(await takePlace(deps.store, key, deps.config.lockoutThreshold, placeHoldSeconds))) {
      const seconds = (await lockedFor(deps.store, key)) || deps.config.lockoutSeconds;
      await logAttempt(deps.store, { username, ip: ctx.clientIp, successful: false, msg: 'account locked' });
      throw new ProblemError('account_locked', 'Too many failed attempts: try again later', { retryAfter: seconds });
    }
    try {
      await ticket?.turn();
      result = await check();
    } catch (err) {
      await releasePlace(deps.store, key);
      throw err;
    }
  } finally {
    ticket?.done();
  }
  if (result.verdict === 'failed') {
    deps.checks.noteFailure(ctx.clientIp);
    await settleFailure(deps.store, key, deps.config.lockoutThreshold, deps.config.lockoutSeconds);
  } else if (result.verdict === 'completed') {
    await settleSuccess(deps.store, key);
  } else {
    await releasePlace(deps.store, key);
  }
  return result;
}
