/**
 * A site's event stream on a real site NATS server (JetStream domain = the site, a leaf node of a hub's):
 * the site makes it within its size bound; the hub's event stream sources it and knows its backlog; a stream
 * that wraps before the hub took its events is a `buffer_overflow` warning, and one the hub keeps up with
 * is not.
 */
import t from 'tap';
import { busInboxPrefix } from '@scada/contracts';
import { NatsBus } from '@scada/platform';
import { hasNatsServer, startSiteLink } from '@scada/testkit/sites';
import { until } from '@scada/testkit/live';
import { overflowWatch } from '../../src/sites/hub.ts';

const hasNats = hasNatsServer();

t.test('the site stream, sourced by the hub, and its overflow', { skip: hasNats ? false : 'nats-server is not installed' }, async (t) => {
  const site = 'bay-7';
  const link = await startSiteLink(site);
  t.teardown(() => link.stop());
  // Signed in as the site's protocol service and the hub's, with the inboxes each takes its replies in.
  const siteBus = await NatsBus.connect({
    servers: link.site.url,
    name: 'site',
    auth: { user: 'protocol', password: link.users.protocol },
    inboxPrefix: busInboxPrefix('protocol', site),
  });
  t.teardown(() => siteBus.close());
  const hubBus = await NatsBus.connect({
    servers: link.hub.url,
    name: 'hub',
    auth: { user: 'protocol', password: link.users.roles.protocol },
    inboxPrefix: busInboxPrefix('protocol'),
  });
  t.teardown(() => hubBus.close());
  const maxBytes = 1024 * 1024;
  const state = await siteBus.siteStreams().keepLocal(maxBytes);
  t.equal(state.maxBytes, maxBytes, 'the site makes its stream within its bound');
  t.equal(state.messages, 0);

  const body = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(900) }));
  // The hub sources the site's stream and takes what it holds.
  await hubBus.siteStreams().source([site]);
  for (let i = 0; i < 100; i++) siteBus.publish('events.protocol.report', body);
  await siteBus.flush();
  // What the hub has taken: the site's last event less the hub's backlog of it.
  const seen = async () => {
    const backlog = (await hubBus.siteStreams().backlogs()).get(site)?.backlog;
    const local = (await siteBus.siteStreams().localState())!;
    return { firstSeq: local.firstSeq, takenSeq: backlog === undefined ? null : local.lastSeq - backlog, local, backlog };
  };
  await until('the hub took the site events', async () => (await seen()).takenSeq === 100, 20_000);
  const watch = overflowWatch(site);
  t.equal(watch(await seen()), null, 'a stream the hub keeps up with is no overflow');

  // The link goes; the site's stream wraps past what the hub took.
  link.relay.cut();
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < 3000; i++) siteBus.publish('events.protocol.report', body);
  await siteBus.flush();
  const wrapped = await seen();
  t.ok(wrapped.firstSeq > 101, `the stream dropped its oldest (first now ${wrapped.firstSeq})`);
  t.ok(wrapped.local.bytes <= maxBytes, 'and stays within its bound');
  const warning = watch(wrapped);
  t.equal(warning?.code, 'buffer_overflow', 'a wrap past what the hub took: buffer_overflow');
  t.match(warning?.detail, /dropped before the hub took them/);
  t.equal(watch(wrapped), null, 'said once per wrap');
  link.relay.restore();
  await until('the hub took what the site still holds', async () => (await seen()).backlog === 0, 20_000);
  t.equal(watch(await seen()), null, 'and nothing more once the link is back');
  t.same(
    [...link.hub.violations(), ...link.site.violations()],
    [],
    'within the shipped permissions of the hub, the site and its leaf user',
  );
});
