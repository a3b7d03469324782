import { Type } from '@sinclair/typebox';
import { defineOperation, requestSchema, ProblemError } from '@scada/contracts';
import { implement, serve, type Bus } from '@scada/platform';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { busTargets } from '@scada/testkit/buses';
import { startGateway } from '../src/server.ts';
import type { GatewayConfig } from '../src/config.ts';

const Item = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), count: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
const fail = defineOperation({
  operationId: 'fail',
  service: 'config',
  summary: 'fails',
  tags: ['Test'],
  request: requestSchema({}),
  response: Type.Null(),
  http: { method: 'GET', path: '/test/fail', status: 200, access: 'public', spaceScoped: false },
});
const slow = defineOperation({
  operationId: 'slow',
  service: 'config',
  summary: 'slow',
  tags: ['Test'],
  request: requestSchema({ query: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 5000 }) }) }),
  response: Type.Object({ waited: Type.Integer() }),
  http: { method: 'GET', path: '/test/slow', status: 200, access: 'public', spaceScoped: false },
});
const create = defineOperation({
  operationId: 'create',
  service: 'config',
  summary: 'creates',
  tags: ['Test'],
  request: requestSchema({ params: Type.Object({ id: Type.String({ pattern: '^[a-z0-9]{1,10}$' }) }), body: Item }),
  response: Item,
  http: { method: 'PUT', path: '/test/items/:id', status: 200, access: 'public', spaceScoped: false },
});
const refuse = defineOperation({
  operationId: 'refuse',
  service: 'config',
  summary: 'refuses',
  tags: ['Test'],
  request: requestSchema({}),
  response: Type.Null(),
  http: { method: 'DELETE', path: '/test/refuse', status: 204, access: 'public', spaceScoped: false },
});
const absent = defineOperation({
  operationId: 'absent',
  service: 'protocol',
  summary: 'nobody serves it',
  tags: ['Test'],
  request: requestSchema({}),
  response: Type.Null(),
  http: { method: 'GET', path: '/test/absent', status: 200, access: 'public', spaceScoped: false },
});
const ops = [fail, slow, create, refuse, absent];

const config: GatewayConfig = {
  httpPort: 1,
  httpsPort: 0,
  trustedProxies: [],
  loginRateLimitPerMinute: 60,
  loginInFlightPerAddress: 8,
  bodyLimitBytes: 1024 * 1024,
  maxSclBytes: 1 << 25,
};

async function setup(t: Test, makeBus: () => Promise<Bus>) {
  const bus = await makeBus();
  // Each side's log lines, as records: who logged a failure, and how loudly.
  const logged = { service: [] as LogLine[], gateway: [] as LogLine[] };
  const capture = (into: LogLine[]) => pino({ level: 'debug' }, { write: (line: string) => void into.push(JSON.parse(line)) });
  const service = await serve(
    bus,
    { name: 'config', version: '0.0.0', instance: 'test' },
    [
      implement(fail, async () => {
        throw new Error('secret internals: relation "config.boards" does not exist');
      }),
      implement(slow, async (req) => {
        await new Promise((r) => setTimeout(r, req.query.ms));
        return { waited: req.query.ms };
      }),
      implement(create, async (req) => req.body),
      implement(refuse, async () => {
        throw new ProblemError('conflict', 'The item has children');
      }),
    ],
    capture(logged.service),
  );
  await bus.flush();
  const gateway = await startGateway({
    bus,
    log: capture(logged.gateway),
    config,
    dataDir: '/nonexistent',
    busTimeoutMs: 1000,
    shutdownGraceMs: 2000,
    host: '127.0.0.1',
    ephemeralPorts: true,
    operations: ops,
  });
  t.teardown(async () => {
    await gateway.stop();
    await service.stop();
    await bus.close();
  });
  return { url: `http://127.0.0.1:${gateway.httpPort}`, gateway, logged };
}

type LogLine = { level: number; msg: string; reqId?: string; err?: unknown };

async function problemOf(res: Response) {
  t.match(res.headers.get('content-type'), /^application\/problem\+json(;|$)/);
  return (await res.json()) as Record<string, unknown>;
}

