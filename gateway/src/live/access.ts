/**
 * Keeps every open stream within what its session may still see. A stream ends when its session family
 * ends (logout, revocation, expiry: it belongs to the session, so a renewed session keeps it), when its
 * user is disabled or deleted or loses the role or the space, and when the IP filter comes to deny its
 * address. Events (revocations, user and space changes) start a check at once; a sweep twice a second
 * ends streams of sessions this replica knows revoked, judges addresses against a changed filter and
 * asks about sessions whose known end has come; and every
 * `checkMs` every stream is checked again, so that a lost event cannot keep a stream open.
 */
import { randomUUID } from 'node:crypto';
import { deadlineOf, ipAllowed, maxSessionStates, sessionStates, type IpFilter, type SessionFamilyState } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import type { Logger } from 'pino';
import type { AuthView } from '../auth/auth_view.ts';
import type { EndReason, LiveClient } from './client.ts';

/** How often addresses and session ends are looked at: well within the contract's 2 s. */
const sweepMs = 500;

export type StreamAccessDeps = { bus: Bus; auth: AuthView; log: Logger; busTimeoutMs: number };

export class StreamAccess {
  readonly #deps: StreamAccessDeps;
  readonly #checkMs: number;
  readonly #clients: () => Iterable<LiveClient>;
  /** Streams whose session is being asked about now, so that a sweep does not ask twice. */
  readonly #asking = new Set<LiveClient>();
  #timer: NodeJS.Timeout | null = null;
  #lastFull = Date.now();
  /** After a failed check, sessions past their known end are asked about again only from then on. */
  #quietUntil = 0;
  #sweeping = false;

  constructor(deps: StreamAccessDeps, checkMs: number, clients: () => Iterable<LiveClient>) {
    this.#deps = deps;
    this.#checkMs = checkMs;
    this.#clients = clients;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#sweep(), sweepMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Asks the auth service about the sessions of the matching streams now, and ends those no longer allowed. */
  recheck(matches: (client: LiveClient) => boolean): Promise<void> {
    return this.#check([...this.#clients()].filter(matches));
  }

  async #sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      const clients = [...this.#clients()];
      // Revocations this replica knows of (from their events, or its periodic read of them) end at once.
      for (const client of clients) if (this.#deps.auth.isRevoked(client.sid)) client.end('session_ended');
      await this.#judgeAddresses(clients);
      const now = Date.now();
      const full = now - this.#lastFull >= this.#checkMs;
      if (full) this.#lastFull = now;
      const ends = now >= this.#quietUntil;
      const due = clients.filter((c) => !c.ended && !this.#asking.has(c) && (full || (ends && c.expires * 1000 <= now)));
      // Not awaited: a slow answer must not hold up the next sweep's look at the IP filter.
      if (due.length) void this.#check(due);
    } catch (err) {
      this.#deps.log.warn({ err }, 'a sweep of the live streams failed; the next one tries again');
    } finally {
      this.#sweeping = false;
    }
  }

  /** Ends the streams whose address the current IP filter denies; each stream is judged once per filter. */
  async #judgeAddresses(clients: LiveClient[]): Promise<void> {
    let filter: IpFilter;
    try {
      filter = await this.#deps.auth.ipFilter(randomUUID());
    } catch {
      return; // never loaded: requests are refused meanwhile, and the streams are judged once it is
    }
    for (const client of clients) {
      if (client.judgedWith === filter) continue;
      client.judgedWith = filter;
      if (!ipAllowed(filter, client.clientIp)) client.end('ip_denied');
    }
  }

  /**
   * Asks about the sessions of `clients` (many families in one request) and ends those that may no longer
   * stream. When the auth service cannot answer, the streams are kept and asked about again next time.
   */
  async #check(clients: LiveClient[]): Promise<void> {
    for (const client of clients) this.#asking.add(client);
    try {
      const sids = [...new Set(clients.map((c) => c.sid))];
      const states = new Map<string, SessionFamilyState>();
      for (let i = 0; i < sids.length; i += maxSessionStates) {
        const answer = await call(
          this.#deps.bus,
          sessionStates,
          { params: {}, query: {}, body: { sids: sids.slice(i, i + maxSessionStates) } },
          { requestId: randomUUID(), timeoutMs: deadlineOf(sessionStates, this.#deps.busTimeoutMs) },
        );
        for (const state of answer.sessions) states.set(state.sid, state);
      }
      for (const client of clients) {
        const state = states.get(client.sid);
        const verdict = verdictOf(client, state);
        if (verdict) client.end(verdict);
        else if (state) client.expires = state.expires;
      }
    } catch (err) {
      this.#quietUntil = Date.now() + 5000;
      this.#deps.log.warn({ err }, 'could not check the sessions of live streams; keeping them until the next check');
    } finally {
      for (const client of clients) this.#asking.delete(client);
    }
  }
}

/** Why a stream may no longer stream, or null when it may. */
function verdictOf(client: LiveClient, state: SessionFamilyState | undefined): EndReason | null {
  if (!state || state.revoked) return 'session_ended';
  if (state.expires * 1000 <= Date.now()) return 'session_expired';
  const p = state.principal;
  if (!p?.enabled || p.roles.length === 0 || !p.spaces.includes(client.filter.space)) return 'access_ended';
  return null;
}
