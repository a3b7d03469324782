import { createHmac, randomBytes } from 'node:crypto';
import { login, otpChallengeSeconds, validateOtp } from '@scada/contracts';
import { ProblemError } from '@scada/contracts';
import { implement, type HandlerContext, type Implementation } from '@scada/platform';
import { passwordLength } from '../domain/passwords.ts';
import { totpPurpose } from '../domain/secrets.ts';
import { matchTotp } from '../domain/totp.ts';
import { challengeValid, logAttempt, saveChallenge, useChallenge } from '../store/records.ts';
import { claimOtpStep, findUser, rehashPassword, type UserRecord } from '../store/users.ts';
import { lockedCheck } from './checks.ts';
import { invalidCredentials, openGrant, type AuthDeps } from './deps.ts';

/** Time kept from a sign-in's deadline for its answer's way back: a grant made later would reach nobody. */
const answerMarginMs = 100;
/** Time a sign-in's deadline must leave to make its hash again: see `hashAgain`. */
const rehashRoom = (checkMs: number) => 3 * checkMs + 1000;

/** `login` and `validateOtp`: the password step and the TOTP step of a sign-in. */
export function signInHandlers(deps: AuthDeps): Implementation[] {
  const record = (ctx: HandlerContext, username: string, successful: boolean, msg: string) =>
    logAttempt(deps.store, { username, ip: ctx.clientIp, successful, msg });

  /**
   * A check that ended after its caller gave up (the gateway has answered 504): no session is made and no
   * success is written, only a row saying the answer came too late.
   */
  const tooLate = async (ctx: HandlerContext, username: string): Promise<void> => {
    if (Date.now() < ctx.deadline - answerMarginMs) return;
    await record(ctx, username, false, 'answer too late: no session made');
    throw new ProblemError('upstream_timeout', 'The sign-in was checked after its deadline had passed; no session was made');
  };

  const checkPassword = async (ctx: HandlerContext, username: string, password: string): Promise<UserRecord | null> => {
    const user = await findUser(deps.store, { username });
    const sane = password.length >= passwordLength.min && password.length <= passwordLength.max;
    const started = Date.now();
    // A check that cannot match costs what a real one would: the user's own hash's cost, and for an unknown
    // name the cost of a stored hash chosen by the name (so it answers like an account not yet rehashed).
    const ok =
      user && sane
        ? await deps.passwords.verify(password, user.passwordHash)
        : await deps.passwords.burn(password, user ? user.passwordHash : await storedCosts.likeFor(username));
    if (!ok || !user?.enabled) return null;
    if (!deps.passwords.current(user.passwordHash)) await hashAgain(ctx, user, password, Date.now() - started);
    return user;
  };

  /**
   * A hash made at another cost (an older default: 2^17 took 128 MiB at every check) is made again at the
   * current one while the password is at hand, in the same place of the check queue, so each account pays
   * once. Skipped when the sign-in's deadline leaves no room for three times the check just made and a
   * second more (the new cost may be the higher, and a busy machine's hashes vary), so that a sign-in is
   * not answered too late for it; a failure leaves the old hash.
   */
  const hashAgain = async (ctx: HandlerContext, user: UserRecord, password: string, checkMs: number): Promise<void> => {
    if (Date.now() + rehashRoom(checkMs) > ctx.deadline) return;
    try {
      const next = await deps.passwords.hash(password);
      if (await rehashPassword(deps.store, user.id, user.passwordHash, next)) {
        ctx.log.info({ user: user.id }, 'password hash made again at the current cost');
      }
    } catch (err) {
      ctx.log.warn({ err, user: user.id }, 'making a password hash again at the current cost failed; the old one stays');
    }
  };

  const storedCosts = costsOfStoredHashes(deps);

  return [
    implement(login, async ({ body }, ctx) => {
      const { user } = await lockedCheck(deps, ctx, body.username, { hashes: true }, async () => {
        const found = await checkPassword(ctx, body.username, body.password);
        return { verdict: !found ? 'failed' : found.otpSecret ? 'released' : 'completed', user: found } as const;
      });
      if (!user) {
        await record(ctx, body.username, false, 'invalid credentials');
        throw invalidCredentials();
      }
      if (user.otpSecret) {
        await tooLate(ctx, user.username);
        const token = randomBytes(32).toString('base64url');
        await saveChallenge(deps.store, token, user.username.toLowerCase(), otpChallengeSeconds);
        await record(ctx, user.username, true, 'otp required');
        return {
          kind: 'otp',
          otp_required: true,
          otp_type: 'TOTP',
          username: user.username,
          otp_token: token,
          'expire-seconds': otpChallengeSeconds,
        } as const;
      }
      await tooLate(ctx, user.username);
      const grant = await openGrant(deps, user);
      await record(ctx, user.username, true, 'login succeeded');
      return grant;
    }),

    implement(validateOtp, async ({ body }, ctx) => {
      const key = body.username.toLowerCase();
      const outcome = await lockedCheck(deps, ctx, body.username, { hashes: false }, async () => {
        const user = await findUser(deps.store, { username: body.username });
        if (!user?.enabled || !user.otpSecret || !(await challengeValid(deps.store, body.otp_token, key))) {
          return { verdict: 'released', user: null, msg: 'otp challenge invalid' } as const;
        }
        const step = matchTotp(deps.secrets.open(user.otpSecret, totpPurpose(user.id)), body.otp_code.trim(), user.otpLastStep);
        // Both claims are atomic, so two requests racing with one code cannot both win.
        const won = step !== null && (await claimOtpStep(deps.store, user.id, step)) && (await useChallenge(deps.store, body.otp_token));
        return won
          ? ({ verdict: 'completed', user, msg: 'otp succeeded' } as const)
          : ({ verdict: 'failed', user, msg: 'otp failed' } as const);
      });
      if (outcome.verdict !== 'completed') {
        await record(ctx, outcome.user?.username ?? body.username, false, outcome.msg);
        throw invalidCredentials();
      }
      await tooLate(ctx, outcome.user.username);
      const grant = await openGrant(deps, outcome.user);
      await record(ctx, outcome.user.username, true, outcome.msg);
      return grant;
    }),
  ];
}

