/**
 * Replies with a large array (a trend of thousands of points, a page of thousands of rows): a service
 * checks and writes them a piece at a time, and what travels is exactly the JSON of the whole reply, as
 * for any other reply: the same bytes whatever the array's length, the fields in the reply's order, a
 * field without a value left out. A reply that breaks its schema anywhere, in the array's last piece or
 * beside the array, is still the service's failure (500), never sent. Same behaviour on both buses.
 */
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import t from 'tap';
import { defineOperation, requestSchema } from '@scada/contracts';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { call, implement, relay, serve } from '../src/rpc.ts';

const log = pino({ level: 'silent' });

const Item = Type.Object({
  t: Type.String({ format: 'date-time' }),
  value: Type.Unknown(),
  quality: Type.Union([Type.String(), Type.Null()]),
  count: Type.Optional(Type.Integer({ minimum: 1 })),
});

/** The items of a reply: every kind of value a trend carries, text beyond ASCII, optional fields given or not. */
function itemsOf(n: number, broken?: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const item: Record<string, unknown> = {
      t: new Date(Date.UTC(2026, 10, 30) + i * 7).toISOString(),
      value: i % 5 === 0 ? { mag: i / 3, unit: 'kV' } : i % 7 === 0 ? `Zustand ü€ ${i}` : i % 11 === 0 ? null : Math.sin(i) * 1e6,
      quality: i % 13 === 0 ? null : 'good',
    };
    if (i % 3 === 0) item.count = i + 1;
    if (i % 17 === 0) item.count = undefined;
    if (i === broken) item.t = 'not a time';
    return item;
  });
}

for (const target of busTargets()) {
  t.test(`replies with a large array on the ${target.name} bus`, async (t) => {
    const bus = await target.make({ defaultTimeoutMs: 10_000 });
    t.teardown(() => bus.close());
    const query = Type.Object({
      n: Type.Integer({ minimum: 0 }),
      broken: Type.Optional(Type.Integer()),
      badName: Type.Optional(Type.Boolean()),
    });
    const trend = defineOperation({
      operationId: `${uniqueToken('large')}Trend`,
      service: 'history',
      summary: 'a trend',
      tags: [],
      request: requestSchema({ query }),
      response: Type.Object({
        name: Type.String(),
        points: Type.Array(Item),
        note: Type.Optional(Type.String()),
        gaps: Type.Array(Type.String()),
      }),
    });
    const list = defineOperation({
      operationId: `${uniqueToken('large')}List`,
      service: 'history',
      summary: 'a list',
      tags: [],
      request: requestSchema({ query }),
      response: Type.Array(Item),
    });
    const sent = new Map<string, unknown>();
    const service = await serve(
      bus,
      { name: uniqueToken('large'), version: '1.0.0', instance: 'i1' },
      [
        implement(trend, async ({ query }) => {
          // Fields in an order of their own, one without a value: the JSON keeps the one and leaves out the other.
          const body = {
            gaps: ['a', 'b'],
            name: query.badName ? 42 : 'Feeder "1" ü',
            note: undefined,
            points: itemsOf(query.n, query.broken),
          };
          sent.set(`trend ${query.n}`, body);
          return body as never;
        }),
        implement(list, async ({ query }) => {
          const body = itemsOf(query.n, query.broken);
          sent.set(`list ${query.n}`, body);
          return body as never;
        }),
      ],
      log,
    );
    t.teardown(() => service.stop());
    const ctx = () => ({ requestId: uniqueToken('r') });

    t.test('the bytes are the JSON of the whole reply, whatever the length of its array', async (t) => {
      for (const n of [0, 999, 1000, 1001, 2500, 10_000]) {
        const bytes = await relay(bus, trend, { params: {}, query: { n } }, ctx());
        t.equal(bytes.toString('utf8'), JSON.stringify(sent.get(`trend ${n}`)), `an object with ${n} items`);
        const listed = await relay(bus, list, { params: {}, query: { n } }, ctx());
        t.equal(listed.toString('utf8'), JSON.stringify(sent.get(`list ${n}`)), `an array of ${n} items`);
      }
      const answer = await call(bus, trend, { params: {}, query: { n: 3000 } }, ctx());
      t.same(answer, JSON.parse(JSON.stringify(sent.get('trend 3000'))), 'call() answers it as the operation response');
      t.same(Object.keys(answer), ['gaps', 'name', 'points'], 'in the order of the reply, the field without a value left out');
    });

    t.test('a reply that breaks its schema anywhere is the service failing, not a reply', async (t) => {
      for (const broken of [0, 999, 1000, 4321, 9999]) {
        await t.rejects(
          call(bus, trend, { params: {}, query: { n: 10_000, broken } }, ctx()),
          { code: 'internal_error', status: 500 },
          `the item at ${broken} of 10,000`,
        );
        await t.rejects(
          call(bus, list, { params: {}, query: { n: 10_000, broken } }, ctx()),
          { code: 'internal_error', status: 500 },
          `the item at ${broken} of a list of 10,000`,
        );
      }
      await t.rejects(
        call(bus, trend, { params: {}, query: { n: 5000, badName: true } }, ctx()),
        { code: 'internal_error', status: 500 },
        'a field beside the array',
      );
      await t.rejects(
        call(bus, trend, { params: {}, query: { n: 10, broken: 3 } }, ctx()),
        { code: 'internal_error', status: 500 },
        'a short array, checked whole',
      );
    });
  });
}
