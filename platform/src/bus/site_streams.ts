/**
 * The event stream across sites. A site runs a NATS server of its own (JetStream domain = the site's
 * name, a leaf node of the hub's) whose event stream keeps what the site's protocol service publishes,
 * on file, within a size bound, while the uplink is down; the hub's event stream `source`s every site's
 * (through `$JS.<site>.API`), so the sourced events reach the hub's followers (the live channel, the
 * history) under their own subjects, once: NATS takes them across in order and resumes after a cut where
 * it left off. The leaf node does not carry `events.>` itself (`deny_exports` in the site's configuration),
 * so an event never arrives at the hub both ways.
 *
 * The in-process bus has no sites: a platform without NATS has only `central`.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType, type StreamSource } from '@nats-io/jetstream';
import { eventSubjects } from './event_log.ts';
import { ensureEventStream, eventStreamName } from './nats_event_log.ts';

/** The state of a site's own event stream, as the site sees it. */
export type SiteStreamState = {
  firstSeq: number;
  lastSeq: number;
  messages: number;
  bytes: number;
  maxBytes: number;
};

/** Per sourced site: events waiting to cross, and how long ago the last crossed. */
export type SiteBacklog = { backlog: number; activeMsAgo: number | null };

export interface SiteStreams {
  /** At a site: makes (or resizes) the site's own event stream, file storage, at most `maxBytes`, oldest dropped. */
  keepLocal(maxBytes: number): Promise<SiteStreamState>;
  /** At a site: the state of its own stream. */
  localState(): Promise<SiteStreamState | null>;
  /** At the hub: has the event stream source each named site's stream (adding the missing ones, keeping the others). */
  source(sites: readonly string[]): Promise<void>;
  /** At the hub: the backlog of every sourced site. */
  backlogs(): Promise<Map<string, SiteBacklog>>;
}

/** Sites on a bus without them (in process): nothing to keep, nothing sourced. */
export const noSiteStreams: SiteStreams = {
  keepLocal: async (maxBytes) => ({ firstSeq: 0, lastSeq: 0, messages: 0, bytes: 0, maxBytes }),
  localState: async () => null,
  source: async () => undefined,
  backlogs: async () => new Map(),
};

/** The JetStream API prefix of a site's domain. */
export function siteApiPrefix(site: string): string {
  return `$JS.${site}.API`;
}

/** How long the hub's event stream keeps events unless another part asked for longer. */
const hubHoldMs = 600_000;

export function natsSiteStreams(nc: NatsConnection, prefix: string): SiteStreams {
  const name = eventStreamName(prefix);
  const lead = prefix ? `${prefix}.` : '';
  const manager = jetstreamManager(nc);
  const stateOf = async (): Promise<SiteStreamState | null> => {
    const jsm = await manager;
    const info = await jsm.streams.info(name).catch(() => null);
    if (!info) return null;
    return {
      firstSeq: info.state.first_seq,
      lastSeq: info.state.last_seq,
      messages: info.state.messages,
      bytes: info.state.bytes,
      maxBytes: info.config.max_bytes,
    };
  };
  return {
    async keepLocal(maxBytes) {
      const jsm = await manager;
      const info = await jsm.streams.info(name).catch(() => null);
      const wanted = {
        name,
        subjects: [`${lead}${eventSubjects}`],
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        storage: StorageType.File,
        max_bytes: maxBytes,
        max_age: 0,
      };
      if (!info)
        await jsm.streams
          .add(wanted)
          .catch(async (err: unknown) => void ((await jsm.streams.info(name).catch(() => null)) ?? Promise.reject(err)));
      else if (info.config.max_bytes !== maxBytes || info.config.max_age !== 0)
        await jsm.streams.update(name, { ...info.config, max_bytes: maxBytes, max_age: 0 });
      return (await stateOf()) as SiteStreamState;
    },
    localState: stateOf,
    async source(sites) {
      const jsm = await manager;
      const info = await ensureEventStream(jsm, prefix, hubHoldMs);
      const have = new Set((info.config.sources ?? []).map((s) => s.external?.api));
      const missing = sites.filter((site) => !have.has(siteApiPrefix(site)));
      if (missing.length === 0) return;
      const sources: StreamSource[] = [
        ...(info.config.sources ?? []),
        ...missing.map((site) => ({ name, external: { api: siteApiPrefix(site), deliver: '' } })),
      ];
      await jsm.streams.update(name, { ...info.config, sources });
    },
    async backlogs() {
      const jsm = await manager;
      const info = await jsm.streams.info(name).catch(() => null);
      const out = new Map<string, SiteBacklog>();
      // The server answers each source's `external` too (the client's type leaves it out).
      for (const s of (info?.sources ?? []) as { external?: { api?: string }; lag?: number; active?: number }[]) {
        const api = s.external?.api ?? '';
        const match = /^\$JS\.(.+)\.API$/.exec(api);
        if (!match) continue;
        // `active` is nanoseconds since the source last heard from the site; -1 or absent: never.
        const active = typeof s.active === 'number' && s.active >= 0 ? Math.round(s.active / 1_000_000) : null;
        out.set(match[1], { backlog: s.lag ?? 0, activeMsAgo: active });
      }
      return out;
    },
  };
}
