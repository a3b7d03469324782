/**
 * The protocol service at a site (SITE=<name>): it holds the site's connections only, from a copy of
 * them in its own store, and serves the hub on subjects of the site (`protocol.v1.site.<name>.<operation>`): the device
 * operations the hub forwards and the hub's ping. Nothing of the general API is served here, so a request
 * of the hub's never lands at a site by the queue group.
 *
 * Configuration comes down by pulling: every 2 s (and at once when the link returns) the site asks the hub
 * for its connections' digests and copies those that changed (`store/site_copies.ts`). Pulling needs no
 * stream of changes to keep across an outage: the digests say what is different whatever was missed, and a
 * change made at the hub is at the site within one round of the link being up.
 *
 * Events go up through the site's own event stream (`site_streams.ts`), kept on the site's NATS server
 * within SITE_STREAM_MAX_BYTES; the ping answers its state, from which the hub tells a wrap that dropped
 * events it had not taken (`buffer_overflow`, `sites/hub.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  ProblemError,
  siteConnectionChunk,
  siteConnectionCopy,
  siteConnections,
  sitePing,
  siteSubject,
  type Actor,
  type Operation,
} from '@scada/contracts';
import { call, implement, type Bus, type Implementation, type SiteStreamState, type Store } from '@scada/platform';
import { applySiteCopy, configurationDigest, dropSiteCopy, siteVersions } from '../store/site_copies.ts';

/**
 * Who asks when the hub and a site talk about the site's connections: the protocol service itself. Only a
 * gateway may ask without naming a caller, and a site or the hub holds the protocol role's key alone.
 */
export const protocolService: Actor = { id: 'service:protocol', name: 'protocol', roles: [], spaces: [] };

/** The operation as a site serves it. */
export function atSite<O extends Operation>(op: O, site: string): O {
  return { ...op, subject: siteSubject(op.subject, site) };
}

const copyEveryMs = 2000;

const streamCheckMs = 5000;

export type SiteDeps = {
  store: Store;
  bus: Bus;
  log: Logger;
  site: string;
  instance: string;
  streamMaxBytes: number;
  kick(): Promise<void>;
};

export type SiteRuntime = {
  /** What the site serves (on its own subjects), besides the device operations. */
  implementations: Implementation[];
  stop(): Promise<void>;
};

export function startSite(deps: SiteDeps): SiteRuntime {
  const log = deps.log.child({ part: 'site', site: deps.site });
  const streams = deps.bus.siteStreams();
  let stream: SiteStreamState | null = null;
  let stopped = false;
  /** The hub's version of each connection as last copied here. */
  const applied = new Map<string, string>();

  const ctx = () => ({ requestId: `site-${randomUUID()}`, actor: protocolService, timeoutMs: 10_000 });

  /** One round of copying: what the hub has for the site against what is here. */
  const copy = async () => {
    const wanted = await call(deps.bus, siteConnections, { params: {}, query: {}, body: { site: deps.site } } as never, ctx());
    const here = new Map((await siteVersions(deps.store, deps.site)).map((v) => [`${v.space}/${v.id}`, v.version]));
    let changed = 0;
    for (const w of wanted) {
      // Against the hub's version last copied (what is here, after a restart): a report block the site
      // enabled a moment before the hub kept it is not taken away by a copy from before that.
      const k = `${w.space}/${w.id}`;
      if ((applied.get(k) ?? here.get(k)) === w.version) continue;
      const ref = { site: deps.site, space: w.space, id: w.id };
      const rows = await call(deps.bus, siteConnectionCopy, { params: {}, query: {}, body: ref } as never, ctx());
      const fetch = async (table: 'scl_file_chunks' | 'scl_browse_parts', keys: number[]) => {
        const out: unknown[] = [];
        for (const key of keys)
          out.push(
            (await call(deps.bus, siteConnectionChunk, { params: {}, query: {}, body: { ...ref, table, key } } as never, ctx())).row,
          );
        return out.filter((r) => r !== null);
      };
      const chunks = await fetch(
        'scl_file_chunks',
        Array.from({ length: rows.chunks }, (_, i) => i),
      );
      const parts = await fetch('scl_browse_parts', rows.parts);
      await applySiteCopy(deps.store, rows, chunks, parts);
      applied.set(k, rows.version);
      changed++;
    }
    const keep = new Set(wanted.map((w) => `${w.space}/${w.id}`));
    for (const k of here.keys()) {
      if (keep.has(k)) continue;
      const [space, id] = k.split('/');
      await dropSiteCopy(deps.store, space, id);
      applied.delete(k);
      changed++;
    }
    if (changed > 0) {
      log.info({ changed, connections: wanted.length }, "took the hub's changes of the site's connections");
      await deps.kick();
    }
  };

  /** The site's stream: made at start (again, should it be gone); a full one drops its oldest, said in the log. */
  const watchStream = async () => {
    const was = stream;
    stream = (was === null ? null : await streams.localState()) ?? (await streams.keepLocal(deps.streamMaxBytes));
    if (was && stream.firstSeq > was.firstSeq && stream.bytes >= stream.maxBytes * 0.95)
      log.warn({ code: 'buffer_overflow', first: stream.firstSeq }, "the site's event stream is full: its oldest events go");
  };

  let copying: Promise<void> | null = null;
  const copyRound = () => {
    copying ??= copy()
      .catch((err: unknown) => {
        // The hub away is the usual reason, said at debug; anything else is worth a warning.
        if (err instanceof ProblemError && err.code === 'service_unavailable')
          log.debug({ reason: err.message }, 'the hub is not reachable for the copy');
        else log.warn({ err }, "copying the site's connections failed");
      })
      .finally(() => (copying = null));
    return copying;
  };
  const copyTimer = setInterval(() => !stopped && void copyRound(), copyEveryMs);
  copyTimer.unref();
  void copyRound();
  let watching: Promise<void> | null = null;
  const watchRound = () => {
    watching ??= watchStream()
      .catch((err: unknown) => log.warn({ err }, "the site's event stream could not be read"))
      .finally(() => (watching = null));
    return watching;
  };
  const streamTimer = setInterval(() => !stopped && void watchRound(), streamCheckMs);
  streamTimer.unref();
  void watchRound();

  const implementations: Implementation[] = [
    // The stream as it is now: the hub judges from it (and its own backlog) whether events were dropped.
    implement(atSite(sitePing, deps.site), async () => {
      const now = (await streams.localState().catch(() => null)) ?? stream;
      return {
        site: deps.site,
        instance: deps.instance,
        stream: now
          ? { firstSeq: now.firstSeq, lastSeq: now.lastSeq, messages: now.messages, bytes: now.bytes, maxBytes: now.maxBytes }
          : null,
        warnings: [],
        configuration: configurationDigest(await siteVersions(deps.store, deps.site)),
      };
    }),
  ];
  return {
    implementations,
    async stop() {
      stopped = true;
      clearInterval(copyTimer);
      clearInterval(streamTimer);
      await copying;
      await watching;
    },
  };
}
