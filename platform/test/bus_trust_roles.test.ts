/**
 * Contexts with a key per role, as a cluster is keyed (deploy/README.md): the calls the services
 * make of each other on their own, and the requests they pass on, are answered; what a role may not vouch
 * for is refused. On each bus `busTargets()` gives, through `SignedBus` as every process on NATS runs it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import { busHeaders, getConnectionValues, ProblemError, siteConnections, sitePing, siteSubject, type Actor } from '@scada/contracts';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { call, implement, onBehalfOf, serve, type Implementation } from '../src/rpc.ts';
import {
  ContextSigner,
  ContextVerifier,
  newBusKey,
  parseTrustedKeys,
  trustedKeyEntry,
  type BusIdentity,
  type BusRole,
} from '../src/bus/trust.ts';
import { SignedBus } from '../src/bus/signed_bus.ts';
import type { Bus, BusService } from '../src/bus/bus.ts';

const protocolService: Actor = { id: 'service:protocol', name: 'protocol', roles: [], spaces: [] };
const script: Actor = { id: 'script:7', name: 'script 7', roles: ['editor'], spaces: ['default'] };
const user: Actor = { id: 'u-1', name: 'operator', roles: ['editor'], spaces: ['default'] };

for (const target of busTargets()) {
  t.test(`a key per role (${target.name} bus)`, async (t) => {
    const refusals: { reason?: string }[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _e, done) {
          const line = JSON.parse(String(chunk)) as { msg: string; reason?: string };
          if (line.msg === 'bus request refused') refusals.push(line);
          done();
        },
      }),
    );
    const identities: Record<string, BusIdentity> = {};
    const roles: Record<string, BusRole> = { gateway: 'gateway', config: 'config', protocol: 'protocol' };
    for (const name of Object.keys(roles)) identities[name] = (await newBusKey()).identity;
    const trusted = await parseTrustedKeys(
      JSON.stringify({ keys: Object.entries(roles).map(([name, role]) => trustedKeyEntry(identities[name]!, [role])) }),
    );
    const inner = await target.make({ defaultTimeoutMs: 3000 });
    t.teardown(() => inner.close());
    const as = (name: string): Bus => new SignedBus(inner, { identity: identities[name]!, trusted }, log);
    const services: BusService[] = [];
    t.teardown(async () => {
      for (const s of services) await s.stop();
    });
    const start = async (bus: Bus, instance: string, impls: Implementation[]) =>
      services.push(await serve(bus, { name: 'protocol', version: '1.0.0', instance }, impls, log));
    /** How a call failed: `<status> <detail>` of its problem (a call that answered is no failure here). */
    const failure = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      );
      return err instanceof ProblemError ? `${err.status} ${err.detail}` : err;
    };
    const refusedWith = async (p: Promise<unknown>) => Number((await failure(p))?.toString().split(' ')[0]);

    const site = uniqueToken('s');
    const pingAt = { ...sitePing, subject: siteSubject(sitePing.subject, site) } as typeof sitePing;
    const hub = as('protocol');
    const atSite = as('protocol');
    await start(atSite, 'site', [
      implement(pingAt, async (_r, ctx) => ({ site, instance: ctx.actor?.id ?? 'nobody', stream: null, warnings: [], configuration: 'd' })),
    ]);
    await start(hub, 'hub', [implement(siteConnections, async () => [])]);

    await t.test('the hub and a site ask each other as the protocol service', async (t) => {
      const pong = await call(hub, pingAt, { params: {}, query: {} } as never, { requestId: randomUUID(), actor: protocolService });
      t.equal(pong.instance, 'service:protocol', 'the site answers the ping');
      t.same(
        await call(atSite, siteConnections, { params: {}, query: {}, body: { site } } as never, {
          requestId: randomUUID(),
          actor: protocolService,
        }),
        [],
        'the hub answers the site',
      );
      t.equal(
        await refusedWith(call(hub, pingAt, { params: {}, query: {} } as never, { requestId: randomUUID() })),
        401,
        'naming no caller is for a gateway alone',
      );
      t.match(refusals.at(-1), { reason: 'only a gateway asks without a caller' });
    });

    // Replica A takes a request for a connection replica B holds and passes it on, as the protocol
    // service's device operations do.
    const atB = { ...getConnectionValues, subject: `${getConnectionValues.subject}.at.${uniqueToken('b')}` } as typeof getConnectionValues;
    const replicaA = as('protocol');
    const replicaB = as('protocol');
    await start(replicaB, 'B', [
      implement(atB, async (_r, ctx) => {
        throw new ProblemError('not_found', `served by B for ${ctx.actor?.id}`);
      }),
    ]);
    await start(replicaA, 'A', [implement(getConnectionValues, async (r, ctx) => call(replicaA, atB, r, onBehalfOf(ctx)))]);
    const request = { params: { connectionId: randomUUID() }, query: {} };
    await t.test("a request passed on to the replica holding the device keeps its caller: a user's, a script's", async (t) => {
      t.equal(
        await failure(call(as('gateway'), getConnectionValues, request, { requestId: randomUUID(), space: 'default', actor: user })),
        '404 served by B for u-1',
      );
      t.equal(
        await failure(call(as('config'), getConnectionValues, request, { requestId: randomUUID(), space: 'default', actor: script })),
        '404 served by B for script:7',
        "a script's, with the config service's context as its origin",
      );
    });

    await t.test('what a role cannot vouch for stays refused, passed on or not', async (t) => {
      const before = refusals.length;
      t.equal(
        await refusedWith(call(as('config'), getConnectionValues, request, { requestId: randomUUID(), space: 'default', actor: user })),
        401,
        'the config service naming a user',
      );
      t.equal(
        await refusedWith(call(replicaA, atB, request, { requestId: randomUUID(), space: 'default', actor: script })),
        401,
        'the protocol service naming a script without its origin',
      );
      t.equal(refusals.length - before, 2, 'each with a warn line');
    });

    await t.test('a request carries its context as its one header; the handler sees the request id and time left from it', async (t) => {
      const echoAt = { ...sitePing, subject: siteSubject(sitePing.subject, uniqueToken('h')) } as typeof sitePing;
      let seen: { requestId: string; budget: number } | undefined;
      await start(as('protocol'), 'headers', [
        implement(echoAt, async (_r, ctx) => {
          seen = { requestId: ctx.requestId, budget: ctx.deadline - Date.now() };
          return { site, instance: 'h', stream: null, warnings: [], configuration: 'd' };
        }),
      ]);
      const travelled: Record<string, string>[] = [];
      const tap = inner.subscribe(echoAt.subject, (msg) => void travelled.push(msg.headers));
      t.teardown(() => tap.unsubscribe());
      await inner.flush();
      const requestId = randomUUID();
      // The budget sent is far above any time the request takes, so what is left at the handler stays above half of it.
      const timeoutMs = 60_000;
      await call(as('protocol'), echoAt, { params: {}, query: {} } as never, { requestId, actor: protocolService, timeoutMs });
      await inner.flush();
      t.same(Object.keys(travelled[0] ?? {}), [busHeaders.context], 'the context is the only header on the way');
      t.equal(seen?.requestId, requestId, "the handler has the caller's request id");
      t.ok(seen && seen.budget > timeoutMs / 2 && seen.budget <= timeoutMs, `and its time left (${seen?.budget} ms)`);
    });
  });
}

