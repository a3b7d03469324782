/**
 * Trust inside the platform, against a real nats-server started with the permissions this repository
 * ships (deploy/nats): who may connect, who may publish what, and services that act only on a context
 * they can verify.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { headers as natsHeaders, nkeys } from '@nats-io/nats-core';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from '@nats-io/jwt';
import { SignJWT } from 'jose';
import { busHeaders, getProjects } from '@scada/contracts';
import {
  busTrustFrom,
  ContextSigner,
  eventStreamName,
  prefixToken,
  requestFingerprint,
  spaceVersionsBucket,
  type BusTrust,
} from '@scada/platform';
import { authorizationFile, helmValuesFile, renderAuthorization, renderHelmValues } from '../deploy/nats/render.ts';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import { startAuthNats, type AuthNats } from '@scada/testkit/nats_auth';
import { startTestPlatform, testAdminPassword, type TestPlatform } from '@scada/testkit/platform';
import { freePort, startMain } from '@scada/testkit/processes';
import { asAdmin } from '@scada/testkit/session';

const hasNatsServer = spawnSync('nats-server', ['--version']).status === 0;
const encoder = new TextEncoder();

t.test('the shipped NATS permissions are what the operation registry renders', async (t) => {
  t.equal(readFileSync(authorizationFile, 'utf8'), renderAuthorization(), 'deploy/nats/authorization.conf (npm run nats-config)');
  t.equal(readFileSync(helmValuesFile, 'utf8'), renderHelmValues(), 'the NATS Helm values (npm run nats-config)');
});

t.test('stream and bucket names never collide between prefixes', async (t) => {
  const prefixes = ['a.b', 'a_b', 'a-b', 'a__b', 'a._b', 'a_.b', 'a-.b', 'a.-b', 'a_hb', 'a_ub', 'ab', 'a.b.c', 'a.b_c', 'a_b.c'];
  const streams = new Set(prefixes.map(eventStreamName));
  const buckets = new Set(prefixes.map(spaceVersionsBucket));
  t.equal(streams.size, prefixes.length, 'one stream per prefix');
  t.equal(buckets.size, prefixes.length, 'one bucket per prefix');
  t.equal(prefixToken('plant7'), 'plant7', 'a prefix of letters and digits keeps its text');
  for (const p of prefixes) t.match(eventStreamName(p), /^[A-Za-z0-9_-]+$/, `${p}: a valid stream name`);
  // Every prefix of up to four characters from the alphabet that matters.
  const alphabet = ['a', '.', '_', '-', 'h', 'u'];
  const seen = new Map<string, string>();
  const walk = (s: string) => {
    if (s.length > 0 && !s.startsWith('.') && !s.endsWith('.') && !s.includes('..')) {
      const token = prefixToken(s);
      if (seen.has(token)) t.fail(`${s} and ${seen.get(token)} share ${token}`);
      seen.set(token, s);
    }
    if (s.length < 5) for (const c of alphabet) walk(s + c);
  };
  walk('');
  t.ok(seen.size > 1000, `${seen.size} prefixes, no two alike`);
});

t.test('a process on NATS: bad credentials and missing keys stop the start with exit 2', async (t) => {
  // The six processes are independent (none reaches a NATS server: each stops on its configuration or its
  // keys), so they start together and are checked one by one: the same starts, and one wait for their
  // module loading instead of six in a row.
  const keys = roleBusKeys({ gateway: ['gateway'], protocol: ['protocol'] });
  const dir = mkdtempSync(join(tmpdir(), 'scada-keyfile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.pem'), keys.gateway.BUS_SIGNING_KEY!, { mode: 0o644 });
  const onNats = { NATS_URL: 'nats://127.0.0.1:1', SERVICES: 'gateway', HTTP_PORT: '0', HTTPS_PORT: '0' };
  const halfUser = startMain({ NATS_URL: 'nats://127.0.0.1:1', NATS_USER: 'gateway', SERVICES: 'gateway' });
  const noKeys = startMain(onNats);
  const badKey = startMain({ ...onNats, BUS_SIGNING_KEY: 'not a key', BUS_TRUSTED_KEYS: '{"keys": []}' });
  const oldKey = startMain({
    ...onNats,
    BUS_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    BUS_TRUSTED_KEYS: keys.gateway.BUS_TRUSTED_KEYS!,
  });
  const wrongRole = startMain({
    ...onNats,
    BUS_SIGNING_KEY: keys.protocol.BUS_SIGNING_KEY!,
    BUS_TRUSTED_KEYS: keys.protocol.BUS_TRUSTED_KEYS!,
  });
  const openKey = startMain({
    ...onNats,
    BUS_SIGNING_KEY_FILE: join(dir, 'gateway.pem'),
    BUS_TRUSTED_KEYS: keys.gateway.BUS_TRUSTED_KEYS!,
  });
  for (const run of [halfUser, noKeys, badKey, oldKey, wrongRole, openKey])
    t.teardown(() => void (run.child.exitCode === null && run.child.kill('SIGKILL')));

  t.equal(await halfUser.exited, 2);
  t.match(halfUser.output().stderr, /NATS_USER and NATS_PASSWORD: set both or neither/);
  t.equal(await noKeys.exited, 2);
  t.match(noKeys.output().stderr, /BUS_SIGNING_KEY\(_FILE\) and BUS_TRUSTED_KEYS\(_FILE\): required on NATS/);
  t.equal(await badKey.exited, 2);
  t.match(badKey.output().stderr, /BUS_SIGNING_KEY \/ BUS_TRUSTED_KEYS/);
  t.equal(await oldKey.exited, 2);
  t.match(oldKey.output().stderr, /the bus key is an ed25519 key, not X25519 \(npm run bus-keys makes one\)/, 'an Ed25519 key of old');
  t.equal(await wrongRole.exited, 2);
  t.match(
    wrongRole.output().stderr,
    /this process's signing key \(.+\) is not trusted as gateway/,
    'a key not trusted in the role it plays',
  );
  t.equal(await openKey.exited, 2);
  t.match(
    openKey.output().stderr,
    /BUS_SIGNING_KEY_FILE: .* is readable by every user of the machine \(mode 644\)/,
    'a signing key others can read',
  );
});

t.test('NATS with the shipped permissions', { skip: hasNatsServer ? false : 'needs nats-server' }, async (t) => {
  const nats: AuthNats = await startAuthNats(await freePort());
  t.teardown(() => nats.stop());
  // The platform in one process signs in as `platform`; a second key, trusted as the protocol service
  // only, is what a compromised protocol pod would hold.
  const keys = roleBusKeys({ platform: ['gateway', 'auth', 'config', 'protocol', 'history'], protocol: ['protocol'], config: ['config'] });
  const prefix = `b${randomBytes(5).toString('hex')}`;
  const p: TestPlatform = await startTestPlatform({ ...nats.envOf('platform'), ...keys.platform, BUS_SUBJECT_PREFIX: prefix });
  t.teardown(() => p.stop());
  const admin = await asAdmin(p);
  const adminActor = JSON.stringify({ id: admin.userId, name: 'admin', roles: ['admin'], spaces: ['default'] });
  const createUser = `${prefix}.auth.v1.createUser`;
  const spaceVersionsStream = `KV_${spaceVersionsBucket(prefix)}`;
  const body = (username: string) =>
    encoder.encode(
      JSON.stringify({ params: {}, query: {}, body: { username, password: 'a-long-password-9', roles: ['admin'], spaces: ['default'] } }),
    );
  const userExists = async (username: string) => {
    const res = await fetch(`${p.url}/api/users`, { headers: admin.headers });
    return ((await res.json()) as { username: string }[]).some((u) => u.username === username);
  };

  await t.test('a client without credentials, or with wrong ones, is refused', async (t) => {
    await t.rejects(connect({ servers: nats.url, reconnect: false, timeout: 3000 }), 'no credentials');
    await t.rejects(connect({ servers: nats.url, reconnect: false, timeout: 3000, user: 'gateway', pass: 'wrong' }), 'a wrong password');
  });

  await t.test("the protocol service's credentials cannot create a user, with any header", async (t) => {
    const nc = await connect({ servers: nats.url, user: 'protocol', pass: nats.passwords.protocol });
    t.teardown(() => nc.close());
    const h = natsHeaders();
    h.set(busHeaders.actor, adminActor);
    h.set(busHeaders.requestId, randomUUID());
    await t.rejects(nc.request(createUser, body('mallory'), { headers: h, timeout: 1500 }), 'the request goes nowhere');
    t.notOk(await userExists('mallory'), 'no user was created');
  });

  // From here on the harness may publish anything, as a client past the permissions would: what stops it
  // is the service's check of the context.
  const nc: NatsConnection = await connect({ servers: nats.url, user: nats.harness.user, pass: nats.harness.pass });
  t.teardown(() => nc.close());
  const send = async (subject: string, data: Uint8Array, fields: Record<string, string>) => {
    const h = natsHeaders();
    for (const [k, v] of Object.entries(fields)) h.set(k, v);
    const reply = await nc.request(subject, data, { headers: h, timeout: 5000 });
    return { code: reply.headers?.get('Nats-Service-Error-Code') ?? '', text: new TextDecoder().decode(reply.data) };
  };
  /** The trust of a process holding one of `keys`: its key, and the key set every process of the cluster trusts. */
  const trustOf = (key: string, trusted = keys.platform.BUS_TRUSTED_KEYS!): Promise<BusTrust> => busTrustFrom(key, trusted);
  const signed = async (key: string, subject: string, data: Uint8Array, fields: Record<string, string>, trusted?: string) => {
    const signer = new ContextSigner(await trustOf(key, trusted));
    return { ...fields, [busHeaders.context]: signer.sign(subject, data, fields) };
  };

  await t.test('a context made with a gateway key is believed (the control case)', async (t) => {
    const data = body('trusted-by-key');
    const fields = { [busHeaders.requestId]: randomUUID(), [busHeaders.actor]: adminActor };
    const answer = await send(createUser, data, await signed(keys.platform.BUS_SIGNING_KEY!, createUser, data, fields));
    t.equal(answer.code, '', answer.text);
    t.ok(await userExists('trusted-by-key'));
  });

  await t.test('a bare actor header, a forged, expired, misplaced or altered context: 401 and a warn line', async (t) => {
    const data = body('mallory');
    const rid = randomUUID();
    const fields = { [busHeaders.requestId]: rid, [busHeaders.actor]: adminActor };
    const cases: [string, Record<string, string>, Uint8Array?][] = [];
    cases.push(['no context, only the actor header', fields]);
    const stranger = roleBusKeys({ x: ['gateway'] }).x;
    cases.push([
      'made by a key nobody trusts',
      await signed(stranger.BUS_SIGNING_KEY!, createUser, data, fields, stranger.BUS_TRUSTED_KEYS!),
    ]);
    cases.push(['made by the protocol key for an admin', await signed(keys.protocol.BUS_SIGNING_KEY!, createUser, data, fields)]);
    const other = `${prefix}.auth.v1.getUsers`;
    cases.push(['made for another subject', await signed(keys.platform.BUS_SIGNING_KEY!, other, data, fields)]);
    cases.push(['made for another body', await signed(keys.platform.BUS_SIGNING_KEY!, createUser, body('alice'), fields)]);
    const forOther = await signed(keys.platform.BUS_SIGNING_KEY!, createUser, data, fields);
    cases.push(['made for another request', { ...forOther, [busHeaders.requestId]: randomUUID() }]);
    // Made by hand with the platform's own key, each wrong in one thing.
    const platformTrust = await trustOf(keys.platform.BUS_SIGNING_KEY!);
    const platformId = platformTrust.trusted.get(platformTrust.identity.kid)!.tagId;
    const seal = new ContextSigner(platformTrust);
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: createUser, rid, bdy: digestOf(data), act: adminActor, jti: randomUUID(), iat: now, exp: now + 30 };
    const context = (token: string) => ({ ...fields, [busHeaders.context]: token });
    cases.push(['expired', context(seal.seal({ ...claims, iat: now - 60, exp: now - 30 }))]);
    cases.push(['living an hour', context(seal.seal({ ...claims, exp: now + 3600 }))]);
    cases.push(['issued a minute ahead', context(seal.seal({ ...claims, iat: now + 60, exp: now + 90 }))]);
    cases.push(['not before a minute ahead', context(seal.seal({ ...claims, nbf: now + 60 }))]);
    cases.push(['without its request id', context(seal.seal({ ...claims, rid: undefined }))]);
    cases.push(['with a numeric body digest', context(seal.seal({ ...claims, bdy: 7 }))]);
    cases.push(['not a context', context('garbage')]);
    const ed = generateKeyPairSync('ed25519').privateKey;
    const jws = await new SignJWT({ rid, bdy: digestOf(data), act: adminActor })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'scada-bus-context+jwt' })
      .setSubject(createUser)
      .setIssuedAt(now)
      .setExpirationTime(now + 30)
      .sign(ed);
    cases.push(['an Ed25519 JWS, as contexts were until 2026-11-29', context(jws)]);
    // The protocol key naming the gateway's key as its maker: its tags are made with the protocol key's secrets.
    const protocolSeal = new ContextSigner(await trustOf(keys.protocol.BUS_SIGNING_KEY!));
    cases.push([
      "naming the platform's key as its maker, made with the protocol key",
      context(protocolSeal.seal({ ...claims, iss: platformId })),
    ]);
    // Tags for the other keys only: nothing the receiving service can check.
    const othersOnly = {
      ...platformTrust,
      trusted: new Map([...platformTrust.trusted].filter(([kid]) => kid !== platformTrust.identity.kid)),
    };
    cases.push([
      "without a tag for the receiving service's key",
      context(new ContextSigner(othersOnly).seal({ ...claims, iss: platformId })),
    ]);
    const good = seal.seal(claims);
    const [goodClaims, goodTags] = good.split('.') as [string, string];
    const otherClaims = seal.seal({ ...claims, act: JSON.stringify({ id: 'u-9', name: 'x', roles: ['admin'], spaces: ['default'] }) });
    cases.push(["another context's tags on these claims", context(`${otherClaims.split('.')[0]}.${goodTags}`)]);
    // The receiving key's entry comes first (the key set's order): one character of its tag changed.
    const at = goodClaims.length + 1 + 20;
    const flipped = good.slice(0, at) + (good[at] === 'A' ? 'B' : 'A') + good.slice(at + 1);
    cases.push(["the receiving key's tag altered", context(flipped)]);
    cases.push(['its tags padded', context(`${good}=`)]);
    cases.push(['its tags cut short', context(`${goodClaims}.${goodTags.slice(0, -4)}`)]);
    cases.push(['a part too many', context(`${good}.${goodTags}`)]);
    for (const [name, h] of cases) {
      const warnsBefore = p.logs.filter((l) => l.msg === 'bus request refused').length;
      const answer = await send(createUser, data, h);
      t.equal(answer.code, '401', `${name}: 401`);
      t.match(JSON.parse(answer.text), { status: 401, code: 'unauthenticated' }, `${name}: a problem body`);
      t.ok(p.logs.filter((l) => l.msg === 'bus request refused').length > warnsBefore, `${name}: a warn line`);
    }
    t.notOk(await userExists('mallory'), 'no user was created');
    t.ok(p.logs.filter((l) => l.msg === 'bus request refused').every((l) => l.level === 40 && typeof l.reason === 'string'));
  });

  await t.test("a service passes a user's request on only with the gateway's context of that request", async (t) => {
    // A gateway's context for one request, passed on by the protocol key to what the protocol service
    // calls (the project check): accepted (the project does not exist: 404, not 401).
    const read = `${prefix}.config.v1.getProject`;
    const empty = encoder.encode(JSON.stringify({ params: { projectId: 'no-such-project' }, query: {} }));
    const rid = randomUUID();
    const fields = { [busHeaders.requestId]: rid, [busHeaders.actor]: adminActor, [busHeaders.space]: 'default' };
    const origin = (await signed(keys.platform.BUS_SIGNING_KEY!, `${prefix}.protocol.v1.getConnections`, empty, fields))[
      busHeaders.context
    ]!;
    const passedOn = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, { ...fields, [busHeaders.context]: origin });
    t.not((await send(read, empty, passedOn)).code, '401', 'on behalf of a real request');
    const otherActor = JSON.stringify({ id: 'someone', name: 'x', roles: ['admin'], spaces: ['default'] });
    const swapped = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, {
      ...fields,
      [busHeaders.actor]: otherActor,
      [busHeaders.context]: origin,
    });
    t.equal((await send(read, empty, swapped)).code, '401', 'another actor than the origin names');
    const otherRequest = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, {
      ...fields,
      [busHeaders.requestId]: randomUUID(),
      [busHeaders.context]: origin,
    });
    t.equal((await send(read, empty, otherRequest)).code, '401', 'another request than the origin');
  });

  await t.test('what a service key may not do, even with a context it saw', async (t) => {
    const empty = encoder.encode(JSON.stringify({ params: {}, query: {} }));
    const listUsers = `${prefix}.auth.v1.getUsers`;
    const rid = randomUUID();
    const fields = { [busHeaders.requestId]: rid, [busHeaders.actor]: adminActor, [busHeaders.space]: 'default' };
    // A gateway's context of a real request that reached the protocol service…
    const origin = (await signed(keys.platform.BUS_SIGNING_KEY!, `${prefix}.protocol.v1.getConnections_1`, empty, fields))[
      busHeaders.context
    ]!;
    const passOn = async (subject: string, extra: Record<string, string> = {}) =>
      send(
        subject,
        empty,
        await signed(keys.protocol.BUS_SIGNING_KEY!, subject, empty, { ...fields, ...extra, [busHeaders.context]: origin }),
      );
    t.equal((await passOn(listUsers)).code, '401', '…passed on to an operation the protocol service never calls: 401');
    const read = `${prefix}.config.v1.getProjects`;
    t.equal((await passOn(read, { [busHeaders.space]: 'other-tenant' })).code, '401', '…naming another space than its origin: 401');
    t.equal((await passOn(read, { [busHeaders.clientIp]: '10.9.9.9' })).code, '401', '…naming another client address: 401');
    const noCaller = { [busHeaders.requestId]: randomUUID() };
    const bare = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, noCaller);
    t.equal((await send(read, empty, bare)).code, '401', 'a request without a caller from a service key: 401');
    const adminService = JSON.stringify({ id: 'service:protocol', name: 'p', roles: ['admin'], spaces: ['default'] });
    const asAdminService = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, { ...noCaller, [busHeaders.actor]: adminService });
    t.equal((await send(read, empty, asAdminService)).code, '401', 'a service that calls itself an administrator: 401');
    const once = await signed(keys.platform.BUS_SIGNING_KEY!, read, empty, { ...fields, [busHeaders.requestId]: randomUUID() });
    t.equal((await send(read, empty, once)).code, '', 'a context serves its request');
    t.equal((await send(read, empty, once)).code, '401', 'the same context again: 401');
  });

  await t.test("that a message was checked at the edge is a gateway key's word only", async (t) => {
    const read = `${prefix}.config.v1.getProjects`;
    const message = { params: {}, query: {} };
    const empty = encoder.encode(JSON.stringify(message));
    const self = JSON.stringify({ id: 'service:config', name: 'config', roles: [], spaces: ['default'] });
    const fields = () => ({ [busHeaders.requestId]: randomUUID(), [busHeaders.actor]: self, [busHeaders.space]: 'default' });
    const fingerprint = requestFingerprint(getProjects);
    t.not(
      (await send(read, empty, await signed(keys.config.BUS_SIGNING_KEY!, read, empty, fields()))).code,
      '401',
      'the config key, for itself',
    );
    const warnsBefore = p.logs.filter((l) => l.msg === 'bus request refused').length;
    const claiming = await signed(keys.config.BUS_SIGNING_KEY!, read, empty, { ...fields(), [busHeaders.checked]: fingerprint });
    t.equal((await send(read, empty, claiming)).code, '401', 'the config key saying the message was checked: 401');
    t.match(p.logs.filter((l) => l.msg === 'bus request refused').at(-1), { reason: 'only a gateway attests a checked message' });
    t.ok(p.logs.filter((l) => l.msg === 'bus request refused').length > warnsBefore, 'a warn line');
    // The gateway's word: a malformed message it says it checked is not checked again, one it does not is.
    const bad = encoder.encode(JSON.stringify({ params: {}, query: { limit: 'many', extra: 1 } }));
    const gatewayFields = { ...fields(), [busHeaders.actor]: adminActor };
    const unchecked = await send(read, bad, await signed(keys.platform.BUS_SIGNING_KEY!, read, bad, gatewayFields));
    t.equal(unchecked.code, '400', 'unchecked by the gateway: the service checks it');
    const bare = await signed(keys.platform.BUS_SIGNING_KEY!, read, bad, { ...gatewayFields, [busHeaders.requestId]: randomUUID() });
    t.equal(
      (await send(read, bad, { ...bare, [busHeaders.checked]: fingerprint })).code,
      '400',
      'a bare header beside the context: checked',
    );
  });

  await t.test("the protocol service's NATS user reads no one else's replies and administers no stream", async (t) => {
    const spy = await connect({ servers: nats.url, user: 'protocol', pass: nats.passwords.protocol });
    t.teardown(() => spy.close());
    const caught: string[] = [];
    for (const inbox of ['_INBOX.>', '_INBOX_gateway.>', '_INBOX_platform.>'])
      spy.subscribe(inbox, { callback: (err, msg) => void (err ? undefined : caught.push(msg.subject)) });
    await spy.flush().catch(() => {});
    const res = await fetch(`${p.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: testAdminPassword }),
    });
    t.equal(res.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    t.same(caught, [], 'no reply reached it');
    const jsm = await connect({ servers: nats.url, user: 'protocol', pass: nats.passwords.protocol });
    t.teardown(() => jsm.close());
    for (const api of [
      `$JS.API.STREAM.UPDATE.${spaceVersionsStream}`,
      `$JS.API.CONSUMER.CREATE.${spaceVersionsStream}`,
      `$JS.API.STREAM.DELETE.${eventStreamName(prefix)}`,
    ])
      await t.rejects(jsm.request(api, encoder.encode('{}'), { timeout: 1000 }), `${api}: refused`);
  });

  await t.test('a service speaks for itself, and for no other service', async (t) => {
    const read = `${prefix}.config.v1.getProject`;
    const empty = encoder.encode(JSON.stringify({ params: { projectId: 'no-such-project' }, query: {} }));
    const own = JSON.stringify({ id: 'service:protocol', name: 'protocol service', roles: ['viewer'], spaces: ['default'] });
    const fields = { [busHeaders.requestId]: randomUUID(), [busHeaders.actor]: own, [busHeaders.space]: 'default' };
    const answer = await send(read, empty, await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, fields));
    t.not(answer.code, '401', `as itself: served (${answer.text.slice(0, 80)})`);
    const posing = JSON.stringify({ id: 'service:auth', name: 'auth service', roles: ['admin'], spaces: ['default'] });
    const posed = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, { ...fields, [busHeaders.actor]: posing });
    t.equal((await send(read, empty, posed)).code, '401', 'as another service: 401');
    const script = JSON.stringify({ id: 'script:7', name: 'script 7', roles: ['editor'], spaces: ['default'] });
    const statuses = `${prefix}.protocol.v1.connectionStatusesOfProject`;
    const query = encoder.encode(JSON.stringify({ params: {}, query: { projectId: 'no-such-project' } }));
    const byConfig = await signed(keys.config.BUS_SIGNING_KEY!, statuses, query, { ...fields, [busHeaders.actor]: script });
    t.not((await send(statuses, query, byConfig)).code, '401', 'the config service runs scripts: it speaks for script:7');
    const byProtocol = await signed(keys.protocol.BUS_SIGNING_KEY!, read, empty, { ...fields, [busHeaders.actor]: script });
    t.equal((await send(read, empty, byProtocol)).code, '401', 'the protocol service does not');
  });
});

function digestOf(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('base64url');
}

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

t.test(
  'NATS over TLS with client certificates',
  { skip: hasNatsServer && hasOpenssl ? false : 'needs nats-server and openssl' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'scada-nats-tls-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const ssl = (...args: string[]) => {
      const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
    };
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=scada test CA');
    for (const [name, san] of [
      ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
      ['client', 'extendedKeyUsage=clientAuth'],
    ] as const) {
      ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=scada ${name}`);
      writeFileSync(join(dir, `${name}.ext`), `${san}\n`);
      ssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    }
    const port = await freePort();
    writeFileSync(
      join(dir, 'nats.conf'),
      [
        `listen: 127.0.0.1:${port}`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`,
        `tls { cert_file: "${join(dir, 'server.pem')}", key_file: "${join(dir, 'server.key')}", ca_file: "${join(dir, 'ca.pem')}", verify: true }`,
      ].join('\n'),
    );
    const server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], { stdio: 'ignore' });
    t.teardown(() => void server.kill('SIGTERM'));
    await waitForPort(port);
    const url = `tls://127.0.0.1:${port}`;
    const tlsFiles = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'client.pem'), keyFile: join(dir, 'client.key') };
    await t.rejects(
      connect({ servers: url, reconnect: false, timeout: 3000, tls: { caFile: tlsFiles.caFile } }),
      'no client certificate: refused',
    );
    const p = await startTestPlatform({
      NATS_URL: url,
      NATS_TLS_CA: tlsFiles.caFile,
      NATS_TLS_CERT: tlsFiles.certFile,
      NATS_TLS_KEY: tlsFiles.keyFile,
      BUS_SUBJECT_PREFIX: `tls${randomBytes(4).toString('hex')}`,
    });
    t.teardown(() => p.stop());
    t.equal(p.proc.bus.kind, 'nats');
    const admin = await asAdmin(p);
    const res = await fetch(`${p.url}/api/projects`, { headers: admin.headers });
    t.equal(res.status, 200, 'sign-in and a configuration read travel over NATS with TLS');
  },
);

