/**
 * An edge site's NATS permissions (contract: "Between services", "Sites"; deploy/README.md, "Edge sites"),
 * on real nats-server processes with the configurations `npm run nats-config` renders: a hub with its leaf
 * user for `substation-1` and for `substation-2`, and the server of `substation-1`, linked as leaf node.
 * Raw NATS clients stand for whatever runs at the site. The site's server takes no anonymous client; its
 * protocol service is held to its own subjects there; and even a client with every right on the site's own
 * server reaches at the hub only what the hub's user of that site allows: it can neither hear nor answer
 * another site's requests, nor call the general API, nor hear the hub's events beyond the alarm
 * definitions its evaluator follows.
 *
 * "Does not arrive" is shown without waiting for time to pass: a message that is allowed goes the same way
 * after the refused one (one publisher, one path, kept in order), and when it has arrived the refused one
 * would have arrived before it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { connect, type NatsConnection, type Status } from '@nats-io/transport-node';
import { busInboxPrefix, siteSubject } from '@scada/contracts';
import { hasNatsServer, startSiteLink, type SiteLink } from '@scada/testkit/sites';
import { until } from '@scada/testkit/live';
import { renderAuthorization, renderSiteAuthorization, siteAuthorizationFile } from '../deploy/nats/render.ts';

const site = 'substation-1';
const other = 'substation-2';
const enc = new TextEncoder();

/** The subjects a connection's subscription received, in order. */
function collect(nc: NatsConnection, subjects: string[]): { got: string[] } {
  const out = { got: [] as string[] };
  for (const subject of subjects)
    nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) out.got.push(msg.subject);
      },
    });
  return out;
}

/** The first error the server reports on a connection (a permissions violation). */
async function firstError(nc: NatsConnection): Promise<Error> {
  for await (const s of nc.status() as AsyncIterable<Status>) if (s.type === 'error') return s.error;
  throw new Error('the connection closed without an error');
}

t.test('the shipped site configuration is what npm run nats-config renders; a bad site name is refused', async (t) => {
  t.equal(readFileSync(siteAuthorizationFile, 'utf8'), renderSiteAuthorization(), 'deploy/edge/site-authorization.conf');
  const hub = renderAuthorization('', [site, other]);
  t.match(
    hub,
    /user: "site-substation-1"\n\s+password: \$NATS_SITE_SUBSTATION_1_PASSWORD\n\s+allowed_connection_types: \["LEAFNODE"\]/,
    'a user per site',
  );
  t.match(hub, /user: "site-substation-2"/);
  for (const bad of ['Bay-1', 'central', 'a.b', 'b'.repeat(33)]) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'deploy/nats/render.ts', '--check', '--sites', `ok-1,${bad}`], {
      encoding: 'utf8',
    });
    t.equal(run.status, 2, `--sites ok-1,${bad}: exit 2`);
    t.match(run.stderr, /a lower-case letter/, 'with the reason');
  }
});

