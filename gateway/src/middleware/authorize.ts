import { ProblemError, type HttpBinding, type Role } from '@scada/contracts';
import type { Context } from 'koa';
import { actorOf, resolveSession, type Session, type SessionDeps } from '../auth/session.ts';

const rank: Record<Role, number> = { viewer: 1, operator: 2, editor: 3, admin: 4 };
const maxSpaceHeader = 64;

/** The request's session, resolved once and kept on the context. */
export async function sessionOf(ctx: Context, deps: SessionDeps): Promise<Session | null> {
  if (!('session' in ctx.state)) ctx.state.session = await resolveSession(ctx, deps);
  return ctx.state.session ?? null;
}

/**
 * Applies an operation's access rule and, for space-scoped operations, the X-Space rule. Sets
 * `ctx.state.actor` and `ctx.state.space` for the bus call. A user whose password someone else set
 * (`requirePasswordReset`) gets 403 `password_change_required` for everything but the operations open
 * `beforePasswordChange` (their own password change and profile reads); sign-out and refresh are not
 * operations here and stay open. `spaceFromQuery`: a route's `?space=` values, standing in for a missing
 * `X-Space` (a link to a download cannot send the header).
 */
export async function authorize(ctx: Context, http: HttpBinding, deps: SessionDeps, spaceFromQuery?: string[]): Promise<void> {
  if (http.access === 'public') return;
  const session = await sessionOf(ctx, deps);
  if (!session) throw new ProblemError('unauthenticated', 'Sign in first');
  if (session.principal.requirePasswordReset && !http.beforePasswordChange) {
    throw new ProblemError(
      'password_change_required',
      'Your password was set by someone else: choose your own first (POST /api/users/reset-password)',
    );
  }
  const roles = session.principal.roles;
  if (http.access !== 'user' && !roles.some((r) => rank[r] >= rank[http.access as Role])) {
    throw new ProblemError('forbidden', `This needs the ${http.access} role`);
  }
  ctx.state.actor = actorOf(session);
  if (http.spaceScoped) ctx.state.space = resolveSpace(ctx, session, spaceFromQuery);
}

/**
 * The X-Space rule: the header names the space, the caller's active space stands in for a missing one;
 * an empty, repeated or over-long header is 400; a space the caller is not in, or that does not exist,
 * is 403. Administrators are in every space (their principal lists them all). `fromQuery` stands in for
 * a missing header (the live channel's `?space=`, for clients that cannot set headers).
 */
export function resolveSpace(ctx: Context, session: Session, fromQuery?: string[]): string {
  const values = headerValues(ctx, 'x-space') ?? fromQuery;
  let space: string | null;
  if (values === undefined) {
    space = session.principal.activeSpace;
    if (space === null) throw new ProblemError('space_forbidden', 'You belong to no space');
  } else {
    // Clients that fold a repeated header into one line send `a, b`; a space id has no comma either way.
    if (values.length !== 1 || (values[0] ?? '').includes(',')) throw new ProblemError('bad_header', 'Send X-Space once');
    space = (values[0] ?? '').trim();
    if (space === '' || space.length > maxSpaceHeader)
      throw new ProblemError('bad_header', `X-Space must be 1 to ${maxSpaceHeader} characters`);
  }
  if (!session.principal.spaces.includes(space)) throw new ProblemError('space_forbidden', 'You have no access to this space');
  return space;
}

/** Every value of a header as sent, repeated headers apart; undefined when absent. */
function headerValues(ctx: Context, name: string): string[] | undefined {
  const raw = ctx.req.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === name) values.push(raw[i + 1] as string);
  return values.length ? values : undefined;
}
