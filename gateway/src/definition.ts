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
      host,
      ephemeralPorts,
      auth: busAuthView({ bus, log, timeoutMs: platform.busTimeoutMs }),
      store,
    }),
};