t.test('a key per pair of holders: no holder makes what a third accepts as another key’s', async (t) => {
  // A hub's gateway and protocol service, and an edge site's protocol service with a key of its own.
  const names = ['gateway', 'hub', 'site'] as const;
  const identities = Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await newBusKey()).identity]))) as Record<
    (typeof names)[number],
    BusIdentity
  >;
  const trusted = await parseTrustedKeys(
    JSON.stringify({
      keys: [
        trustedKeyEntry(identities.gateway, ['gateway']),
        trustedKeyEntry(identities.hub, ['protocol']),
        trustedKeyEntry(identities.site, ['protocol']),
      ],
    }),
  );
  const trustOf = (n: (typeof names)[number]) => ({ identity: identities[n], trusted });
  const subject = 'scada.protocol.v1.getConnections';
  const data = new TextEncoder().encode('{"params":{},"query":{}}');
  const fields = { [busHeaders.requestId]: randomUUID(), [busHeaders.actor]: JSON.stringify(user), [busHeaders.space]: 'default' };
  const message = (context: string) => ({ subject, data, headers: { ...fields, [busHeaders.context]: context } });
  const hub = new ContextVerifier(trustOf('hub'));
  const site = new ContextVerifier(trustOf('site'));

  const fromGateway = new ContextSigner(trustOf('gateway')).sign(subject, data, fields);
  t.match(hub.verify(message(fromGateway)), { roles: ['gateway'] }, "the hub believes the gateway's context");
  t.match(site.verify(message(fromGateway)), { roles: ['gateway'] }, 'and so does the site: one tag for each key');

  const gatewayId = trusted.get(identities.gateway.kid)!.tagId;
  const claims = { sub: subject, rid: fields[busHeaders.requestId], act: fields[busHeaders.actor], spc: 'default' };
  const now = Math.floor(Date.now() / 1000);
  const made = (n: (typeof names)[number]) =>
    new ContextSigner(trustOf(n)).seal({
      ...claims,
      iss: gatewayId,
      bdy: createHash('sha256').update(data).digest('base64url'),
      jti: randomUUID(),
      iat: now,
      exp: now + 30,
    });
  t.match(
    hub.verify(message(made('site'))),
    { reason: 'the context is not valid (its tag does not check)' },
    'the site cannot pass for the gateway at the hub',
  );
  t.match(site.verify(message(made('hub'))), { reason: 'the context is not valid (its tag does not check)' }, 'nor the hub at the site');
  const asItself = new ContextSigner(trustOf('hub')).sign(subject, data, {
    ...fields,
    [busHeaders.actor]: JSON.stringify(protocolService),
  });
  t.match(site.verify(message(asItself)), { roles: ['protocol'] }, 'the hub speaks as itself at the site');
});