t.test(
  'the permissions of an edge site, on real NATS servers',
  { skip: hasNatsServer() ? false : 'nats-server is not installed' },
  async (t) => {
    const link: SiteLink = await startSiteLink(site, [other]);
    t.teardown(() => link.stop());
    const harness = link.users.harness;
    // At the hub: a client that asks as the all-in-one platform does (its replies under `_INBOX_platform`).
    const hub = await connect({ servers: link.hub.url, user: harness.user, pass: harness.pass, inboxPrefix: busInboxPrefix('platform') });
    t.teardown(() => hub.close());
    // At the site: a client with every right on the site's own server, and the site's protocol service.
    const anything = await connect({
      servers: link.site.url,
      user: harness.user,
      pass: harness.pass,
      inboxPrefix: busInboxPrefix('protocol', site),
    });
    t.teardown(() => anything.close());
    const service = await connect({
      servers: link.site.url,
      user: 'protocol',
      pass: link.users.protocol,
      inboxPrefix: busInboxPrefix('protocol', site),
    });
    t.teardown(() => service.close());

    // The site's ping, answered at the site: the link is up once the hub's request gets through.
    const ping = siteSubject('protocol.v1.sitePing', site);
    // In a queue group, as the site's protocol service serves it (a site server before 2.10.25 checks such interest with the group's name).
    service.subscribe(ping, { queue: 'q', callback: (_err, msg) => void msg.respond(enc.encode('pong')) });
    await service.flush();
    await until(
      'the leaf link carries the ping',
      async () =>
        hub.request(ping, new Uint8Array(), { timeout: 1000 }).then(
          () => true,
          () => false,
        ),
      20_000,
    );

    await t.test('allowed: the hub pings the site, the site copies its connections and takes the alarm definitions', async (t) => {
      t.equal(
        new TextDecoder().decode((await hub.request(ping, new Uint8Array(), { timeout: 5000 })).data),
        'pong',
        'the ping is answered from the site',
      );
      for (const subject of [
        'protocol.v1.siteConnections',
        'protocol.v1.siteConnectionCopy',
        'protocol.v1.siteConnectionChunk',
        'config.v1.alarmDefinitionsOfSpace',
      ])
        hub.subscribe(subject, { callback: (_err, msg) => void msg.respond(enc.encode(subject)) });
      await hub.flush();
      for (const subject of [
        'protocol.v1.siteConnections',
        'protocol.v1.siteConnectionCopy',
        'protocol.v1.siteConnectionChunk',
        'config.v1.alarmDefinitionsOfSpace',
      ]) {
        const answer = await until(
          `${subject} reaches the hub`,
          async () => service.request(subject, new Uint8Array(), { timeout: 1000 }).catch(() => undefined),
          20_000,
        );
        t.equal(new TextDecoder().decode(answer.data), subject, `${subject}: asked at the site, answered by the hub`);
      }
    });

    await t.test('refused: the general API, events and the hub JetStream, from a client with every right at the site', async (t) => {
      const heard = collect(hub, [
        'auth.v1.login',
        'protocol.v1.readConnectionValues',
        'events.>',
        '$JS.hub.API.>',
        'protocol.v1.siteConnections',
      ]);
      await hub.flush();
      await until(
        'the hub asks for the copies',
        async () =>
          anything.request('protocol.v1.siteConnections', new Uint8Array(), { timeout: 1000 }).then(
            () => true,
            () => false,
          ),
        20_000,
      );
      heard.got.length = 0;
      for (const subject of ['auth.v1.login', 'protocol.v1.readConnectionValues', 'events.config.project.created', '$JS.hub.API.INFO']) {
        anything.publish(subject, enc.encode('{}'));
        await t.rejects(
          anything.request(subject, new Uint8Array(), { timeout: 5000 }),
          /no responders/i,
          `${subject}: nobody at the hub answers a site`,
        );
      }
      anything.publish('protocol.v1.siteConnections', new Uint8Array());
      await until('the allowed message behind them arrives', async () => heard.got.includes('protocol.v1.siteConnections'), 20_000);
      t.same(heard.got, ['protocol.v1.siteConnections'], 'the hub heard the allowed message only');
    });

    await t.test("refused: another site's requests and inboxes, and the hub's events, never reach the site", async (t) => {
      const forbidden = [
        siteSubject('protocol.v1.sitePing', other),
        siteSubject('protocol.v1.readConnectionValues', other),
        'protocol.v1.readConnectionValues',
        'auth.v1.login',
        'events.config.project.created',
        'events.auth.user.created',
        `${busInboxPrefix('protocol', other)}.x.1`,
        `${busInboxPrefix('platform')}.x.1`,
        `${busInboxPrefix('gateway')}.x.1`,
      ];
      const heard = collect(anything, [...forbidden, 'events.>', '_INBOX_platform.>', ping]);
      await anything.flush();
      await until(
        'the site hears its own subjects',
        async () => {
          hub.publish(ping, new Uint8Array());
          await hub.flush();
          return heard.got.includes(ping);
        },
        20_000,
      );
      heard.got.length = 0;
      for (const subject of forbidden) hub.publish(subject, enc.encode('{}'));
      // The alarm definitions' changes are the one kind of hub event a site takes (its evaluator follows them).
      hub.publish('events.config.alarm.created', enc.encode('{}'));
      hub.publish(ping, new Uint8Array());
      await until('the allowed messages behind them arrive', async () => heard.got.includes(ping), 20_000);
      t.same(
        [...new Set(heard.got)].sort(),
        ['events.config.alarm.created', ping].sort(),
        "the site heard its own ping and the alarm definitions' change only",
      );
      await t.rejects(
        hub.request(siteSubject('protocol.v1.sitePing', other), new Uint8Array(), { timeout: 5000 }),
        /no responders/i,
        'a request meant for another site finds nobody: this site can neither hear nor answer it',
      );
    });

    await t.test("the site's own server: no anonymous client, its protocol service held to its subjects", async (t) => {
      await t.rejects(
        connect({ servers: link.site.url, reconnect: false }),
        /Authorization Violation/i,
        'a client without credentials is refused',
      );
      await t.rejects(
        connect({ servers: link.site.url, user: 'protocol', pass: 'wrong', reconnect: false }),
        /Authorization Violation/i,
        'and one with a wrong password',
      );
      await t.rejects(
        connect({ servers: link.hub.url, user: `site-${site}`, pass: link.users.sites[site], reconnect: false }),
        /Authorization Violation/i,
        "the hub's user of the site signs in as a leaf node only, never as a client",
      );
      const errors = firstError(service);
      service.publish('auth.v1.login', enc.encode('{}'));
      const err = await errors;
      t.match(err.message, /Permissions Violation for Publish to "auth.v1.login"/, 'the protocol service may not publish the general API');
      const subErrors = firstError(service);
      service.subscribe('events.>');
      t.match((await subErrors).message, /Permissions Violation for Subscription to "events.>"/, 'nor hear every event');
    });

    t.same(link.hub.violations(), [], 'the hub never had to cut the site off: the site server keeps to what the hub told it');
  },
);