/** How long the costs of the stored hashes are read once for all unknown names (ms). */
const storedCostsMs = 60_000;

/**
 * The costs of the stored password hashes and how many accounts hold each, read at most once a minute,
 * and for a name that has no account, one of them picked by a keyed hash of the name (the same name gets
 * the same cost while the counts stand), in proportion to the accounts that hold it. Until every account
 * has signed in since the default cost changed, an unknown name then takes as long as an account that has
 * not: timing tells no more than the counts do.
 */
function costsOfStoredHashes(deps: AuthDeps): { likeFor(username: string): Promise<string | undefined> } {
  const key = randomBytes(32);
  let read: { at: number; costs: Promise<{ params: string; n: number }[]> } | null = null;
  const costs = () => {
    if (read === null || Date.now() - read.at > storedCostsMs) {
      const costs = deps.store
        .query<{ params: string | null; n: number }>(
          `select substring(password_hash from '^\\$scrypt\\$[^$]*\\$') as params, count(*)::int as n
             from auth.users group by 1 order by 1`,
        )
        .then(({ rows }) => rows.filter((r): r is { params: string; n: number } => r.params !== null));
      read = { at: Date.now(), costs };
      costs.catch(() => {
        read = null;
      });
    }
    return read.costs;
  };
  return {
    async likeFor(username) {
      const list = await costs().catch(() => []);
      const total = list.reduce((sum, c) => sum + c.n, 0);
      if (total === 0) return undefined;
      let at = createHmac('sha256', key).update(username.toLowerCase()).digest().readUInt32BE(0) % total;
      for (const c of list) {
        if (at < c.n) return c.params;
        at -= c.n;
      }
      return undefined;
    },
  };
}
