import { randomUUID } from 'node:crypto';
import { authService } from '@scada/auth';
import { configService } from '@scada/config';
import { busAuthView, readGatewayConfig, startGateway, type GatewayConfig, type RunningGateway } from '@scada/gateway';
import {
  createLogger,
  EnvReader,
  MemoryBus,
  NatsBus,
  openStore,
  PrefixedBus,
  readPlatformConfig,
  startService,
  type Bus,
  type EnvSource,
  type Logger,
  type PlatformConfig,
  type RunningService,
  type ServiceDefinition,
  type Store,
  startHealthServer,
  type HealthServer,
} from '@scada/platform';
import { protocolService } from '@scada/protocol';

/** Every service a process can run, by the name `SERVICES` uses. */
const definitions: Record<'auth' | 'config' | 'protocol', ServiceDefinition<any>> = {
  auth: authService,
  config: configService,
  protocol: protocolService,
};

/** The whole configuration of one process, every section checked. */
export type ProcessConfig = { platform: PlatformConfig; gateway: GatewayConfig | null; services: Record<string, unknown> };

/** Reads and checks every section the process needs; throws one ConfigError naming every bad variable. */
export function readProcessConfig(source: EnvSource): ProcessConfig {
  const env = new EnvReader(source);
  const platform = readPlatformConfig(env);
  const gateway = platform.services.includes('gateway') ? readGatewayConfig(env) : null;
  const services: Record<string, unknown> = {};
  for (const name of serviceNamesOf(platform)) services[name] = definitions[name].readConfig(env);
  env.finish();
  return { platform, gateway, services };
}

function serviceNamesOf(platform: PlatformConfig): (keyof typeof definitions)[] {
  return platform.services.filter((s): s is keyof typeof definitions => s !== 'gateway');
}

/** A running platform process. */
export type PlatformProcess = {
  config: ProcessConfig;
  log: Logger;
  bus: Bus;
  store: Store | null;
  gateway: RunningGateway | null;
  services: RunningService[];
  /** The probe listener, when HEALTH_PORT is set. */
  health: HealthServer | null;
  /** Stops in order: the gateway's listeners, the services' subscriptions, then the bus and the store. */
  stop(): Promise<void>;
};

/**
 * Starts the services `SERVICES` names, in one process, on the bus and store the environment chooses:
 * NATS and PostgreSQL when their URLs are set, the in-process bus and the embedded store otherwise.
 */
export async function launch(
  source: EnvSource,
  options: { log?: Logger; host?: string; ephemeralPorts?: boolean } = {},
): Promise<PlatformProcess> {
  const config = readProcessConfig(source);
  const { platform } = config;
  const log = options.log ?? createLogger({ level: platform.logLevel });
  const bus = await openBus(platform, log);
  const wanted = serviceNamesOf(platform);
  const store = wanted.length > 0 ? await openStore({ databaseUrl: platform.databaseUrl, dataDir: platform.dataDir }, log) : null;
  const services: RunningService[] = [];
  let gateway: RunningGateway | null = null;
  let health: HealthServer | null = null;
  let draining = false;
  const stop = async () => {
    draining = true;
    await gateway?.stop();
    await Promise.all(services.map((s) => s.stop()));
    await bus.close();
    await store?.close();
    await health?.stop();
  };
  try {
    for (const name of wanted) {
      services.push(await startService(definitions[name], { bus, store: store!, log, config: config.services[name], instance: randomUUID() }));
    }
    if (config.gateway) {
      gateway = await startGateway({
        bus,
        log,
        config: config.gateway,
        dataDir: platform.dataDir,
        busTimeoutMs: platform.busTimeoutMs,
        shutdownGraceMs: platform.shutdownGraceMs,
        host: options.host,
        ephemeralPorts: options.ephemeralPorts,
        auth: busAuthView({ bus, log, timeoutMs: platform.busTimeoutMs }),
      });
    }
    if (platform.healthPort !== 0) {
      health = await startHealthServer({ port: options.ephemeralPorts ? 0 : platform.healthPort, host: options.host, bus, store, isDraining: () => draining });
      log.info({ port: health.port }, 'probe listener started');
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { config, log, bus, store, gateway, services, health, stop };
}

async function openBus(platform: PlatformConfig, log: Logger): Promise<Bus> {
  const bus = await openTransport(platform, log);
  return platform.busSubjectPrefix ? new PrefixedBus(bus, platform.busSubjectPrefix) : bus;
}

async function openTransport(platform: PlatformConfig, log: Logger): Promise<Bus> {
  if (platform.natsUrl) return NatsBus.connect({ servers: platform.natsUrl, name: `scada-${platform.services.join('-')}`, defaultTimeoutMs: platform.busTimeoutMs, log });
  if (platform.services.length < 4) {
    log.warn({ services: platform.services }, 'NATS_URL is not set: the in-process bus reaches only the services of this process');
  }
  return new MemoryBus({ defaultTimeoutMs: platform.busTimeoutMs });
}
