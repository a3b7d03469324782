/**
 * The hub's side of the sites: which sites there are (those the connections name), whether each one's
 * protocol service answers (a ping every second; a site that did not answer the last one is unreachable, and
 * its device requests are refused at once, never queued), the hub's event stream sourcing every site's, and
 * the sessions of the site connections as the sites announce them.
 *
 * A site's sessions reach the hub as `protocol.session` events through the site stream. The hub keeps the
 * last state of each in its own store under the owner `site:<name>`, with a lease for that owner that each
 * answered ping renews: the session views, statuses and live snapshots of the hub answer them like any
 * other, and a site that stops answering has its sessions read as not held within a lease time.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { centralSite, decodeEvent, ProblemError, protocolEvents, sitePing, type SiteStatus } from '@scada/contracts';
import { BusError, call, type Bus, type DurableEvents, type Store } from '@scada/platform';
import { saveSessionState } from '../store/sessions.ts';
import { configurationDigest, siteVersions } from '../store/site_copies.ts';
import { atSite, protocolService } from './site.ts';

/** How often the hub pings each site, and how long it waits for the answer. */
const pingEveryMs = 1000;
const pingTimeoutMs = 1500;
/** How long a site's sessions count as held after its last answer. */
const siteLeaseMs = 10_000;
/** What a client is told to wait before trying a device of an unreachable site again. */
export const siteRetryAfterSeconds = 5;

/** The lease owner under which the hub keeps a site's sessions. */
export const siteOwner = (site: string) => `site:${site}`;

/** The 503 for a device request to a site that does not answer now. */
export function siteUnreachable(site: string): ProblemError {
  return new ProblemError('site_unreachable', `Site ${site} does not answer now: the request was not sent (it is never queued)`, {
    retryAfter: siteRetryAfterSeconds,
  });
}

type Link = {
  /** The digest of the site's copy of its connections, as it last answered. */
  configuration: string | null;
  reachable: boolean;
  lastSeen: Date | null;
  warnings: { code: string; detail: string }[];
  overflow: (state: { firstSeq: number; takenSeq: number | null }) => { code: string; detail: string } | null;
};

/**
 * Watches a site's stream for a wrap that dropped events the hub had not taken: its first event moved on
 * past the last one the hub had taken (the site's last event less the hub's backlog, as last seen while
 * linked). A stream first seen already wrapped, before anything was taken, is not judged: what the hub
 * took then is not known.
 */
export function overflowWatch(
  site: string,
): (state: { firstSeq: number; takenSeq: number | null }) => { code: string; detail: string } | null {
  let lastFirst: number | null = null;
  let taken: number | null = null;
  return (state) => {
    const moved = lastFirst !== null && state.firstSeq > lastFirst;
    lastFirst = state.firstSeq;
    const dropped = moved && taken !== null && state.firstSeq > taken + 1;
    const detail = `the event stream of site ${site} wrapped: its events ${(taken ?? 0) + 1} to ${state.firstSeq - 1} were dropped before the hub took them`;
    if (state.takenSeq !== null) taken = Math.max(taken ?? 0, state.takenSeq);
    return dropped ? { code: 'buffer_overflow', detail } : null;
  };
}

export type SiteHub = {
  /** Whether the site answered its last ping. */
  reachable(site: string): boolean;
  /** Nobody at the site took a request: unreachable until it answers a ping again. */
  lost(site: string): void;
  /** The sites of a space's connections, with their links. */
  statuses(space: string): Promise<SiteStatus[]>;
  stop(): Promise<void>;
};

/** The sites the connections name, besides `central`. */
async function sitesInUse(store: Store): Promise<string[]> {
  const { rows } = await store.query<{ site: string }>('select distinct site from protocol.connections where site <> $1 order by site', [
    centralSite,
  ]);
  return rows.map((r) => r.site);
}