for (const target of busTargets()) {
  t.test(`problem details on the ${target.name} bus`, async (t) => {
    const { url, logged } = await setup(t, target.make);

    t.test('a route that does not exist answers 404 not_found', async (t) => {
      const res = await fetch(`${url}/api/nothing-here`);
      t.equal(res.status, 404);
      const body = await problemOf(res);
      t.match(body, { status: 404, code: 'not_found', type: 'urn:scada:problem:not_found', title: String });
    });

    t.test('malformed JSON answers 400 without touching the service', async (t) => {
      const res = await fetch(`${url}/test/items/a1`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: '{"name": "x",',
      });
      t.equal(res.status, 400);
      t.match(await problemOf(res), { code: 'malformed_body' });
    });

    t.test('a body that breaks the schema answers 400 validation_failed naming each field', async (t) => {
      const res = await fetch(`${url}/test/items/a1`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: '', count: '1', extra: true }),
      });
      t.equal(res.status, 400);
      const body = await problemOf(res);
      t.equal(body.code, 'validation_failed');
      const paths = (body.errors as { path: string }[]).map((e) => e.path);
      t.ok(paths.includes('/body/name'), 'names the empty name');
      t.ok(paths.includes('/body/count'), 'names the string count');
    });

    t.test('a bad path parameter answers 400', async (t) => {
      const res = await fetch(`${url}/test/items/NOT-VALID`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'a', count: 1 }),
      });
      t.equal(res.status, 400);
      t.match(await problemOf(res), { code: 'validation_failed', errors: [{ path: '/params/id' }] });
    });

    t.test('a valid body reaches the service and comes back', async (t) => {
      const res = await fetch(`${url}/test/items/a1`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'pump', count: 3 }),
      });
      t.equal(res.status, 200);
      t.same(await res.json(), { name: 'pump', count: 3 });
    });

    t.test('a body over 1 MiB answers 413 payload_too_large', async (t) => {
      const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), count: 1 });
      const res = await fetch(`${url}/test/items/a1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: big });
      t.equal(res.status, 413);
      t.match(await problemOf(res), { code: 'payload_too_large' });
    });

    t.test('a body of another media type answers 415', async (t) => {
      const res = await fetch(`${url}/test/items/a1`, { method: 'PUT', headers: { 'content-type': 'application/xml' }, body: '<item/>' });
      t.equal(res.status, 415);
      t.match(await problemOf(res), { code: 'unsupported_media_type' });
    });

    t.test('a failing service answers 500 without its internals', async (t) => {
      const res = await fetch(`${url}/test/fail`);
      t.equal(res.status, 500);
      const text = await res.text();
      t.notMatch(text, /secret|relation|boards|stack|Error:/);
      t.match(JSON.parse(text), { code: 'internal_error', status: 500 });
    });

    t.test("a service's failure is logged once: by the service, with its error; the gateway traces it at debug", async (t) => {
      const id = `failure-${Date.now()}`;
      t.equal((await fetch(`${url}/test/fail`, { headers: { 'x-request-id': id } })).status, 500);
      const ofRequest = (lines: LogLine[]) => lines.filter((l) => l.reqId === id);
      const errors = [...ofRequest(logged.service), ...ofRequest(logged.gateway)].filter((l) => l.level >= 50);
      t.equal(errors.length, 1, 'one error line for the request');
      t.ok(
        ofRequest(logged.service).some((l) => l.level === 50 && l.err),
        'the service logged it, with its error',
      );
      t.notOk(
        ofRequest(logged.gateway).some((l) => l.level >= 40),
        'the gateway logged no warning or error for it',
      );
      t.ok(
        ofRequest(logged.gateway).some((l) => l.level === 20),
        'the gateway traced it at debug with the request id',
      );
    });

    t.test('a problem a service raises reaches the client unchanged', async (t) => {
      const res = await fetch(`${url}/test/refuse`, { method: 'DELETE' });
      t.equal(res.status, 409);
      t.match(await problemOf(res), { code: 'conflict', detail: 'The item has children' });
    });

    t.test('a service with no live replica answers 503 with Retry-After', async (t) => {
      const res = await fetch(`${url}/test/absent`);
      t.equal(res.status, 503);
      t.ok(Number(res.headers.get('retry-after')) > 0);
      t.match(await problemOf(res), { code: 'service_unavailable' });
    });

    t.test('a service slower than the bus timeout answers 504', async (t) => {
      const res = await fetch(`${url}/test/slow?ms=1500`);
      t.equal(res.status, 504);
      t.match(await problemOf(res), { code: 'upstream_timeout' });
    });

    t.test('a wrong method on a known path answers 405 with Allow', async (t) => {
      const res = await fetch(`${url}/test/fail`, { method: 'POST' });
      t.equal(res.status, 405);
      t.match(res.headers.get('allow') ?? '', /GET/);
      t.match(await problemOf(res), { code: 'method_not_allowed' });
    });

    t.test('every answer carries an X-Request-Id, the client one when it is sane', async (t) => {
      const own = await fetch(`${url}/test/slow?ms=0`, { headers: { 'x-request-id': 'plant-42.req:7' } });
      t.equal(own.headers.get('x-request-id'), 'plant-42.req:7');
      const hostile = await fetch(`${url}/test/slow?ms=0`, { headers: { 'x-request-id': 'a b <script>' } });
      t.match(hostile.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      const missing = await fetch(`${url}/nowhere`);
      t.match(missing.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });
  });
}
