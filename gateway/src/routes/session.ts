import Router from '@koa/router';
import {
  deadlineOf,
  login,
  logout,
  otpChallengeSeconds,
  ProblemError,
  refresh,
  validateOtp,
  type Operation,
  type SessionGrant,
} from '@scada/contracts';
import { call } from '@scada/platform';
import type { Context } from 'koa';
import { readBody } from '../input/body.ts';
import { clearSessionCookie, cookieNames, setSessionCookie, setSessionCookies } from '../auth/cookies.ts';
import type { SessionDeps } from '../auth/session.ts';
import { Cooldown, InFlight, RateLimiter } from '../auth/rate_limit.ts';
import { sessionOf } from '../middleware/authorize.ts';
import { setJson } from '../json.ts';

/** What the session routes need. */
export type SessionRouteDeps = SessionDeps & {
  loginRateLimitPerMinute: number;
  loginInFlightPerAddress: number;
  bodyLimitBytes: number;
  /** Called for each sign-in this gateway answers itself, its address within the Retry-After of an `overloaded` (a metric). */
  onHeldBack?: () => void;
};

const formTypes = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'] as const;
/** The longest a gateway holds the answer to an address that asked again before its Retry-After. */
const heldBackMaxMs = 1_000;

/**
 * `/login`, `/validate`, `/refresh` and `/logout`: the HTTP shape of sessions (three body encodings,
 * cookies, rate limits) around the auth service's session operations.
 */