t.test('the time left is the context’s alone: a bare x-timeout-ms beside a context is dropped, as a bare actor is', async (t) => {
  const names = ['gateway', 'protocol'] as const;
  const identities = Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await newBusKey()).identity]))) as Record<
    (typeof names)[number],
    BusIdentity
  >;
  const trusted = await parseTrustedKeys(
    JSON.stringify({ keys: [trustedKeyEntry(identities.gateway, ['gateway']), trustedKeyEntry(identities.protocol, ['protocol'])] }),
  );
  const signer = new ContextSigner({ identity: identities.gateway, trusted });
  const verifier = new ContextVerifier({ identity: identities.protocol, trusted });
  const subject = 'scada.protocol.v1.getConnections';
  const data = new TextEncoder().encode('{"params":{},"query":{}}');
  const fields = { [busHeaders.requestId]: randomUUID(), [busHeaders.actor]: JSON.stringify(user), [busHeaders.space]: 'default' };
  const received = (context: string, beside: Record<string, string>) => {
    const verdict = verifier.verify({ subject, data, headers: { [busHeaders.context]: context, ...beside } });
    return 'headers' in verdict ? verdict.headers : verdict;
  };

  // A caller without a deadline: its context carries no time left, and none may be put beside it on the way.
  const untimed = received(signer.sign(subject, data, fields), { [busHeaders.timeout]: '1' });
  t.notOk('reason' in untimed, 'the context itself is good');
  t.equal((untimed as Record<string, string>)[busHeaders.timeout], undefined, 'a bare time left beside it is not believed');

  const timed = received(signer.sign(subject, data, { ...fields, [busHeaders.timeout]: '5000' }), { [busHeaders.timeout]: '1' });
  t.equal((timed as Record<string, string>)[busHeaders.timeout], '5000', "with one in the context, the context's");
});
