/**
 * Deadlines travel with requests: `call()` sends the time its caller waits, `serve()` counts the handler's
 * deadline from receipt, skips a request whose time is up before any work, and `onBehalfOf()` forwards
 * what is left. Same behaviour on both buses.
 */
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import t from 'tap';
import { busHeaders, defineOperation, ProblemError, requestSchema } from '@scada/contracts';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { serviceErrorCodeHeader } from '../src/bus/bus.ts';
import { call, implement, onBehalfOf, remainingMs, serve, type HandlerContext } from '../src/rpc.ts';

const log = pino({ level: 'silent' });

function ops(name: string) {
  const request = requestSchema({ body: Type.Object({ n: Type.Integer() }) });
  const response = Type.Object({ n: Type.Integer(), remaining: Type.Number() });
  return {
    inner: defineOperation({ operationId: `${name}Inner`, service: 'config', summary: 'inner', tags: [], request, response }),
    outer: defineOperation({ operationId: `${name}Outer`, service: 'config', summary: 'outer', tags: [], request, response }),
  };
}

for (const target of busTargets()) {
  t.test(`deadlines on the ${target.name} bus`, async (t) => {
    const bus = await target.make({ defaultTimeoutMs: 2000 });
    t.teardown(() => bus.close());
    const { inner, outer } = ops(uniqueToken('dl'));
    const seen: HandlerContext[] = [];
    let innerRuns = 0;
    const service = await serve(
      bus,
      { name: 'deadlines', version: '1.0.0', instance: 'i1' },
      [
        implement(
          inner,
          async ({ body }, ctx) => (
            innerRuns++, seen.push(ctx), { n: body.n, remaining: Number.isFinite(ctx.deadline) ? remainingMs(ctx) : -1 }
          ),
        ),
        implement(outer, async ({ body }, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          return call(bus, inner, { params: {}, query: {}, body }, onBehalfOf(ctx));
        }),
      ],
      log,
    );
    t.teardown(() => service.stop());

    t.test('a handler knows how long its caller waits', async (t) => {
      const answer = await call(bus, inner, { params: {}, query: {}, body: { n: 1 } }, { requestId: 'r1', timeoutMs: 1500 });
      t.ok(answer.remaining > 1000 && answer.remaining <= 1500, `about 1.5 s left on receipt (${answer.remaining} ms)`);
    });

    t.test('a forwarded request carries what is left of the deadline, not a fresh one', async (t) => {
      const answer = await call(bus, outer, { params: {}, query: {}, body: { n: 2 } }, { requestId: 'r2', timeoutMs: 1000 });
      t.ok(answer.remaining < 920, `the 100 ms spent before forwarding are gone (${answer.remaining} ms left)`);
      t.equal(seen.at(-1)?.requestId, 'r2', 'the request id travels too');
    });

    t.test('a request whose deadline passed before it was served is answered 504 without running its handler', async (t) => {
      const before = innerRuns;
      const reply = await bus.request(inner.subject, new TextEncoder().encode(JSON.stringify({ params: {}, query: {}, body: { n: 3 } })), {
        headers: { [busHeaders.requestId]: 'r3', [busHeaders.timeout]: '0' },
      });
      t.equal(reply.headers[serviceErrorCodeHeader], '504');
      t.equal(JSON.parse(new TextDecoder().decode(reply.data)).code, 'upstream_timeout');
      t.equal(innerRuns, before, 'the handler never ran');
    });

    t.test('a call without a deadline gives the handler none', async (t) => {
      const reply = await bus.request(inner.subject, new TextEncoder().encode(JSON.stringify({ params: {}, query: {}, body: { n: 4 } })), {
        headers: { [busHeaders.requestId]: 'r4' },
      });
      t.notOk(reply.headers[serviceErrorCodeHeader]);
      t.equal(seen.at(-1)?.deadline, Infinity);
    });

    t.test('the caller gives up at its own deadline', async (t) => {
      const slow = defineOperation({
        operationId: `${uniqueToken('slow')}`,
        service: 'config',
        summary: 'slow',
        tags: [],
        request: requestSchema({}),
        response: Type.Null(),
      });
      const svc = await serve(
        bus,
        { name: 'slow', version: '1.0.0', instance: 'i2' },
        [implement(slow, async () => (await new Promise((resolve) => setTimeout(resolve, 600)), null))],
        log,
      );
      t.teardown(() => svc.stop());
      const err = await call(bus, slow, { params: {}, query: {} }, { requestId: 'r5', timeoutMs: 200 }).catch((e: unknown) => e);
      t.ok(err instanceof ProblemError && err.code === 'upstream_timeout', 'answered 504 after 200 ms');
    });
  });
}
