import { randomUUID } from 'node:crypto';
import {
  deadlineOf,
  authEvents,
  ipFilter as ipFilterOp,
  parseIpFilter,
  principal as principalOp,
  ProblemError,
  revocations as revocationsOp,
  type IpFilter,
  type Principal,
} from '@scada/contracts';
import { call, subscribeEvent, type Bus, type BusSubscription } from '@scada/platform';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { TokenVerifier } from './tokens.ts';

/**
 * What the gateway knows of the auth service's state: the token keys, the revoked session families,
 * the users it has seen and the IP filter. Every gateway replica keeps its own copy, refreshed from the
 * auth service over the bus and kept current by the auth service's events.
 */
export interface AuthView {
  /** Verifies an access token and answers its claims; throws `invalid_token` problems. */
  verifyAccess(token: string, requestId: string): Promise<AccessClaims>;
  /** True when the session family was revoked. */
  isRevoked(sid: string): boolean;
  /** The current state of a user; throws `invalid_token` when the user is gone. */
  principal(userId: string, requestId: string): Promise<Principal>;
  /** Drops this replica's copy of a user, after a change it answered itself, before the event comes back. */
  forgetPrincipal(userId: string): void;
  /** The IP filter to enforce; throws 503 when it has never been loaded. */
  ipFilter(requestId: string): Promise<IpFilter>;
  /** Notes a revocation this replica caused itself, before the event comes back. */
  noteRevoked(sid: string, until: number): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The claims of a verified access token the gateway uses. */
export type AccessClaims = { sub: string; sid: string; jti: string; exp: number; iat: number };

const principalTtlMs = 10_000;
/**
 * A change of the IP filter reaches this replica by its event at once; events are not acknowledged,
 * so the filter is also read again this often, which keeps the contract's bound (every replica within
 * 2 s) when an event is lost. The reads are routine bus traffic and log at debug only.
 */
const ipRefreshMs = 1_000;
const revocationRefreshMs = 15_000;

/** Builds the auth view of a gateway replica on the bus. */
export function busAuthView(deps: { bus: Bus; log: Logger; timeoutMs: number }): AuthView {
  const tokens = new TokenVerifier(deps);
  const revoked = new Map<string, number>();
  // Each kept for principalTtlMs, at most 10,000 (the least recently used go first).
  const principals = new LRUCache<string, Principal>({ max: 10_000, ttl: principalTtlMs });
  let filter: IpFilter | null = null;
  let filterText = '';
  let filterLoad: Promise<IpFilter> | null = null;
  const subscriptions: BusSubscription[] = [];
  const timers: NodeJS.Timeout[] = [];

  const loadFilter = (requestId: string): Promise<IpFilter> =>
    (filterLoad ??= (async () => {
      try {
        const settings = await call(
          deps.bus,
          ipFilterOp,
          { params: {}, query: {} },
          { requestId, timeoutMs: deadlineOf(ipFilterOp, deps.timeoutMs) },
        );
        // The same settings keep the same filter object, so verdicts remembered against it stay valid.
        const text = `${settings.allowedIps ?? ''}\n${settings.deniedIps ?? ''}`;
        if (filter === null || text !== filterText) {
          filter = parseIpFilter(settings).filter;
          filterText = text;
        }
        return filter;
      } finally {
        filterLoad = null;
      }
    })());

  const loadRevocations = async (): Promise<void> => {
    const answer = await call(
      deps.bus,
      revocationsOp,
      { params: {}, query: {} },
      { requestId: randomUUID(), timeoutMs: deadlineOf(revocationsOp, deps.timeoutMs) },
    );
    for (const { sid, until } of answer.sessions) revoked.set(sid, until);
  };

  const background = (what: string, work: () => Promise<unknown>) => () => {
    work().catch((err: unknown) => deps.log.debug({ err, what }, 'auth state refresh failed; keeping the last known'));
  };

  /**
   * A load of the filter that starts after the change just heard of: a load already on its way (the periodic
   * one) may have read the settings before the change, so it is waited for and the filter loaded again.
   * Joining it instead left the change to the next periodic load, a second later and slower under load.
   */
  const reloadFilter = background('ip filter', async () => {
    await filterLoad?.catch(() => undefined);
    await loadFilter(randomUUID());
  });

  return {
    verifyAccess: (token, requestId) => tokens.verify(token, requestId),
    isRevoked(sid) {
      const until = revoked.get(sid);
      return until !== undefined && until * 1000 > Date.now();
    },
    async principal(userId, requestId) {
      const cached = principals.get(userId);
      if (cached) return cached;
      try {
        const value = await call(
          deps.bus,
          principalOp,
          { params: { userId }, query: {} },
          { requestId, timeoutMs: deadlineOf(principalOp, deps.timeoutMs) },
        );
        principals.set(userId, value);
        return value;
      } catch (err) {
        if (err instanceof ProblemError && err.code === 'not_found') {
          throw new ProblemError('invalid_token', 'The token belongs to a user who no longer exists');
        }
        throw err;
      }
    },
    forgetPrincipal(userId) {
      principals.delete(userId);
    },
    async ipFilter(requestId) {
      if (filter) return filter;
      try {
        return await loadFilter(requestId);
      } catch (err) {
        deps.log.warn({ err }, 'the IP filter could not be loaded; refusing requests until it can');
        throw new ProblemError('service_unavailable', 'The IP filter is not known yet', { retryAfter: 5 });
      }
    },
    noteRevoked(sid, until) {
      revoked.set(sid, until);
    },
    async start() {
      subscriptions.push(
        subscribeEvent(deps.bus, authEvents.user, (e) => void (e.id !== null && principals.delete(e.id)), deps.log),
        subscribeEvent(deps.bus, authEvents.space, () => principals.clear(), deps.log),
        subscribeEvent(
          deps.bus,
          authEvents.sessionRevoked,
          (e) => {
            if (e.sid !== undefined && e.until !== undefined) revoked.set(e.sid, e.until);
          },
          deps.log,
        ),
        subscribeEvent(deps.bus, authEvents.ipUpdated, reloadFilter, deps.log),
      );
      const refreshIp = background('ip filter', () => loadFilter(randomUUID()));
      const refreshRevocations = background('revocations', async () => {
        await loadRevocations();
        const now = Date.now() / 1000;
        for (const [sid, until] of revoked) if (until < now) revoked.delete(sid);
      });
      timers.push(setInterval(refreshIp, ipRefreshMs), setInterval(refreshRevocations, revocationRefreshMs));
      for (const timer of timers) timer.unref();
      // A gateway that starts while the auth service answers knows the filter and the revoked sessions
      // before its first request; one that starts without it keeps trying in the background.
      await Promise.allSettled([loadFilter(randomUUID()), loadRevocations()]);
    },
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.all(subscriptions.map((s) => s.unsubscribe()));
    },
  };
}

/**
 * An auth view with no auth service behind it: no IP filter and no valid token. For gateways built in
 * tests of other concerns, whose operations are all public.
 */
export function staticAuthView(): AuthView {
  const refuse = async (): Promise<never> => {
    throw new ProblemError('invalid_token', 'No session can be verified here');
  };
  return {
    verifyAccess: refuse,
    isRevoked: () => false,
    principal: refuse,
    forgetPrincipal: () => {},
    ipFilter: async () => ({ allowed: [], denied: [] }),
    noteRevoked: () => {},
    start: async () => {},
    stop: async () => {},
  };
}
