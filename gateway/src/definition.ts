import type { GatewayDefinition } from '@scada/platform';
import { busAuthView } from './auth/auth_view.ts';
import { readGatewayConfig, type GatewayConfig } from './config.ts';
import { startGateway, type RunningGateway } from './server.ts';

/**
 * The gateway as a part of a platform process: it reads its own settings and serves HTTP and HTTPS on the
 * process's bus, checking sessions and the IP filter with the auth service over that bus.
 */
export const gatewayDefinition: GatewayDefinition<GatewayConfig, RunningGateway> = {
  readConfig: readGatewayConfig,
  start: ({ bus, log, config, platform, store, host, ephemeralPorts }) =>
    startGateway({
      bus,
      log,
      config,
      dataDir: platform.dataDir,
      busTimeoutMs: platform.busTimeoutMs,
      shutdownGraceMs: platform.shutdownGraceMs,
      shutdownDrainMs: platform.shutdownDrainMs,
      host,
      ephemeralPorts,
      auth: busAuthView({ bus, log, timeoutMs: platform.busTimeoutMs }),
      store,
    }),
  ports: (config) => [
    { variable: 'HTTP_PORT', port: config.httpPort },
    { variable: 'HTTPS_PORT', port: config.httpsPort },
  ],
  urls: (running, host) => {
    // Every interface: the operator at this machine opens it on localhost.
    const name = host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
    return [
      ...(running.httpsPort !== null ? [`https://${name}:${running.httpsPort}`] : []),
      ...(running.httpPort !== null ? [`http://${name}:${running.httpPort}`] : []),
    ];
  },
};
