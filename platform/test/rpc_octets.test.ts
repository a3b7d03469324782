/**
 * Replies of octets (`replyOctets`): the reply's `data` travels as the bus message's body as it is, its
 * other fields as JSON in a header; `call()` answers them as the operation's response, a problem still
 * travels as a problem, and a reply past what one bus message carries is 413. Same behaviour on both buses.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import t from 'tap';
import { busHeaders, defineOperation, ProblemError, requestSchema } from '@scada/contracts';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { call, implement, serve } from '../src/rpc.ts';

const log = pino({ level: 'silent' });

for (const target of busTargets()) {
  t.test(`replies of octets on the ${target.name} bus`, async (t) => {
    const bus = await target.make({ defaultTimeoutMs: 5000 });
    t.teardown(() => bus.close());
    const piece = defineOperation({
      operationId: `${uniqueToken('oct')}Piece`,
      service: 'protocol',
      summary: 'a piece',
      tags: [],
      request: requestSchema({ query: Type.Object({ size: Type.Integer({ minimum: -1 }) }) }),
      response: Type.Object({ data: Type.Uint8Array(), done: Type.Boolean() }),
      replyOctets: true,
    });
    const served = new Map<number, Uint8Array>();
    const service = await serve(
      bus,
      { name: uniqueToken('octets'), version: '1.0.0', instance: 'i1' },
      [
        implement(piece, async ({ query }) => {
          if (query.size < 0) throw new ProblemError('not_found', 'No such piece');
          const data = randomBytes(query.size);
          served.set(query.size, data);
          return { data, done: query.size === 0 };
        }),
      ],
      log,
    );
    t.teardown(() => service.stop());
    const ask = (size: number) => call(bus, piece, { params: {}, query: { size } }, { requestId: uniqueToken('r') });

    t.test('call() answers the octets and the other fields', async (t) => {
      const answer = await ask(70_000);
      t.ok(answer.data instanceof Uint8Array, 'octets, not text');
      t.same(Buffer.from(answer.data), served.get(70_000), 'as they were sent');
      t.equal(answer.done, false);
      const empty = await ask(0);
      t.same([empty.data.length, empty.done], [0, true], 'no octets is a reply too');
    });

    t.test('the octets are the message body as they are; the other fields are JSON in a header', async (t) => {
      const reply = await bus.request(piece.subject, new TextEncoder().encode(JSON.stringify({ params: {}, query: { size: 1000 } })), {
        headers: { [busHeaders.requestId]: 'raw' },
      });
      t.same(Buffer.from(reply.data), served.get(1000), 'no base64, no JSON around them');
      t.equal(reply.headers[busHeaders.replyFields], '{"done":false}');
    });

    t.test('a problem travels as a problem', async (t) => {
      await t.rejects(ask(-1), { code: 'not_found', status: 404 });
    });

    t.test('a reply larger than one bus message is 413, not a timeout', async (t) => {
      await t.rejects(ask(bus.maxPayload + 1), { code: 'payload_too_large', status: 413 });
    });
  });
}
