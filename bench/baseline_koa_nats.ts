/**
 * The floor of any gateway that routes over NATS: a bare Koa app that forwards `GET /api/echo` as one
 * NATS request to a bare responder in another process, and answers its reply. Nothing of the platform
 * runs: no validation, access checks, logging or metrics. `ROLE=responder` runs the responder.
 */
import { connect } from '@nats-io/transport-node';
import Koa from 'koa';

const subject = process.env.SUBJECT ?? 'bench.echo';
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', noAsyncTraces: true });
const encoder = new TextEncoder();
const decoder = new TextDecoder();

if (process.env.ROLE === 'responder') {
  nc.subscribe(subject, {
    queue: 'echo',
    callback: (_err, msg) => {
      const { text } = JSON.parse(decoder.decode(msg.data)) as { text: string };
      msg.respond(encoder.encode(JSON.stringify({ text })));
    },
  });
  await nc.flush();
  process.stdout.write('responding\n');
} else {
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path !== '/api/echo') return;
    try {
      const reply = await nc.request(subject, encoder.encode(JSON.stringify({ text: ctx.query.text ?? '' })), { timeout: 5000 });
      ctx.type = 'application/json';
      ctx.body = decoder.decode(reply.data);
    } catch {
      // The responder is not there yet (the benchmark waits for a 200 before it measures).
      ctx.status = 503;
    }
  });
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
  process.on('SIGTERM', () => server.close());
}
process.on('SIGTERM', () => void nc.close().then(() => process.exit(0)));
