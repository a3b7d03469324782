import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Bus } from './bus/bus.ts';
import type { Store } from './store/store.ts';
import { checkReadiness, ReplicaWatch } from './presence.ts';
import { loopDelayMetric } from './loop_delay.ts';

/** A running probe listener. */
export type HealthServer = { port: number; stop(): Promise<void> };

/**
 * The probe listener of a process that may run without a gateway (a service pod): `GET /healthz` answers
 * 200 while the process runs; `GET /readyz` answers 200 while its bus is connected and its store answers,
 * 503 naming what does not (and from the moment the process starts draining), and lists every service's
 * live replicas either way. `GET /metrics` answers the process's own metrics in Prometheus text (prom-client's
 * default set: memory, CPU, garbage collection and the event loop's delay, `nodejs_eventloop_lag_p99_seconds`
 * and its neighbours, measured with `perf_hooks.monitorEventLoopDelay` and reset at each scrape; and
 * `event_loop_delay_seconds`, a histogram of it never reset, for any period between two scrapes), so that a
 * services-only process shows when its event loop is held, as the gateway's `/metrics` does. Nothing else
 * is served.
 */
export async function startHealthServer(deps: {
  port: number;
  host?: string;
  bus: Bus;
  store: Store | null;
  isDraining: () => boolean;
}): Promise<HealthServer> {
  const replicas = new ReplicaWatch(deps.bus);
  replicas.start();
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  metrics.registerMetric(loopDelayMetric());
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: Record<string, unknown>) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        ...(status === 503 ? { 'retry-after': '5' } : {}),
      });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      void metrics.metrics().then((text) => {
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        res.end(text);
      });
      return;
    }
    if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) return answer(404, { status: 'not found' });
    if (path === '/healthz') return answer(200, { status: 'ok' });
    void checkReadiness({ ...deps, replicas }).then(({ ready, failing, services }) =>
      answer(ready ? 200 : 503, ready ? { status: 'ready', services } : { status: 'not ready', failing, services }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: async () => {
      await replicas.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
