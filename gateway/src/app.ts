import { operations as allOperations, type Operation } from '@scada/contracts';
import { changesSpace, checkReadiness, ReplicaWatch, type Bus, type Store } from '@scada/platform';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config.ts';
import { createMetrics, type GatewayMetrics } from './metrics.ts';
import { problemDetails } from './middleware/problem.ts';
import { accessLog } from './middleware/access_log.ts';
import { requestId } from './middleware/request_id.ts';
import { securityHeaders } from './middleware/security_headers.ts';
import { buildOpenApi } from './openapi.ts';
import { docsRoutes } from './routes/docs.ts';
import { consoleBuilt, consoleRoutes } from './routes/console.ts';
import { healthRoutes } from './routes/health.ts';
import { operationRoutes } from './routes/operations.ts';
import { sessionRoutes } from './routes/session.ts';
import { sclFileRoutes } from './routes/scl_files.ts';
import { deviceFileRoutes } from './routes/device_files.ts';
import { historyRoutes } from './routes/history.ts';
import { staticAuthView, type AuthView } from './auth/auth_view.ts';
import { clientIp } from './middleware/client_ip.ts';
import { csrf } from './middleware/csrf.ts';
import { cleanUrl } from './middleware/clean_url.ts';
import { ipFilter } from './middleware/ip_filter.ts';
import { defaultLiveSettings, LiveHub } from './live/hub.ts';
import { createLiveMetrics } from './live/metrics.ts';
import { liveRoute } from './live/route.ts';
import { ReadCache } from './read_cache.ts';
import { indexedRoutes } from './route_index.ts';

/** What the gateway app is built from. */
export type GatewayAppDeps = {
  bus: Bus;
  log: Logger;
  config: GatewayConfig;
  busTimeoutMs: number;
  operations?: readonly Operation[];
  /** The auth service's state as this replica sees it; none (every operation public) when absent. */
  auth?: AuthView;
  /** The store of the services this process runs, which its readiness includes; none for a gateway alone. */
  store?: Store | null;
};

/** The gateway app with the handles its server needs. */
export type GatewayApp = {
  app: Koa;
  metrics: GatewayMetrics;
  /** The replicas this gateway hears; started and stopped with its server. */
  replicas: ReplicaWatch;
  /** Makes readiness fail while the process drains. */
  startDraining(): void;
  /** The live channel's hub; started and stopped with the server. */
  live: LiveHub;
  /** The read cache; started with the server (until then every read goes to its service). */
  readCache: ReadCache;
};

/** The error of an answer whose headers were sent when its client closed the connection. */
function leftMidAnswer(err: Error): boolean {
  const { code, headerSent } = err as Error & { code?: string; headerSent?: boolean };
  return headerSent === true && (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE');
}

/**
 * Builds the gateway: request id, metrics, problem details, then the operational routes and every
 * operation of the registry routed to its service over the bus. No socket is opened here, so tests can
 * drive the app in process.
 */
export function createGatewayApp(deps: GatewayAppDeps): GatewayApp {
  const ops = deps.operations ?? allOperations;
  const app = new Koa({ proxy: false });
  const replicas = new ReplicaWatch(deps.bus);
  const metrics = createMetrics(() => replicas.live());
  let draining = false;
  app.silent = true;
  app.on('error', (err: Error, ctx?: Koa.Context) => {
    const log: Logger = ctx?.state?.log ?? deps.log;
    // A client that leaves a streamed answer (a download it cancelled) is no failure of the platform.
    if (leftMidAnswer(err)) return void log.debug({ method: ctx?.method, path: ctx?.path }, 'the client left before the answer ended');
    log.error({ err, method: ctx?.method, path: ctx?.path }, 'request failed');
  });
  app.use(requestId(deps.log));
  app.use(securityHeaders());
  app.use(accessLog(deps.log));
  app.use(metrics.middleware);
  app.use(problemDetails());
  const auth = deps.auth ?? staticAuthView();
  const sessions = { bus: deps.bus, auth, busTimeoutMs: deps.busTimeoutMs };
  app.use(clientIp(deps.config.trustedProxies));
  app.use(ipFilter(auth));
  app.use(csrf());
  app.use(cleanUrl());
  const live = new LiveHub(
    { bus: deps.bus, auth, log: deps.log, metrics: createLiveMetrics(metrics.registry), busTimeoutMs: deps.busTimeoutMs },
    deps.config.live ?? defaultLiveSettings,
  );
  app.use(liveRoute({ hub: live, sessions, bus: deps.bus, busTimeoutMs: deps.busTimeoutMs }));
  const readCache = new ReadCache(deps.bus.spaceVersions(), deps.config.readCache ?? { maxAgeMs: 0, maxChars: 0 });
  // Routes are named by their operation: after one answered, the rule the services bump by (`changesSpace`)
  // says whether it changed its space.
  const byId = new Map(ops.map((op) => [op.operationId, op]));
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
    try {
      await next();
    } finally {
      // Before the answer leaves, whatever it is: a write that failed late may still have changed something.
      const op = byId.get(ctx.routerName ?? '');
      if (ctx.state.space && op && changesSpace(op)) readCache.written(ctx.state.space);
    }
  });
  const routers = [
    healthRoutes({ readiness: () => checkReadiness({ bus: deps.bus, store: deps.store ?? null, isDraining: () => draining, replicas }) }),
    docsRoutes(
      () => buildOpenApi(ops, {}),
      () => (consoleBuilt() ? '/console/' : '/docs'),
    ),
    consoleRoutes(deps.config.frameOrigins),
    sessionRoutes({
      ...sessions,
      onHeldBack: metrics.countHeldBack,
      loginRateLimitPerMinute: deps.config.loginRateLimitPerMinute,
      loginInFlightPerAddress: deps.config.loginInFlightPerAddress,
      bodyLimitBytes: deps.config.bodyLimitBytes,
    }),
    sclFileRoutes(ops, { bus: deps.bus, busTimeoutMs: deps.busTimeoutMs, maxSclBytes: deps.config.maxSclBytes, sessions }),
    deviceFileRoutes(ops, { bus: deps.bus, busTimeoutMs: deps.busTimeoutMs, bodyLimitBytes: deps.config.bodyLimitBytes, sessions }),
    historyRoutes(ops, { bus: deps.bus, busTimeoutMs: deps.busTimeoutMs, bodyLimitBytes: deps.config.bodyLimitBytes, sessions }),
    operationRoutes(ops, {
      bus: deps.bus,
      metrics,
      busTimeoutMs: deps.busTimeoutMs,
      bodyLimitBytes: deps.config.bodyLimitBytes,
      sessions,
      readCache,
    }),
  ];
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics') return next();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.contentType;
    ctx.body = await metrics.render();
  });
  app.use(indexedRoutes(routers).middleware);
  return { app, metrics, replicas, startDraining: () => void (draining = true), live, readCache };
}
