/**
 * The NATS subject permissions of each role of the platform, derived from the operation registry, so that
 * a new operation is permitted where it is routed and nowhere else. `render.ts` writes them out as the
 * server configuration shipped in this folder and as the Helm values of the NATS chart; a test holds the
 * shipped files to what this renders.
 *
 * - gateway: publishes every request the gateway routes (and nothing between services), asks for the
 *   services' presence and `$SRV` discovery, and reads the event log and the space versions; subscribes
 *   to events and its own reply inboxes.
 * - auth, config, protocol: answer their own subjects (replies through `allow_responses`), publish only
 *   their own events and the space versions they bump, and call only what their handlers call:
 *   config → protocol's connection statuses; protocol → config's project check and protocol replicas
 *   (requests forwarded to the replica that holds a connection).
 * - protocol, besides: the event stream's sources and its durable consumer of the sites' sessions
 *   (`protocol-site-sessions`), and at a site its own stream.
 * - history: as a service (its calls: protocol's connection read), and a durable consumer of its own
 *   (`history`) on the event stream: it may make or widen the stream, make its consumer, take messages
 *   and acknowledge them.
 * - platform: every part in one process (the edge image, the all-in-one process on NATS).
 */
import {
  allEvents,
  betweenServicesOnly,
  busInboxPrefix,
  events as eventRegistry,
  eventsOf,
  operations,
  serviceCalls,
} from '@scada/contracts';
import { eventStreamName, spaceVersionsBucket } from '@scada/platform';
import { siteLeafPermissions, sitePasswordVariable, siteUser } from './site_permissions.ts';

export const natsRoles = ['gateway', 'auth', 'config', 'protocol', 'history', 'platform'] as const;
export type NatsRole = (typeof natsRoles)[number];

export type Permissions = { publish: string[]; subscribe: string[]; allowResponses: boolean };

