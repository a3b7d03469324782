import { authService } from '@scada/auth';
import { configService } from '@scada/config';
import { historyService } from '@scada/history';
import { gatewayDefinition, type GatewayConfig, type RunningGateway } from '@scada/gateway';
import {
  launchProcess,
  openStore,
  readProcessConfigOf,
  type EnvSource,
  type LaunchedProcess,
  type LaunchOptions,
  type ProcessConfig as ProcessConfigOf,
  type ProcessParts,
} from '@scada/platform';
import { protocolService } from '@scada/protocol';

/** Every part a process can run: the gateway and each service, by the name `SERVICES` uses. */
export const allParts: ProcessParts<GatewayConfig, RunningGateway> = {
  services: { auth: authService, config: configService, protocol: protocolService, history: historyService },
  openStore,
  gateway: gatewayDefinition,
};

/** The whole configuration of one process, every section checked. */
export type ProcessConfig = ProcessConfigOf<GatewayConfig>;

/** Reads and checks every section the process needs; throws one ConfigError naming every bad variable. */
export function readProcessConfig(source: EnvSource): ProcessConfig {
  return readProcessConfigOf(source, allParts);
}

/** A running platform process. */
export type PlatformProcess = LaunchedProcess<GatewayConfig, RunningGateway>;

/**
 * Starts the services `SERVICES` names, in one process, on the bus and store the environment chooses:
 * NATS and PostgreSQL when their URLs are set, the in-process bus and the embedded store otherwise.
 */
export function launch(source: EnvSource, options: LaunchOptions = {}): Promise<PlatformProcess> {
  return launchProcess(source, allParts, options);
}
