import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { sitePattern } from './connections.ts';
import { SessionWarning } from './events.ts';

/*
 * Sites: a protocol service at a substation (SITE=<name>) holds the connections of its site, on a NATS
 * server of its own that is a leaf node of the hub's. The hub's protocol service forwards device requests
 * to it (`protocol.v1.site.<name>.<operation>`), watches whether it answers (`sitePing`), and hands it its site's
 * connections (`siteConnections`, `siteConnectionCopy`, `siteConnectionChunk`), which the site keeps in a
 * store of its own so that it works, and restarts, while the uplink is down.
 */

const tags = ['Sites'];
const SiteName = Type.String({ pattern: sitePattern, description: "A site's name." });

/** A site as the hub sees it. */
export const SiteStatus = Type.Object({
  name: SiteName,
  reachable: Type.Boolean({ description: "Whether the site's protocol service answered the hub's last ping (every 2 s)." }),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When it last answered; null: not since this replica of the hub started.',
  }),
  backlog: Type.Integer({
    minimum: 0,
    description: "Events in the site's stream that have not reached the hub yet (as the hub last knew it).",
  }),
  warnings: Type.Array(SessionWarning, {
    description: "`buffer_overflow`: the site's stream dropped events the hub had not taken (it wrapped during an outage).",
  }),
  inSync: Type.Boolean({
    description:
      'Whether the site holds its connections as they are configured here now (as of its last answer); false while a change waits for the link.',
  }),
});
export type SiteStatus = Static<typeof SiteStatus>;

export const listSites = defineOperation({
  operationId: 'listSites',
  service: 'protocol',
  summary: 'The sites of the space and their links',
  tags,
  description:
    "Every site a connection of the caller's space belongs to (`central` too when one does), with whether its protocol service answers now, when it last did, how many events wait to cross its uplink and its warnings. An extension of the reference interface.",
  request: requestSchema({}),
  response: Type.Array(SiteStatus),
  http: { method: 'GET', path: '/api/sites', status: 200, access: 'viewer', spaceScoped: true, errors: [] },
});

/** What a site's stream holds, as the site answers a ping. */
export const SiteStream = Type.Object({
  firstSeq: Type.Integer({ minimum: 0 }),
  lastSeq: Type.Integer({ minimum: 0 }),
  messages: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 0 }),
  maxBytes: Type.Integer(),
});

export const sitePing = defineOperation({
  operationId: 'sitePing',
  service: 'protocol',
  summary: "A site's protocol service answering the hub",
  tags,
  description: 'Between services only: served by a site on `protocol.v1.site.<name>.sitePing`.',
  request: requestSchema({}),
  response: Type.Object({
    site: SiteName,
    instance: Type.String(),
    stream: Type.Union([SiteStream, Type.Null()]),
    warnings: Type.Array(SessionWarning),
    configuration: Type.String({ description: "A digest of the site's copy of its connections." }),
  }),
});

const SiteCopyRef = Type.Object({ space: Type.String({ maxLength: 200 }), id: Type.String({ maxLength: 64 }) });

export const siteConnections = defineOperation({
  operationId: 'siteConnections',
  service: 'protocol',
  summary: "A site's connections with their versions",
  tags,
  description:
    'Between services only: every connection of the site (all spaces) with a digest of what the site keeps of it (its row, SCL file and report blocks), so the site copies only what changed.',
  request: requestSchema({ body: Type.Object({ site: SiteName }, { additionalProperties: false }) }),
  response: Type.Array(Type.Composite([SiteCopyRef, Type.Object({ version: Type.String() })])),
});

export const siteConnectionCopy = defineOperation({
  operationId: 'siteConnectionCopy',
  service: 'protocol',
  summary: 'What a site keeps of one connection',
  tags,
  description:
    "Between services only: the rows of one connection of the site (the connection, its SCL file's summary, its report blocks), with the keys of its file's chunks and browse parts, which come one by one (`siteConnectionChunk`).",
  request: requestSchema({
    body: Type.Composite([Type.Object({ site: SiteName }), SiteCopyRef], { additionalProperties: false }),
  }),
  response: Type.Object({
    version: Type.String(),
    rows: Type.Record(Type.String(), Type.Array(Type.Unknown())),
    chunks: Type.Integer({ minimum: 0 }),
    parts: Type.Array(Type.Integer({ minimum: 0 })),
  }),
});

export const siteConnectionChunk = defineOperation({
  operationId: 'siteConnectionChunk',
  service: 'protocol',
  summary: "One chunk or browse part of a site connection's SCL file",
  tags,
  description: 'Between services only: one row of `scl_file_chunks` (by `idx`) or `scl_browse_parts` (by `part`).',
  request: requestSchema({
    body: Type.Composite(
      [
        Type.Object({
          site: SiteName,
          table: Type.Union([Type.Literal('scl_file_chunks'), Type.Literal('scl_browse_parts')]),
          key: Type.Integer({ minimum: 0 }),
        }),
        SiteCopyRef,
      ],
      { additionalProperties: false },
    ),
  }),
  response: Type.Object({ row: Type.Unknown() }),
});

export const siteOperations = [listSites, sitePing, siteConnections, siteConnectionCopy, siteConnectionChunk];

/**
 * The subject an operation of the protocol service has at a site: `protocol.v1.site.<name>.<operation>`.
 * The site's name comes before the operation so that one pattern with a last wildcard
 * (`protocol.v1.site.<name>.*`) is every subject of that site: the hub's NATS user of the site allows that
 * pattern, and a site server before nats-server 2.10.25 checks a queue subscription's interest against it
 * with the queue group's name appended to the last token, which only a last `*` matches.
 */
export function siteSubject(subject: string, site: string): string {
  const [context, version, ...rest] = subject.split('.');
  return [context, version, 'site', site, ...rest].join('.');
}