function subjectOf(operationId: string): string {
  const op = operations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId}`);
  return op.subject;
}

/**
 * The JetStream API subjects that open, follow and (the creator) make one stream; `*` for a prefix
 * written as a wildcard, whose streams have names of their own per prefix.
 */
function streamApi(stream: string, write: boolean): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    ...(write ? [`$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`] : []),
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
  ];
}

const discovery = ['$SRV.PING', '$SRV.PING.>', '$SRV.INFO', '$SRV.INFO.>', '$SRV.STATS', '$SRV.STATS.>'];

/** The permissions of a role for platforms under `prefix` (`''`: none; `'*'`: any one-token prefix). */
export function permissionsOf(role: NatsRole, prefix: string): Permissions {
  if (role === 'platform') {
    const all = union(
      permissionsOf('gateway', prefix),
      ...(['auth', 'config', 'protocol', 'history'] as const).map((r) => permissionsOf(r, prefix)),
    );
    // One process of every part replies through an inbox of its own; the user is every role, their inboxes too.
    return { ...all, subscribe: [`${busInboxPrefix('platform')}.>`, ...all.subscribe] };
  }
  const p = (s: string) => (prefix ? `${prefix}.${s}` : s);
  const wildcard = prefix === '*';
  const events = wildcard ? '*' : eventStreamName(prefix);
  const bucket = wildcard ? '*' : spaceVersionsBucket(prefix);
  const kvStream = wildcard ? '*' : `KV_${bucket}`;
  const presence = [p('platform.presence'), p('platform.presence.*')];
  const inbox = `${busInboxPrefix(role)}.>`;
  if (role === 'gateway') {
    const routed = operations.filter((o) => !betweenServicesOnly.has(o.operationId)).map((o) => p(o.subject));
    return {
      publish: [...routed, ...presence, ...discovery, '$JS.API.INFO', ...streamApi(events, true), ...streamApi(kvStream, true)],
      subscribe: [inbox, p(allEvents), ...presence],
      allowResponses: false,
    };
  }
  return {
    publish: [
      ...serviceCalls[role].map((id) => p(subjectOf(id))),
      // Its own operations, on its replicas (a request passed to the one that holds a connection).
      p(`${role}.v1.>`),
      p(eventsOf(role)),
      p(`platform.presence.${role}`),
      p('platform.presence'),
      // The space versions they bump: puts to the bucket the gateway made, and nothing of JetStream's
      // administration (a stream or consumer of theirs could store or deliver on any subject).
      '$JS.API.INFO',
      `$KV.${bucket}.>`,
      // The history's durable consumer of the event stream (platform/src/bus/nats_durable_events.ts).
      ...(role === 'history'
        ? [...streamApi(events, true), `$JS.API.CONSUMER.DURABLE.CREATE.${events}.history`, `$JS.ACK.${events}.history.>`]
        : []),
      // Sites (platform/src/bus/site_streams.ts): at the hub the event stream sources the sites' streams
      // and a durable consumer of its own takes their sessions; at a site the service makes its stream.
      ...(role === 'protocol'
        ? [
            ...streamApi(events, true),
            `$JS.API.CONSUMER.LIST.${events}`,
            `$JS.API.CONSUMER.DURABLE.CREATE.${events}.protocol-site-sessions`,
            `$JS.ACK.${events}.protocol-site-sessions.>`,
          ]
        : []),
    ],
    subscribe: [
      inbox,
      p(`${role}.v1.>`),
      ...discovery,
      ...presence,
      // The events it follows (the config replicas holding scheduled scripts hear at once of one
      // scheduled, changed or run elsewhere; the protocol replicas evaluating alarms take up the
      // definitions again when one changes).
      ...eventRegistry.filter((e) => e.followers.includes(role)).map((e) => p(e.pattern)),
    ],
    allowResponses: true,
  };
}

function union(...all: Permissions[]): Permissions {
  return {
    publish: [...new Set(all.flatMap((a) => a.publish))],
    subscribe: [...new Set(all.flatMap((a) => a.subscribe))],
    allowResponses: all.some((a) => a.allowResponses),
  };
}

/** The environment variable the server reads a role's password from. */
export function passwordVariable(role: NatsRole): string {
  return `NATS_${role.toUpperCase()}_PASSWORD`;
}

/** A user of a nats-server configuration: its password from the environment (`$NAME`) or given literally. */
export type ConfigUser = {
  user: string;
  password: { variable: string } | { literal: string };
  permissions: Permissions | 'all';
  leafOnly?: boolean;
};

/** The `authorization` block of a nats-server configuration for these users. */
export function usersBlock(users: ConfigUser[]): string {
  const quote = (s: string) => JSON.stringify(s);
  const list = (items: string[]) => `[\n${items.map((i) => `          ${quote(i)}`).join(',\n')}\n        ]`;
  const entries = users.map((u) => {
    const password = 'variable' in u.password ? `$${u.password.variable}` : quote(u.password.literal);
    // Users outside the platform's roles with every right (a test harness's own connection).
    if (u.permissions === 'all')
      return `    { user: ${quote(u.user)}, password: ${password}, permissions: { publish: ">", subscribe: ">" } }`;
    return [
      '    {',
      `      user: ${quote(u.user)}`,
      `      password: ${password}`,
      // A site's user signs in as a leaf node only, never as a client of the hub.
      ...(u.leafOnly ? ['      allowed_connection_types: ["LEAFNODE"]'] : []),
      '      permissions: {',
      `        publish: { allow: ${list(u.permissions.publish)} }`,
      `        subscribe: { allow: ${list(u.permissions.subscribe)} }`,
      ...(u.permissions.allowResponses ? ['        allow_responses: true'] : []),
      '      }',
      '    }',
    ].join('\n');
  });
  return `authorization {\n  users: [\n${entries.join('\n')}\n  ]\n}\n`;
}

/**
 * The `authorization` block of the platform's (the hub's) nats-server: one user per role, passwords from
 * the environment, and one leaf user per edge site in `sites`.
 */
export function authorizationBlock(
  prefix: string,
  extraUsers: { user: string; password: string }[] = [],
  sites: readonly string[] = [],
): string {
  return usersBlock([
    ...natsRoles.map(
      (role): ConfigUser => ({ user: role, password: { variable: passwordVariable(role) }, permissions: permissionsOf(role, prefix) }),
    ),
    ...sites.map(
      (site): ConfigUser => ({
        user: siteUser(site),
        password: { variable: sitePasswordVariable(site) },
        permissions: siteLeafPermissions(site, prefix),
        leafOnly: true,
      }),
    ),
    ...extraUsers.map((e): ConfigUser => ({ user: e.user, password: { literal: e.password }, permissions: 'all' })),
  ]);
}

/** The same users as the NATS Helm chart's `config.merge` takes them (passwords from the container's environment). */
export function helmAuthorization(prefix: string, sites: readonly string[] = []): Record<string, unknown> {
  const entry = (user: string, variable: string, perms: Permissions, leafOnly = false) => ({
    user,
    password: `<< $${variable} >>`,
    ...(leafOnly ? { allowed_connection_types: ['LEAFNODE'] } : {}),
    permissions: {
      publish: { allow: perms.publish },
      subscribe: { allow: perms.subscribe },
      ...(perms.allowResponses ? { allow_responses: true } : {}),
    },
  });
  return {
    users: [
      ...natsRoles.map((role) => entry(role, passwordVariable(role), permissionsOf(role, prefix))),
      ...sites.map((site) => entry(siteUser(site), sitePasswordVariable(site), siteLeafPermissions(site, prefix), true)),
    ],
  };
}
