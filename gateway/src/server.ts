import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Operation } from '@scada/contracts';
import type { Bus, Store } from '@scada/platform';
import type { Logger } from 'pino';
import { createGatewayApp } from './app.ts';
import type { GatewayConfig } from './config.ts';
import { loadOrCreateCertificate } from './tls.ts';
import type { AuthView } from './auth/auth_view.ts';

/** What a running gateway needs. */
export type GatewayDeps = {
  bus: Bus;
  log: Logger;
  config: GatewayConfig;
  dataDir: string;
  busTimeoutMs: number;
  shutdownGraceMs: number;
  /**
   * How long a stop keeps taking new connections after readiness fails (0: none), so that a balancer that
   * follows readiness stops sending before the listeners close: a connection still in the listen queue
   * when a listener closes is reset.
   */
  shutdownDrainMs?: number;
  /** Listen address; loopback in tests. */
  host?: string;
  /** The operations to route; the whole registry by default. */
  operations?: readonly Operation[];
  /** Bind every enabled listener to a port the OS picks (tests run many gateways at once). */
  ephemeralPorts?: boolean;
  /** The auth view to enforce sessions and the IP filter with; started and stopped with the gateway. */
  auth?: AuthView;
  /** The store of the services this process runs, which its readiness includes. */
  store?: Store | null;
};

/** A running gateway. */
export type RunningGateway = {
  /** Bound ports (useful with port 0); null when a listener is off. */
  httpPort: number | null;
  httpsPort: number | null;
  /** Stops taking connections, lets requests in flight finish (up to the grace time), then closes. */
  stop(): Promise<void>;
};

/** Starts the gateway's HTTP and HTTPS listeners. */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
  const { app, startDraining, replicas, live, readCache } = createGatewayApp(deps);
  await deps.auth?.start();
  await live.start();
  await readCache.start();
  replicas.start();
  const handler = app.callback();
  const servers: http.Server[] = [];
  let httpPort: number | null = null;
  let httpsPort: number | null = null;
  // The certificate comes first, so that no listener answers before the whole gateway can.
  const tls =
    deps.config.httpsPort === 0
      ? null
      : await loadOrCreateCertificate({
          certFile: deps.config.tlsCertFile,
          keyFile: deps.config.tlsKeyFile,
          dataDir: deps.dataDir,
          log: deps.log,
        });
  if (deps.config.httpPort !== 0 || tls === null) {
    const server = http.createServer(handler);
    httpPort = await listen(server, deps.ephemeralPorts ? 0 : deps.config.httpPort, deps.host);
    servers.push(server);
  }
  if (tls !== null) {
    const server = https.createServer({ cert: tls.cert, key: tls.key }, handler);
    httpsPort = await listen(server, deps.ephemeralPorts ? 0 : deps.config.httpsPort, deps.host);
    servers.push(server);
  }
  deps.log.info({ httpPort, httpsPort }, 'gateway listening');
  return {
    httpPort,
    httpsPort,
    stop: async () => {
      startDraining();
      if (deps.shutdownDrainMs) await new Promise((r) => setTimeout(r, deps.shutdownDrainMs));
      // Streams never finish on their own: each ends now with a last comment, so its client reconnects
      // through another replica at once instead of holding the shutdown for the grace time.
      await live.stop();
      await Promise.all(servers.map((s) => closeGracefully(s, deps.shutdownGraceMs)));
      await deps.auth?.stop();
      await replicas.stop();
      deps.log.info('gateway stopped');
    },
  };
}

function listen(server: http.Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Closes a server: idle keep-alive sockets at once, busy ones when their response is done or the grace ends. */
function closeGracefully(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