export async function startSiteHub(deps: { store: Store; bus: Bus; log: Logger; instance: string }): Promise<SiteHub> {
  const log = deps.log.child({ part: 'sites' });
  const links = new Map<string, Link>();
  const streams = deps.bus.siteStreams();
  let sourced = new Set<string>();
  let stopped = false;

  const ping = async (site: string) => {
    const link = links.get(site) ?? { configuration: null, reachable: false, lastSeen: null, warnings: [], overflow: overflowWatch(site) };
    links.set(site, link);
    try {
      const pong = await call(deps.bus, atSite(sitePing, site), { params: {}, query: {} } as never, {
        requestId: `site-ping-${randomUUID()}`,
        actor: protocolService,
        timeoutMs: pingTimeoutMs,
      });
      if (!link.reachable) log.info({ site }, 'the site answers');
      link.reachable = true;
      link.lastSeen = new Date();
      link.configuration = pong.configuration;
      if (pong.stream) {
        const backlog = (await streams.backlogs().catch(() => new Map<string, { backlog: number }>())).get(site)?.backlog;
        const warning = link.overflow({
          firstSeq: pong.stream.firstSeq,
          takenSeq: backlog === undefined ? null : pong.stream.lastSeq - backlog,
        });
        if (warning) {
          log.warn({ site, code: warning.code }, warning.detail);
          link.warnings = [warning];
        }
      }
      // Its sessions are held while it answers.
      await deps.store.query(
        `update protocol.session_leases set expires_at = now() + make_interval(secs => $2::double precision / 1000) where owner = $1`,
        [siteOwner(site), siteLeaseMs],
      );
    } catch (err) {
      if (link.reachable) log.warn({ site, reason: err instanceof Error ? err.message : String(err) }, 'the site does not answer');
      link.reachable = false;
    }
  };

  const round = async () => {
    const sites = await sitesInUse(deps.store).catch(() => [...links.keys()]);
    if (sites.some((s) => !sourced.has(s))) {
      await streams
        .source(sites)
        .then(() => (sourced = new Set(sites)))
        .catch((err: unknown) => log.warn({ err }, "sourcing the sites' streams failed"));
    }
    await Promise.all(sites.map(ping));
  };
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (stopped) return;
    running ??= round().finally(() => (running = null));
  }, pingEveryMs);
  timer.unref();
  running = round().finally(() => (running = null));

  // The sessions the sites announce, kept as the hub's view of them (a durable consumer: none missed across a restart).
  const sessions: DurableEvents = await deps.bus.consumeEvents({
    name: 'protocol-site-sessions',
    subjects: [protocolEvents.session.subject()],
    holdMs: 600_000,
    log,
    handle: async (events) => {
      for (const e of events) {
        const body = decodeEvent(protocolEvents.session, e.data);
        if (!body) continue;
        const { rows } = await deps.store.query<{ site: string; started: boolean }>(
          'select site, started from protocol.connections where space = $1 and id = $2',
          [body.space, body.connectionId],
        );
        const site = rows[0]?.site;
        if (!site || site === centralSite) continue;
        const owner = siteOwner(site);
        await saveSessionState(deps.store, body.space, body.connectionId, {
          owner,
          state: body.state,
          since: body.since,
          lastError: body.lastError,
          reconnects: 0,
          identity: null,
          warnings: body.warnings,
        });
        await deps.store.query(
          `insert into protocol.session_leases (space, connection_id, owner, expires_at)
             select $1, $2, $3, now() + make_interval(secs => $4::double precision / 1000)
              where exists (select 1 from protocol.connections where space = $1 and id = $2)
           on conflict (space, connection_id) do update set owner = excluded.owner, expires_at = excluded.expires_at`,
          [body.space, body.connectionId, owner, siteLeaseMs],
        );
      }
    },
  });

  return {
    reachable: (site) => links.get(site)?.reachable ?? false,
    lost(site) {
      const link = links.get(site);
      if (link?.reachable) log.warn({ site }, 'nobody at the site took a request; it does not answer');
      if (link) link.reachable = false;
    },
    async statuses(space) {
      const { rows } = await deps.store.query<{ site: string }>(
        'select distinct site from protocol.connections where space = $1 order by site',
        [space],
      );
      const backlogs = await streams.backlogs().catch(() => new Map());
      const statuses = [];
      for (const { site } of rows) {
        if (site === centralSite) {
          statuses.push({ name: site, reachable: true, lastSeen: new Date().toISOString(), backlog: 0, warnings: [], inSync: true });
          continue;
        }
        const link = links.get(site);
        const here = configurationDigest(await siteVersions(deps.store, site));
        statuses.push({
          name: site,
          inSync: link?.configuration === here,
          reachable: link?.reachable ?? false,
          lastSeen: link?.lastSeen?.toISOString() ?? null,
          backlog: backlogs.get(site)?.backlog ?? 0,
          warnings: link?.warnings ?? [],
        });
      }
      return statuses;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await sessions.stop();
    },
  };
}

/** Whether a failed request to a site means that nobody there took it (a request to a site nobody serves now). */
export function nobodyThere(err: unknown): boolean {
  return err instanceof ProblemError && !err.relayed && err.code === 'service_unavailable' && err.cause instanceof BusError;
}
