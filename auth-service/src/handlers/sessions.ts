import {
  logout,
  principal,
  ProblemError,
  refresh,
  revocations,
  sessionStates,
  signingKeys,
  tokenProfile,
  type Principal,
  type SessionGrant,
} from '@scada/contracts';
import { implement, type HandlerContext, type Implementation } from '@scada/platform';
import { decodeProtectedHeader } from 'jose';
import { verifyRefresh, type SigningKey } from '../domain/tokens.ts';
import { liveRevocations, lockRefreshToken, markUsed, revokeSession, rotateSession, sessionFamilies } from '../store/sessions.ts';
import { findUser, type UserRecord } from '../store/users.ts';
import { announceRevoked, freshClaims, grantOf, principalOf, type AuthDeps } from './deps.ts';

type Outcome =
  | { grant: { user: UserRecord; claims: ReturnType<typeof freshClaims> } }
  | { revoke: { sid: string; until: number } }
  | { refuse: string };

/** `refresh`, `logout`, and what gateways read: `signingKeys`, `principal`, `revocations`, `sessionStates`. */
export function sessionHandlers(deps: AuthDeps): Implementation[] {
  const keyOf = (token: string): SigningKey => {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw new ProblemError('invalid_token', 'The refresh token is not valid');
    }
    const key = kid ? deps.keys.byKid.get(kid) : undefined;
    if (!key) throw new ProblemError('invalid_token', 'The refresh token is not valid');
    return key;
  };

  /** Decides a rotation inside one transaction; acts on it after the commit. */
  const rotate = (token: { sid: string; jti: string }): Promise<Outcome> =>
    deps.store.transaction(async (tx) => {
      const found = await lockRefreshToken(tx, token.jti, token.sid);
      if (!found || found.session.revoked) return { refuse: 'The session has ended' };
      const user = await findUser(tx, { id: found.session.userId });
      if (!user?.enabled) return { refuse: 'The account is not active' };
      if (found.usedAt === null) {
        await markUsed(tx, token.jti);
        const claims = freshClaims(deps, user, token.sid);
        await rotateSession(tx, claims);
        return { grant: { user, claims } };
      }
      const sinceUse = (Date.now() - found.usedAt.getTime()) / 1000;
      if (sinceUse <= deps.config.refreshReuseGraceSeconds)
        return { grant: { user, claims: { ...found.session.current, name: user.username } } };
      const until = await revokeSession(tx, token.sid);
      return { revoke: { sid: token.sid, until: until ?? found.session.expires } };
    });

  return [
    implement(refresh, async ({ body }, ctx): Promise<SessionGrant> => {
      const claims = await verifyRefresh(keyOf(body.refresh_token), body.refresh_token);
      const outcome = await rotate(claims);
      if ('grant' in outcome) return grantOf(deps, outcome.grant.user, outcome.grant.claims);
      if ('revoke' in outcome) {
        announceRevoked(deps, ctx, outcome.revoke.sid, outcome.revoke.until);
        ctx.log.warn({ sid: outcome.revoke.sid }, 'a used refresh token came back after the grace time: its session is revoked');
        throw new ProblemError('invalid_token', 'The refresh token was already used; the session has ended');
      }
      throw new ProblemError('invalid_token', outcome.refuse);
    }),

    implement(logout, async ({ body }, ctx) => {
      const sid = body.sid ?? (body.refresh_token ? (await verifyRefresh(keyOf(body.refresh_token), body.refresh_token)).sid : undefined);
      if (!sid) throw new ProblemError('validation_failed', 'Name the session by sid or refresh_token');
      const until = await revokeSession(deps.store, sid);
      if (until !== null) announceRevoked(deps, ctx, sid, until);
      return null;
    }),

    implement(signingKeys, async () => ({
      issuer: tokenProfile.issuer,
      audience: tokenProfile.accessAudience,
      algorithm: tokenProfile.algorithm,
      keys: [...deps.keys.byKid.values()].map((k) => ({
        kid: k.kid,
        kty: String(k.publicJwk.kty),
        alg: k.publicJwk.alg,
        crv: k.publicJwk.crv,
        x: k.publicJwk.x,
      })),
    })),

    implement(principal, async ({ params }) => {
      const user = await findUser(deps.store, { id: params.userId });
      if (!user) throw new ProblemError('not_found', 'No such user');
      return principalOf(deps, user);
    }),

    implement(revocations, async () => ({ sessions: await liveRevocations(deps.store) })),

    // What a gateway asks of the families it holds live streams for: one answer for many, each user read once.
    implement(sessionStates, async ({ body }) => {
      const families = await sessionFamilies(deps.store, [...new Set(body.sids)]);
      const users = new Map<string, Promise<Principal | null>>();
      const principalById = (id: string): Promise<Principal | null> => {
        let user = users.get(id);
        if (!user) users.set(id, (user = findUser(deps.store, { id }).then((found) => (found ? principalOf(deps, found) : null))));
        return user;
      };
      const sessions = [];
      for (const f of families)
        sessions.push({ sid: f.sid, expires: f.expires, revoked: f.revoked, principal: await principalById(f.userId) });
      return { sessions };
    }),
  ];
}

/** The context type handlers receive, re-exported for the handler files. */
export type { HandlerContext };
