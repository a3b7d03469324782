/**
 * The NATS subject permissions of edge sites (deploy/README.md, "Edge sites"), two sides of one link:
 *
 * - At the hub, one user per site (`site-<name>`), which only a leaf node connection may sign in as. NATS
 *   reads a leaf user's permissions from the site's side: `publish` is what the site may send up to the hub
 *   (the copy operations it calls, the alarm definitions, its answers, its stream's messages to the hub's
 *   source), `subscribe` what the hub lets down to it (requests on its own site subjects, the replies to its
 *   own inboxes, the hub's JetStream requests to its domain, the alarm definitions' changes). Nothing else
 *   crosses: no request of the general API, no other site's subjects or inboxes, no hub event beyond those.
 * - At the site, its own NATS server with a user per process (the site's protocol service), no anonymous
 *   client: the protocol service's subjects, generic over the site's name (the hub's user narrows them).
 */
import { events as eventRegistry, eventsOf, siteInboxRoot, sitePattern, siteSubject } from '@scada/contracts';
import { eventStreamName } from '@scada/platform';
import type { Permissions } from './permissions.ts';

/** What a site calls at the hub: its connections' copies and the alarm definitions it evaluates. */
const siteCalls = [
  'protocol.v1.siteConnections',
  'protocol.v1.siteConnectionCopy',
  'protocol.v1.siteConnectionChunk',
  'config.v1.alarmDefinitionsOfSpace',
];

/** The inboxes of the hub's processes that ask a site something (its protocol service, or every part in one process). */
const hubAskers = ['_INBOX_protocol.>', '_INBOX_platform.>'];

/** The events a protocol service follows (alarm definitions changed), which a site's evaluator takes too. */
function followed(p: (s: string) => string): string[] {
  return eventRegistry.filter((e) => e.followers.includes('protocol')).map((e) => p(e.pattern));
}

/** A site's name as a NATS user of the hub. */
export function siteUser(site: string): string {
  return `site-${site}`;
}

/** The environment variable the hub's server reads a site user's password from (`NATS_SITE_<NAME>_PASSWORD`). */
export function sitePasswordVariable(site: string): string {
  return `NATS_SITE_${site.toUpperCase().replaceAll('-', '_')}_PASSWORD`;
}

/** Refuses a site name the protocol service would refuse (`SITE`), before it lands in a configuration. */
export function checkSiteName(site: string): string {
  if (!new RegExp(sitePattern).test(site) || site === 'central')
    throw new Error(`site "${site}": a lower-case letter, then up to 31 lower-case letters, digits or '-' (and not central)`);
  return site;
}

/** The hub's leaf user of one site, for platforms under `prefix` (`''`: none), from the site's side. */
export function siteLeafPermissions(site: string, prefix: string): Permissions {
  const p = (s: string) => (prefix ? `${prefix}.${s}` : s);
  const stream = eventStreamName(prefix);
  const api = `$JS.${site}.API`;
  return {
    publish: [
      ...siteCalls.map(p),
      // Its answers to the hub's requests (its ping, the device operations), under the hub's inboxes.
      ...hubAskers,
      // The hub's event stream sources the site's: the site's JetStream answers the source's requests
      // (`$JSC.R.<id>`) and delivers the events to the source's subject (`$JS.S.<id>`).
      '$JSC.R.*',
      '$JS.S.*',
    ],
    subscribe: [
      // Requests on its own subjects only: its ping, the device operations the hub forwards.
      p(siteSubject('protocol.v1.*', site)),
      `${siteInboxRoot}.${site}.>`,
      // The hub's source of the site's stream: a consumer made, followed and dropped, and its flow control.
      `${api}.STREAM.INFO.${stream}`,
      `${api}.CONSUMER.CREATE.${stream}`,
      `${api}.CONSUMER.CREATE.${stream}.>`,
      `${api}.CONSUMER.INFO.${stream}.>`,
      `${api}.CONSUMER.DELETE.${stream}.>`,
      `$JS.FC.${stream}.>`,
      ...followed(p),
    ],
    allowResponses: false,
  };
}

/** The site's own protocol service on the site's NATS server (generic over the site's name). */
export function siteServicePermissions(prefix: string): Permissions {
  const p = (s: string) => (prefix ? `${prefix}.${s}` : s);
  const stream = eventStreamName(prefix);
  const presence = [p('platform.presence'), p('platform.presence.*')];
  return {
    publish: [
      ...siteCalls.map(p),
      // Its own subjects: a device request passed to the replica that holds the connection.
      p('protocol.v1.>'),
      p(eventsOf('protocol')),
      p('platform.presence.protocol'),
      p('platform.presence'),
      // Its stream, which the hub sources.
      '$JS.API.INFO',
      `$JS.API.STREAM.INFO.${stream}`,
      `$JS.API.STREAM.CREATE.${stream}`,
      `$JS.API.STREAM.UPDATE.${stream}`,
    ],
    subscribe: [
      `${siteInboxRoot}.*.>`,
      p('protocol.v1.>'),
      '$SRV.PING',
      '$SRV.PING.>',
      '$SRV.INFO',
      '$SRV.INFO.>',
      '$SRV.STATS',
      '$SRV.STATS.>',
      ...presence,
      ...followed(p),
    ],
    allowResponses: true,
  };
}

/** The variable a site's server and its protocol service both read the service's password from (one env file). */
export const servicePasswordVariable = 'NATS_PASSWORD';
