/**
 * The baseline of the gateway benchmarks: a bare Koa app answering `GET /healthz`, nothing else. The
 * platform's numbers are reported as ratios to this one, measured in the same run on the same machine.
 */
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  if (ctx.path === '/healthz') ctx.body = { status: 'ok' };
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