export function sessionRoutes(deps: SessionRouteDeps): Router {
  const router = new Router();
  const limiter = new RateLimiter(deps.loginRateLimitPerMinute);
  const parse = (ctx: Context) => readForm(ctx, deps.bodyLimitBytes);
  const inFlight = new InFlight(deps.loginInFlightPerAddress);
  const cooldown = new Cooldown();
  /**
   * Runs a sign-in step within the address's rate and the number it may have unanswered at once. An
   * address the auth service has answered `overloaded` that asks again before its `Retry-After` has passed
   * is answered here, 429, when its wait is over (at most `heldBackMaxMs`): a client that ignores
   * `Retry-After` then costs this gateway a timer, not the bus and the password checks, and cannot turn
   * the refusals themselves into a storm that starves the checks of the CPU.
   */
  const limited = async (ctx: Context, step: () => Promise<void>) => {
    const address = ctx.state.clientIp as string;
    const wait = limiter.take(address);
    if (wait > 0) throw new ProblemError('rate_limited', 'Too many sign-in attempts from this address', { retryAfter: wait });
    if (!inFlight.enter(address))
      throw new ProblemError('rate_limited', 'Too many sign-in attempts from this address at once', { retryAfter: 1 });
    try {
      const held = cooldown.remainingMs(address);
      if (held > 0) {
        deps.onHeldBack?.();
        await new Promise((resolve) => setTimeout(resolve, Math.min(held, heldBackMaxMs)));
        throw new ProblemError('rate_limited', 'This address was told to wait and asked again before its Retry-After', {
          retryAfter: Math.max(1, Math.ceil(cooldown.remainingMs(address) / 1000)),
        });
      }
      await step();
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'overloaded') cooldown.hold(address, err.retryAfter ?? 1);
      throw err;
    } finally {
      inFlight.leave(address);
    }
  };
  const callCtx = (ctx: Context, op: Operation) => ({
    requestId: ctx.state.requestId,
    clientIp: ctx.state.clientIp,
    timeoutMs: deadlineOf(op, deps.busTimeoutMs),
  });

  router.post('/login', (ctx) =>
    limited(ctx, async () => {
      const form = await parse(ctx);
      const body = { username: field(form, 'username', true) as string, password: field(form, 'password', true) as string };
      const answer = await call(deps.bus, login, { params: {}, query: {}, body }, callCtx(ctx, login));
      if (answer.kind === 'otp') {
        setSessionCookie(ctx, cookieNames.otp, answer.otp_token, otpChallengeSeconds);
        const { kind: _kind, 'expire-seconds': _ttl, ...challenge } = answer;
        answerNoStore(ctx, challenge);
        return;
      }
      grantSession(ctx, answer);
    }),
  );

  router.post('/validate', (ctx) =>
    limited(ctx, async () => {
      const form = await parse(ctx);
      const otpToken = field(form, 'otp_token', false) ?? ctx.cookies.get(cookieNames.otp);
      if (!otpToken) throw new ProblemError('unauthenticated', 'No sign-in challenge: sign in with your password first');
      const body = {
        username: field(form, 'username', true) as string,
        otp_code: field(form, 'otp_code', true) as string,
        otp_token: otpToken,
      };
      const grant = await call(deps.bus, validateOtp, { params: {}, query: {}, body }, callCtx(ctx, validateOtp));
      clearSessionCookie(ctx, cookieNames.otp);
      grantSession(ctx, grant);
    }),
  );

  router.post('/refresh', async (ctx) => {
    const cookie = ctx.cookies.get(cookieNames.refresh);
    const form = cookie ? {} : await parse(ctx);
    const token = cookie ?? field(form, 'refresh_token', false);
    if (!token) throw new ProblemError('unauthenticated', 'Send the refresh token as its cookie or a refresh_token field');
    const grant = await call(deps.bus, refresh, { params: {}, query: {}, body: { refresh_token: token } }, callCtx(ctx, refresh));
    grantSession(ctx, grant);
  });

  router.post('/logout', async (ctx) => {
    const refreshCookie = ctx.cookies.get(cookieNames.refresh);
    let sid: string | undefined;
    let until = 0;
    try {
      const claims = (await sessionOf(ctx, deps))?.claims;
      sid = claims?.sid;
      until = claims?.exp ?? 0;
    } catch (err) {
      if (!refreshCookie) throw err;
    }
    if (!sid && !refreshCookie) throw new ProblemError('unauthenticated', 'There is no session to end');
    const body = sid ? { sid } : { refresh_token: refreshCookie as string };
    await call(deps.bus, logout, { params: {}, query: {}, body }, callCtx(ctx, logout));
    // This replica refuses the family at once; the others learn it from the auth service's event.
    if (sid) deps.auth.noteRevoked(sid, until);
    clearSessionCookie(ctx, cookieNames.access);
    clearSessionCookie(ctx, cookieNames.refresh);
    answerNoStore(ctx, { status: 'logged out' });
  });
  return router;
}

function grantSession(ctx: Context, grant: SessionGrant): void {
  setSessionCookies(ctx, grant);
  answerNoStore(ctx, {
    'expire-seconds': grant['expire-seconds'],
    spaces: grant.spaces,
    activeSpace: grant.activeSpace,
    access_token: grant.access_token,
    refresh_token: grant.refresh_token,
    token_type: grant.token_type,
  });
}

function answerNoStore(ctx: Context, body: unknown): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  ctx.status = 200;
  setJson(ctx, body);
}

/** The fields of a session form (JSON, urlencoded or multipart, no files), checked at the edge. */
async function readForm(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  const body = (await readBody(ctx, { accepts: formTypes, limit }))?.value ?? {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ProblemError('malformed_body', 'The body must be an object of fields');
  return body as Record<string, unknown>;
}

/** A text field of a form; a repeated or non-text field is a 400, a missing required one too. */
function field(form: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = form[name];
  if (value === undefined || value === null || value === '') {
    if (required)
      throw new ProblemError('validation_failed', `${name} is required`, { errors: [{ path: `/body/${name}`, message: 'is required' }] });
    return undefined;
  }
  if (typeof value !== 'string')
    throw new ProblemError('validation_failed', `${name} must be one text value`, {
      errors: [{ path: `/body/${name}`, message: 'must be a string' }],
    });
  return value;
}
