import Router from '@koa/router';
import { pings, type ServiceName } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';

/** What the probes look at. */
export type HealthDeps = {
  bus: Bus;
  /** True once the gateway has been told to shut down: readiness then fails so traffic moves away. */
  isDraining: () => boolean;
  probeTimeoutMs: number;
};

/**
 * `/healthz` says the process is alive; `/readyz` says it can serve: the bus is connected and every
 * service answers its ping with a working store. A 503 names what is missing.
 */
export function healthRoutes(deps: HealthDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const failing = await notReady(deps, ctx.state.requestId);
    if (failing.length === 0) {
      ctx.body = { status: 'ready' };
      return;
    }
    ctx.status = 503;
    ctx.set('Retry-After', '5');
    ctx.type = 'application/problem+json';
    ctx.body = {
      type: 'urn:scada:problem:service_unavailable',
      title: 'Service unavailable',
      status: 503,
      code: 'service_unavailable',
      detail: `Not ready: ${failing.join(', ')}`,
      failing,
    };
  });
  return router;
}

async function notReady(deps: HealthDeps, requestId: string): Promise<string[]> {
  if (deps.isDraining()) return ['gateway (shutting down)'];
  if (!deps.bus.isConnected()) return ['bus'];
  const names = Object.keys(pings) as ServiceName[];
  const answers = await Promise.all(
    names.map(async (name) => {
      try {
        const pong = await call(deps.bus, pings[name], { params: {}, query: {} } as never, { requestId, timeoutMs: deps.probeTimeoutMs });
        return (pong as { store: string }).store === 'ok' ? null : `${name} store`;
      } catch {
        return name;
      }
    }),
  );
  return answers.filter((a): a is string => a !== null);
}
