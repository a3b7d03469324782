import Router from '@koa/router';
import { problemBody } from '@scada/contracts';
import type { Readiness } from '@scada/platform';
import { setJson } from '../json.ts';

/** What the probes look at. */
export type HealthDeps = {
  /** The process's own readiness: draining, bus and store, with every service's live replicas. */
  readiness: () => Promise<Readiness>;
};

/**
 * `/healthz` says the process is alive; `/readyz` says it can do its own work (not draining, bus
 * connected, its store answering when it runs services) and lists every service's live replicas. A
 * service without replicas never makes a gateway unready: its own requests answer 503 instead. A 503
 * names what is missing.
 */
export function healthRoutes(deps: HealthDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    setJson(ctx, { status: 'ok' });
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const { ready, failing, services } = await deps.readiness();
    if (ready) {
      setJson(ctx, { status: 'ready', services });
      return;
    }
    ctx.status = 503;
    ctx.set('Retry-After', '5');
    setJson(
      ctx,
      { ...problemBody('service_unavailable', `Not ready: ${failing.join(', ')}`), failing, services },
      'application/problem+json',
    );
  });
  return router;
}
