/**
 * Staged messages (`staging.ts`, `@scada/contracts`' `staging.ts`) through the bus contract of a service
 * that stages: a request and a reply larger than one bus message travel whole and leave nothing behind;
 * a reference that does not match its parts (size, digest, count, shape) is 400, never 500, and drops
 * what it named; a space neither takes nor reads another space's parts; a reply too large to stage at all
 * is 413 with nothing written. A staged request is checked by the service whatever a check claim says (the
 * staged flag is not signed), and the parts of a request share its one deadline.
 */
import { randomBytes, randomUUID, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import t from 'tap';
import { busHeaders, defineOperation, maxStagedParts, requestSchema, stagedPartBytes, stagingOperations } from '@scada/contracts';
import { memoryPGlite } from '@scada/testkit/stores';
import { uniqueToken } from '@scada/testkit/buses';
import { serviceErrorCodeHeader } from '../src/bus/bus.ts';
import { MemoryBus } from '../src/bus/memory_bus.ts';
import { call, implement, requestFingerprint, serve } from '../src/rpc.ts';
import type { Bus } from '../src/bus/bus.ts';
import { storeStaging } from '../src/staging.ts';

const log = pino({ level: 'silent' });
const encoder = new TextEncoder();
const mib = 1024 * 1024;

t.test('staged messages on a service that stages', async (t) => {
  const { store, cleanup } = await memoryPGlite();
  t.teardown(cleanup);
  await store.query('create schema config');
  await store.query(await readFile(new URL('../../config-service/migrations/0005_staged_parts.sql', import.meta.url), 'utf8'));
  const bus = new MemoryBus({ defaultTimeoutMs: 20_000 });
  t.teardown(() => bus.close());
  const staged = async () => Number((await store.query<{ n: string }>('select count(*) as n from config.staged_parts')).rows[0]?.n);

  const echo = defineOperation({
    operationId: uniqueToken('echo'),
    service: 'config',
    summary: 'the size and digest of a text',
    tags: [],
    request: requestSchema({ body: Type.Object({ text: Type.String() }) }),
    response: Type.Object({ bytes: Type.Integer(), sha256: Type.String() }),
  });
  const octets = defineOperation({
    operationId: uniqueToken('octets'),
    service: 'config',
    summary: 'octets of a size',
    tags: [],
    request: requestSchema({ query: Type.Object({ size: Type.Integer({ minimum: 0 }) }) }),
    response: Type.Object({ data: Type.Uint8Array(), done: Type.Boolean() }),
    replyOctets: true,
  });
  const served = new Map<number, Buffer>();
  const service = await serve(
    bus,
    { name: 'config', version: '1.0.0', instance: 'i1' },
    [
      implement(echo, async ({ body }) => ({
        bytes: Buffer.byteLength(body.text),
        sha256: createHash('sha256').update(body.text).digest('hex'),
      })),
      implement(octets, async ({ query }) => {
        // Zeros past what a test reads back: cheap to make, and octets are never compressed.
        const data = query.size > 8 * mib ? Buffer.alloc(query.size) : randomBytes(query.size);
        served.set(query.size, data);
        return { data, done: true };
      }),
    ],
    log,
    storeStaging(store, 'config'),
  );
  t.teardown(() => service.stop());
  const ops = stagingOperations.config!;
  const inSpace = (space: string) => ({ requestId: uniqueToken('r'), space, timeoutMs: 20_000 });
  const stagePart = (space: string, id: string, index: number, data: Buffer) =>
    call(bus, ops.stage, { params: {}, query: {}, body: { id, index, data: data.toString('base64') } } as never, inSpace(space));
  /** Sends a reference as a staged request of `echo`, raw: answers the status and the problem's code. */
  const sendReference = async (space: string, reference: unknown) => {
    const data = encoder.encode(typeof reference === 'string' ? reference : JSON.stringify(reference));
    const reply = await bus.request(echo.subject, data, {
      headers: { [busHeaders.requestId]: uniqueToken('r'), [busHeaders.space]: space, [busHeaders.staged]: '1' },
    });
    const status = Number(reply.headers[serviceErrorCodeHeader] ?? 200);
    return { status, code: status === 200 ? null : (JSON.parse(new TextDecoder().decode(reply.data)) as { code: string }).code };
  };
  /** A message of `echo` staged by hand in `space`, and its correct reference. */
  const stageByHand = async (space: string) => {
    const message = Buffer.from(JSON.stringify({ params: {}, query: {}, body: { text: 'x'.repeat(300 * 1024) } }));
    const id = randomUUID();
    const parts = [message.subarray(0, stagedPartBytes), message.subarray(stagedPartBytes)];
    for (const [i, part] of parts.entries()) await stagePart(space, id, i, part);
    return { id, parts: 2, bytes: message.byteLength, sha256: createHash('sha256').update(message).digest('hex') };
  };

  t.test('a request larger than one bus message arrives whole and leaves nothing staged', async (t) => {
    const text = randomBytes(3 * mib).toString('base64');
    const answer = await call(bus, echo, { params: {}, query: {}, body: { text } }, inSpace('s1'));
    t.same(answer, { bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') });
    t.equal(await staged(), 0);
  });

  t.test('a reply larger than one bus message is read back whole and leaves nothing staged', async (t) => {
    const answer = await call(bus, octets, { params: {}, query: { size: 3 * mib } }, inSpace('s1'));
    t.ok(Buffer.from(answer.data).equals(served.get(3 * mib) as Buffer), 'byte for byte');
    t.equal(await staged(), 0);
  });

  t.test('a reference that does not match its parts is 400 and drops them', async (t) => {
    const cases: [string, (ref: Awaited<ReturnType<typeof stageByHand>>) => unknown][] = [
      ['another digest', (ref) => ({ ...ref, sha256: '0'.repeat(64) })],
      ['another size', (ref) => ({ ...ref, bytes: ref.bytes - 1 })],
      ['fewer parts', (ref) => ({ ...ref, parts: 1 })],
      ['more parts', (ref) => ({ ...ref, parts: 3 })],
    ];
    for (const [what, wrong] of cases) {
      const ref = await stageByHand('s1');
      t.same(await sendReference('s1', wrong(ref)), { status: 400, code: 'validation_failed' }, what);
      t.equal(await staged(), 0, `${what}: its parts are dropped`);
    }
    t.same(await sendReference('s1', 'not json'), { status: 400, code: 'malformed_body' });
    t.same(await sendReference('s1', { id: randomUUID(), parts: maxStagedParts + 1, bytes: 1, sha256: '0'.repeat(64) }), {
      status: 400,
      code: 'validation_failed',
    });
    t.same(
      await sendReference('s1', { id: randomUUID(), parts: 1, bytes: 1, sha256: '0'.repeat(64) }),
      {
        status: 400,
        code: 'validation_failed',
      },
      'a reference to nothing',
    );
  });

  t.test("a space neither takes nor reads another space's parts", async (t) => {
    const ref = await stageByHand('s1');
    t.same(await sendReference('s2', ref), { status: 400, code: 'validation_failed' }, 'another space finds no parts');
    t.same(await sendReference('', ref), { status: 400, code: 'validation_failed' }, 'nor does a call outside a space');
    t.equal(await staged(), 2, "the other space's attempts drop nothing of s1's");
    await t.rejects(
      call(bus, ops.read, { params: {}, query: {}, body: { id: ref.id, index: 1, parts: 2 } } as never, inSpace('s2')),
      { code: 'not_found', status: 404 },
      'nor reads them',
    );
    t.equal(await staged(), 2, 'and the read of another space drops nothing');
    t.same(await sendReference('s1', ref), { status: 200, code: null }, 'its own space takes them');
    t.equal(await staged(), 0);
  });

  t.test('a staged request is checked, whatever a check claim says', async (t) => {
    const ref = await stageByHand('s1');
    const send = async (headers: Record<string, string>, body: unknown) => {
      const reply = await bus.request(echo.subject, encoder.encode(JSON.stringify(body)), {
        headers: { [busHeaders.requestId]: uniqueToken('r'), [busHeaders.space]: 's1', ...headers },
      });
      return Number(reply.headers[serviceErrorCodeHeader] ?? 200);
    };
    const claim = { [busHeaders.checked]: requestFingerprint(echo) };
    // The gateway attests no staged request: taking the unsigned staged flag off on the way leaves a
    // reference with no claim, which the service checks as the body and refuses.
    const sent: Record<string, string>[] = [];
    const spy = {
      maxPayload: bus.maxPayload,
      request: async (...args: Parameters<Bus['request']>) => {
        if (args[0] === echo.subject) sent.push({ ...(args[2]?.headers ?? {}) });
        return bus.request(...args);
      },
    } as unknown as Bus;
    const text = 'y'.repeat(2 * mib);
    await call(spy, echo, { params: {}, query: {}, body: { text } }, { ...inSpace('s1'), checked: true });
    await call(spy, echo, { params: {}, query: {}, body: { text: 'small' } }, { ...inSpace('s1'), checked: true });
    t.equal(sent[0]?.[busHeaders.staged], '1', 'the large request went staged');
    t.equal(sent[0]?.[busHeaders.checked], undefined, 'with no check claim');
    t.equal(sent[1]?.[busHeaders.checked], requestFingerprint(echo), 'a request in one message carries it');
    t.equal(await send({}, ref), 400, 'the reference with its staged flag taken off is checked as the body: 400');
    t.equal(await send({ ...claim, [busHeaders.staged]: '1' }, ref), 200, 'the same reference, staged, is taken');
    const malformed = Buffer.from(JSON.stringify({ params: {}, query: {}, body: { text: 42 } }));
    const id = randomUUID();
    await stagePart('s1', id, 0, malformed);
    const reference = { id, parts: 1, bytes: malformed.byteLength, sha256: createHash('sha256').update(malformed).digest('hex') };
    t.equal(await send({ ...claim, [busHeaders.staged]: '1' }, reference), 400, 'a staged message claimed checked is checked: 400');
    t.equal(await staged(), 0);
  });

  t.test("the parts of a request share the request's deadline", async (t) => {
    let stagedParts = 0;
    // The caller's side of the bus, slow to stage: 50 ms a part, 16 parts, 300 ms for the whole exchange.
    const slow = {
      maxPayload: bus.maxPayload,
      request: async (...args: Parameters<Bus['request']>) => {
        if (args[0] === ops.stage.subject) {
          stagedParts++;
          await new Promise((r) => setTimeout(r, 50));
        }
        return bus.request(...args);
      },
    } as unknown as Bus;
    const text = randomBytes(3 * mib).toString('base64');
    const started = Date.now();
    await t.rejects(call(slow, echo, { params: {}, query: {}, body: { text } }, { ...inSpace('s1'), timeoutMs: 300 }), {
      code: 'upstream_timeout',
    });
    t.ok(stagedParts < 16, `staging stopped when the deadline passed (${stagedParts} parts sent)`);
    t.ok(Date.now() - started < 3000, 'the caller is answered near its deadline, not after a fresh one a part');
    await store.query('delete from config.staged_parts');
  });

  t.test('a reply too large to stage is 413, and nothing of it is written', async (t) => {
    const size = maxStagedParts * stagedPartBytes + 1;
    await t.rejects(call(bus, octets, { params: {}, query: { size } }, inSpace('s1')), { code: 'payload_too_large', status: 413 });
    t.equal(await staged(), 0);
  });
});
