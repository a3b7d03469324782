/**
 * One schema check a hop: a message a gateway checked at its edge against the operation's request schema
 * is not checked again by the service, on a gateway's word alone. The word travels inside the context the
 * gateway's key authenticates; a context of another role that claims it is refused with 401 and a warn
 * line, and a bare header, a claim altered on the way or a claim for another schema buys no exemption: the
 * service checks the message and refuses a malformed one with 400. On each bus `busTargets()` gives,
 * through `SignedBus` as every process on NATS runs it.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import { busHeaders, echo, getProjects, ProblemError, type Actor } from '@scada/contracts';
import { busTargets } from '@scada/testkit/buses';
import { implement, relay, requestFingerprint, serve } from '../src/rpc.ts';
import { ContextSigner, newBusKey, parseTrustedKeys, trustedKeyEntry, type BusIdentity, type BusRole } from '../src/bus/trust.ts';
import { SignedBus } from '../src/bus/signed_bus.ts';
import { serviceErrorCodeHeader, type Bus, type BusHeaders } from '../src/bus/bus.ts';

const configService: Actor = { id: 'service:config', name: 'config', roles: [], spaces: [] };
const encoder = new TextEncoder();

for (const target of busTargets()) {
  t.test(`a message is checked once (${target.name} bus)`, async (t) => {
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
    const roles: Record<string, BusRole> = { gateway: 'gateway', config: 'config' };
    for (const name of Object.keys(roles)) identities[name] = (await newBusKey()).identity;
    const trusted = await parseTrustedKeys(
      JSON.stringify({ keys: Object.entries(roles).map(([name, role]) => trustedKeyEntry(identities[name]!, [role])) }),
    );
    const trustOf = (name: string) => ({ identity: identities[name]!, trusted });
    const inner = await target.make({ defaultTimeoutMs: 3000 });
    t.teardown(() => inner.close());
    const as = (name: string): Bus => new SignedBus(inner, trustOf(name), log);
    const received: unknown[] = [];
    const service = await serve(
      as('config'),
      { name: 'config', version: '1.0.0', instance: 'c1' },
      [
        implement(echo, async (request, ctx) => {
          received.push(request);
          return { text: String(request.query.text), space: ctx.space, requestId: ctx.requestId, service: 'config', instance: 'c1' };
        }),
      ],
      log,
    );
    t.teardown(() => service.stop());
    const malformed = { params: {}, query: { text: 42, extra: 'x' } } as never;
    const wellFormed = { params: {}, query: { text: 'hi' } };
    /** The status of the problem a request was refused with; 200 when it was answered. */
    const statusOf = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (err: unknown) => (err instanceof ProblemError ? err.status : Promise.reject(err)),
      );

    await t.test("a gateway's checked message is taken as it is; unchecked, it is checked", async (t) => {
      t.equal(await statusOf(relay(as('gateway'), echo, wellFormed, { requestId: randomUUID(), checked: true })), 200, 'answered');
      received.length = 0;
      t.equal(
        await statusOf(relay(as('gateway'), echo, malformed, { requestId: randomUUID(), checked: true })),
        200,
        'what the gateway checked is not checked again (here a message the gateway would have refused)',
      );
      t.same(received, [{ params: {}, query: { text: 42, extra: 'x' } }], 'the handler had it');
      t.equal(await statusOf(relay(as('gateway'), echo, malformed, { requestId: randomUUID() })), 400, 'not said to be checked: 400');
      t.equal(received.length, 1, 'the handler never had it');
    });

    await t.test("a relayed answer's bytes are memory of their own, of their own length", async (t) => {
      // a short body cut from Node's shared pool would keep a whole pool block alive in the read cache
      const bytes = await relay(as('gateway'), echo, wellFormed, { requestId: randomUUID(), checked: true });
      t.match(JSON.parse(bytes.toString('utf8')), { text: 'hi' });
      t.ok(bytes.length < 4096, 'a short answer');
      t.equal(bytes.byteOffset, 0, 'from the start of its memory');
      t.equal(bytes.buffer.byteLength, bytes.length, 'and no more memory than it holds');
    });

    await t.test('another role saying the message was checked: 401 and a warn line', async (t) => {
      const before = refusals.length;
      const ctx = { requestId: randomUUID(), actor: configService, checked: true };
      t.equal(await statusOf(relay(as('config'), echo, wellFormed, ctx)), 401, 'even well-formed');
      t.equal(await statusOf(relay(as('config'), echo, malformed, { ...ctx, requestId: randomUUID() })), 401, 'malformed');
      t.equal(refusals.length, before + 2, 'a warn line each');
      t.match(refusals.at(-1), { reason: 'only a gateway attests a checked message' });
      t.equal(
        await statusOf(relay(as('config'), echo, malformed, { requestId: randomUUID(), actor: configService })),
        400,
        'the same role without the claim: its message is checked',
      );
    });

    /** A request sent on the bus under the signed bus, with a context made by hand and headers as given. */
    const sendRaw = async (subject: string, message: unknown, headers: BusHeaders) => {
      const reply = await inner.request(subject, encoder.encode(JSON.stringify(message)), { headers });
      return Number(reply.headers[serviceErrorCodeHeader] ?? 200);
    };
    const gatewaySigner = new ContextSigner(trustOf('gateway'));
    const signedHeaders = (message: unknown, fields: BusHeaders): BusHeaders => {
      const headers = { [busHeaders.requestId]: randomUUID(), ...fields };
      return { ...headers, [busHeaders.context]: gatewaySigner.sign(echo.subject, encoder.encode(JSON.stringify(message)), headers) };
    };

    await t.test("a claim that is not a gateway key's word about this schema is no exemption", async (t) => {
      const fingerprint = requestFingerprint(echo);
      const bare = signedHeaders(malformed, {});
      t.equal(
        await sendRaw(echo.subject, malformed, { ...bare, [busHeaders.checked]: fingerprint }),
        400,
        'a bare header beside the context: checked, 400',
      );
      const other = signedHeaders(malformed, { [busHeaders.checked]: requestFingerprint(getProjects) });
      t.equal(await sendRaw(echo.subject, malformed, other), 400, "the fingerprint of another operation's schema: checked, 400");
      const stale = signedHeaders(malformed, { [busHeaders.checked]: 'an-older-schema' });
      t.equal(await sendRaw(echo.subject, malformed, stale), 400, 'the fingerprint of another version of the schema: checked, 400');
      // The claims of a context made without the claim, rewritten to carry it, under the tags made for the original.
      const before = refusals.length;
      const plain = bare[busHeaders.context]!;
      const [claims, tags] = plain.split('.') as [string, string];
      const altered = { ...JSON.parse(Buffer.from(claims, 'base64url').toString()), chk: fingerprint };
      const forged = `${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${tags}`;
      t.equal(await sendRaw(echo.subject, malformed, { ...bare, [busHeaders.context]: forged }), 401, 'the claim added on the way: 401');
      t.match(refusals.at(-1), { reason: 'the context is not valid (its tag does not check)' });
      t.equal(refusals.length, before + 1, 'a warn line');
      const notText = signedHeaders(malformed, {});
      const sealed = gatewaySigner.seal({
        ...JSON.parse(Buffer.from(notText[busHeaders.context]!.split('.')[0]!, 'base64url').toString()),
        chk: true,
      });
      t.equal(await sendRaw(echo.subject, malformed, { ...notText, [busHeaders.context]: sealed }), 401, 'a claim that is not text: 401');
    });
  });
}
