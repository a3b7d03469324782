import { operations as allOperations, type Operation } from '@scada/contracts';
import type { Bus } from '@scada/platform';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config.ts';
import { createMetrics, type GatewayMetrics } from './metrics.ts';
import { problemDetails } from './middleware/problem.ts';
import { accessLog } from './middleware/access_log.ts';
import { requestId } from './middleware/request_id.ts';
import { buildOpenApi } from './openapi.ts';
import { docsRoutes } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { operationRoutes } from './routes/operations.ts';
import { sessionRoutes } from './routes/session.ts';
import { sclFileRoutes } from './routes/scl_files.ts';
import { staticAuthView, type AuthView } from './auth/auth_view.ts';
import { clientIp } from './middleware/client_ip.ts';
import { csrf } from './middleware/csrf.ts';
import { ipFilter } from './middleware/ip_filter.ts';

/** What the gateway app is built from. */
export type GatewayAppDeps = {
  bus: Bus;
  log: Logger;
  config: GatewayConfig;
  busTimeoutMs: number;
  operations?: readonly Operation[];
  /** The auth service's state as this replica sees it; none (every operation public) when absent. */
  auth?: AuthView;
};

/** The gateway app with the handles its server needs. */
export type GatewayApp = {
  app: Koa;
  metrics: GatewayMetrics;
  /** Makes readiness fail while the process drains. */
  startDraining(): void;
};

/**
 * Builds the gateway: request id, metrics, problem details, then the operational routes and every
 * operation of the registry routed to its service over the bus. No socket is opened here, so tests can
 * drive the app in process.
 */
export function createGatewayApp(deps: GatewayAppDeps): GatewayApp {
  const ops = deps.operations ?? allOperations;
  const app = new Koa({ proxy: false });
  const metrics = createMetrics();
  let draining = false;
  app.silent = true;
  app.on('error', (err: Error, ctx?: Koa.Context) => {
    const log: Logger = ctx?.state?.log ?? deps.log;
    log.error({ err, method: ctx?.method, path: ctx?.path }, 'request failed');
  });
  app.use(requestId(deps.log));
  app.use(accessLog());
  app.use(metrics.middleware);
  app.use(problemDetails());
  const auth = deps.auth ?? staticAuthView();
  const sessions = { bus: deps.bus, auth, busTimeoutMs: deps.busTimeoutMs };
  app.use(clientIp(deps.config.trustedProxies));
  app.use(ipFilter(auth));
  app.use(csrf());
  const routers = [
    healthRoutes({ bus: deps.bus, isDraining: () => draining, probeTimeoutMs: Math.min(2000, deps.busTimeoutMs) }),
    docsRoutes(() => buildOpenApi(ops, {})),
    sessionRoutes({ ...sessions, loginRateLimitPerMinute: deps.config.loginRateLimitPerMinute, bodyLimitBytes: deps.config.bodyLimitBytes }),
    sclFileRoutes(ops, { bus: deps.bus, busTimeoutMs: deps.busTimeoutMs, maxSclBytes: deps.config.maxSclBytes, sessions }),
    operationRoutes(ops, { bus: deps.bus, metrics, busTimeoutMs: deps.busTimeoutMs, bodyLimitBytes: deps.config.bodyLimitBytes, sessions }),
  ];
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics') return next();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.contentType;
    ctx.body = await metrics.render();
  });
  for (const router of routers) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return { app, metrics, startDraining: () => void (draining = true) };
}