async function waitForPort(port: number): Promise<void> {
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const open = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

t.test(
  'NATS with a credentials file (operator mode, user JWT and NKey seed)',
  { skip: hasNatsServer ? false : 'needs nats-server' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'scada-nats-creds-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const operator = nkeys.createOperator();
    const account = nkeys.createAccount();
    const system = nkeys.createAccount();
    const user = nkeys.createUser();
    const operatorJwt = await encodeOperator('scada-test', operator);
    // Limits not given are 0 in an account JWT: no connection, no subscription.
    const unlimited = {
      subs: -1,
      data: -1,
      payload: -1,
      conn: -1,
      leaf: -1,
      imports: -1,
      exports: -1,
      wildcards: true,
      mem_storage: -1,
      disk_storage: -1,
      streams: -1,
      consumer: -1,
    };
    const accountJwt = await encodeAccount('platform', account, { limits: unlimited }, { signer: operator });
    const systemJwt = await encodeAccount('SYS', system, {}, { signer: operator });
    const userJwt = await encodeUser('platform', user, account);
    const creds = join(dir, 'platform.creds');
    writeFileSync(creds, fmtCreds(userJwt, user), { mode: 0o600 });
    const port = await freePort();
    writeFileSync(
      join(dir, 'nats.conf'),
      [
        `listen: 127.0.0.1:${port}`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`,
        `operator: ${operatorJwt}`,
        `system_account: ${system.getPublicKey()}`,
        'resolver: MEMORY',
        `resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`,
      ].join('\n'),
    );
    const server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], { stdio: 'ignore' });
    t.teardown(() => void server.kill('SIGTERM'));
    await waitForPort(port);
    const url = `nats://127.0.0.1:${port}`;
    await t.rejects(connect({ servers: url, reconnect: false, timeout: 3000 }), 'no credentials: refused');
    const p = await startTestPlatform({
      NATS_URL: url,
      NATS_USER: '',
      NATS_PASSWORD: '',
      NATS_TOKEN: '',
      NATS_CREDS: creds,
      BUS_SUBJECT_PREFIX: `cr${randomBytes(4).toString('hex')}`,
    });
    t.teardown(() => p.stop());
    const admin = await asAdmin(p);
    t.equal((await fetch(`${p.url}/api/projects`, { headers: admin.headers })).status, 200, 'the platform signs in with the file');
  },
);
