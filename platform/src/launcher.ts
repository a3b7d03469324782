import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { busInboxPrefix, type ServiceName } from '@scada/contracts';
import type { Bus } from './bus/bus.ts';
import { MemoryBus } from './bus/memory_bus.ts';
import { NatsBus } from './bus/nats_bus.ts';
import { PrefixedBus } from './bus/prefixed_bus.ts';
import { busRoles, busTrustFrom, ownTrust, type BusRole, type BusTrust } from './bus/trust.ts';
import { SignedBus } from './bus/signed_bus.ts';
import { readPlatformConfig, serviceKeys, type PlatformConfig, type ServiceKey } from './config.ts';
import { ConfigError, EnvReader, type EnvSource } from './env.ts';
import { startHealthServer, type HealthServer } from './health_server.ts';
import { createLogger, type Logger } from './log.ts';
import { checkPortsFree, framed, type Notices } from './notices.ts';
import { startService, type RunningService, type ServiceDefinition } from './service_host.ts';
import type { openStore } from './store/open.ts';
import type { Store } from './store/store.ts';

/** Anything a process starts and stops. */
type Stoppable = { stop(): Promise<void> };

/** What the gateway is given to start with, besides its own configuration. */
export type GatewayStartDeps<C> = {
  bus: Bus;
  log: Logger;
  config: C;
  platform: PlatformConfig;
  /** The store of the services this process runs, if any: the gateway's readiness includes it. */
  store: Store | null;
  host?: string;
  ephemeralPorts?: boolean;
};

/** The gateway as a part of a process: it reads its own section of the environment and starts on the bus. */
export type GatewayDefinition<C = unknown, R extends Stoppable = Stoppable> = {
  readConfig(env: EnvReader): C;
  start(deps: GatewayStartDeps<C>): Promise<R>;
  /** The ports its configuration listens on, by variable, checked free before the store is opened. */
  ports?(config: C): { variable: string; port: number }[];
  /** The base URLs a running gateway answers on, for the start-up log and the first-start notice. */
  urls?(running: R, host?: string): string[];
};

/**
 * The parts one build of a process carries: `main.ts` every service and the gateway, a single-service
 * entry just its own. Only what is named here is imported, so a bundle holds nothing else.
 */
export type ProcessParts<C = unknown, R extends Stoppable = Stoppable> = {
  services: Partial<Record<ServiceName, ServiceDefinition<any>>>;
  /** Opens the store the services share (`openStore`); the gateway alone has none and carries no driver. */
  openStore?: typeof openStore;
  gateway?: GatewayDefinition<C, R>;
};

/** The whole configuration of one process, every section checked. */
export type ProcessConfig<C = unknown> = { platform: PlatformConfig; gateway: C | null; services: Record<string, unknown> };

/** A running platform process. */
export type LaunchedProcess<C = unknown, R extends Stoppable = Stoppable> = {
  config: ProcessConfig<C>;
  log: Logger;
  bus: Bus;
  store: Store | null;
  gateway: R | null;
  services: RunningService[];
  /** The probe listener, when HEALTH_PORT is set. */
  health: HealthServer | null;
  /** The base URLs the gateway of this process answers on (none without a gateway). */
  urls: string[];
  /** Stops in order: the gateway's listeners, the services' subscriptions, then the bus and the store. */
  stop(): Promise<void>;
};

/** The keys `SERVICES` may name in a process built from these parts. */
function availableKeys(parts: ProcessParts<any, any>): ServiceKey[] {
  return [...(parts.gateway ? (['gateway'] as const) : []), ...(Object.keys(parts.services) as ServiceName[])];
}

/** Reads and checks every section the process needs; throws one ConfigError naming every bad variable. */
export function readProcessConfigOf<C>(source: EnvSource, parts: ProcessParts<C, any>): ProcessConfig<C> {
  const env = new EnvReader(source);
  const platform = readPlatformConfig(env, availableKeys(parts));
  const gateway = parts.gateway && platform.services.includes('gateway') ? parts.gateway.readConfig(env) : null;
  const services: Record<string, unknown> = {};
  for (const name of serviceNamesOf(platform)) services[name] = parts.services[name]!.readConfig(env);
  env.finish();
  return { platform, gateway, services };
}

function serviceNamesOf(platform: PlatformConfig): ServiceName[] {
  return platform.services.filter((s): s is ServiceName => s !== 'gateway');
}

/**
 * Starts the parts `SERVICES` names, in one process, on the bus and store the environment chooses:
 * NATS and PostgreSQL when their URLs are set, the in-process bus and the embedded store otherwise.
 */
export async function launchProcess<C, R extends Stoppable>(
  source: EnvSource,
  parts: ProcessParts<C, R>,
  options: LaunchOptions = {},
): Promise<LaunchedProcess<C, R>> {
  const config = readProcessConfigOf(source, parts);
  const { platform } = config;
  if (!options.ephemeralPorts) await checkPortsFree(portsOf(parts, config), options.host);
  const wanted = serviceNamesOf(platform);
  const opener = wanted.length > 0 ? openStoreOf(parts) : null;
  const log = options.log ?? (await createLogger({ level: platform.logLevel }));
  const bus = await openBus(platform, log);
  const store = opener
    ? await opener(
        {
          databaseUrl: platform.databaseUrl,
          dataDir: platform.dataDir,
          timeoutMs: platform.busTimeoutMs,
          site: platform.site,
          thread: platform.storeThread,
        },
        log,
      )
    : null;
  const services: RunningService[] = [];
  let gateway: R | null = null;
  let health: HealthServer | null = null;
  let draining = false;
  const notes: string[][] = [];
  const notices: Notices = { add: (lines) => void notes.push(lines) };
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
      services.push(
        await startService(parts.services[name]!, {
          bus,
          store: store!,
          log,
          config: config.services[name],
          instance: randomUUID(),
          notices,
        }),
      );
    }
    if (parts.gateway && config.gateway !== null) {
      gateway = await parts.gateway.start({
        bus,
        log,
        config: config.gateway,
        platform,
        store,
        host: options.host,
        ephemeralPorts: options.ephemeralPorts,
      });
    }
    if (platform.healthPort !== 0) {
      health = await startHealthServer({
        port: options.ephemeralPorts ? 0 : platform.healthPort,
        host: options.host,
        bus,
        store,
        isDraining: () => draining,
      });
      log.info({ port: health.port }, 'probe listener started');
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  const urls = gateway && parts.gateway?.urls ? parts.gateway.urls(gateway, options.host) : [];
  if (notes.length > 0) (options.stderr ?? ((text) => void process.stderr.write(text)))(noticeText(notes, urls));
  return { config, log, bus, store, gateway, services, health, urls, stop };
}

/** How a process is started, besides its environment. */
export type LaunchOptions = {
  log?: Logger;
  /** Listen address of the gateway and the probe listener; every interface when absent. */
  host?: string;
  /** Bind every listener to a port the OS picks (tests run many processes at once); skips the port check. */
  ephemeralPorts?: boolean;
  /** Where the notices for the operator go (stderr by default). */
  stderr?: (text: string) => void;
};

/** The ports a process will listen on, by the variable that chose each. */
function portsOf<C>(parts: ProcessParts<C, any>, config: ProcessConfig<C>): { variable: string; port: number }[] {
  const gateway = parts.gateway?.ports && config.gateway !== null ? parts.gateway.ports(config.gateway) : [];
  return [...gateway, { variable: 'HEALTH_PORT', port: config.platform.healthPort }];
}

/** The services' notices in one frame, with where to go next. */
function noticeText(notes: string[][], urls: string[]): string {
  const next =
    urls.length > 0
      ? [
          '',
          'Open the API and its reference page at',
          ...urls.map((u) => `  ${u}/docs`),
          "and the engineer's console at",
          ...urls.map((u) => `  ${u}/console/`),
          ...(urls.some((u) => u.startsWith('https:')) ? ['(HTTPS uses a self-signed certificate unless TLS_CERT_FILE is set)'] : []),
        ]
      : ['', "Sign in through the platform's gateway."];
  return framed([...notes.flatMap((lines, i) => (i === 0 ? lines : ['', ...lines])), ...next]);
}

function openStoreOf(parts: ProcessParts<any, any>): typeof openStore {
  if (!parts.openStore) throw new Error('a process that runs services needs a store opener in its parts');
  return parts.openStore;
}

async function openBus(platform: PlatformConfig, log: Logger): Promise<Bus> {
  const bus = await openTransport(platform, log);
  return platform.busSubjectPrefix ? new PrefixedBus(bus, platform.busSubjectPrefix) : bus;
}

async function openTransport(platform: PlatformConfig, log: Logger): Promise<Bus> {
  if (platform.natsUrl) {
    const trust = await busTrustOf(platform, log);
    const nats = await NatsBus.connect({
      servers: platform.natsUrl,
      name: `scada-${platform.services.join('-')}`,
      defaultTimeoutMs: platform.busTimeoutMs,
      log,
      auth: platform.natsAuth,
      inboxPrefix:
        platform.services.length === 1
          ? busInboxPrefix(platform.services[0]!, platform.services[0] === 'protocol' ? platform.site : undefined)
          : busInboxPrefix('platform'),
    });
    return new SignedBus(nats, trust, log);
  }
  if (platform.services.length < serviceKeys.length) {
    log.warn({ services: platform.services }, 'NATS_URL is not set: the in-process bus reaches only the services of this process');
  }
  return new MemoryBus({ defaultTimeoutMs: platform.busTimeoutMs, log });
}

/**
 * The keys this process signs and verifies bus contexts with: the configured ones, or, for a process that
 * runs every part of the platform and was given none, a key of its own that nothing outside it trusts.
 */
async function busTrustOf(platform: PlatformConfig, log: Logger): Promise<BusTrust> {
  const roles = platform.services.filter((s): s is BusRole => (busRoles as readonly string[]).includes(s));
  if (platform.busKeys) {
    let trust: BusTrust;
    try {
      trust = await busTrustFrom(platform.busKeys.signingKeyPem, platform.busKeys.trustedKeysJson);
    } catch (err) {
      throw new ConfigError([`BUS_SIGNING_KEY / BUS_TRUSTED_KEYS: ${(err as Error).message}`]);
    }
    // A key the services do not trust in this process's roles would only show later, as every request refused.
    const own = trust.trusted.get(trust.identity.kid);
    const missing = roles.filter((r) => !own?.roles.includes(r));
    if (missing.length > 0)
      throw new ConfigError([
        `BUS_TRUSTED_KEYS: this process's signing key (${trust.identity.kid}) is not trusted as ${missing.join(', ')}, which it runs`,
      ]);
    return trust;
  }
  if (roles.length < busRoles.length) {
    throw new ConfigError([
      'BUS_SIGNING_KEY(_FILE) and BUS_TRUSTED_KEYS(_FILE): required on NATS when this process does not run every part of the platform (npm run bus-keys makes them)',
    ]);
  }
  log.info('bus contexts are signed with a key of this process only: set BUS_SIGNING_KEY and BUS_TRUSTED_KEYS to run parts elsewhere');
  return ownTrust(roles);
}

/**
 * A process's life from an entry point (`main.ts`, or a service's own `main.ts`): starts the parts on the
 * given environment, stops them on SIGTERM or SIGINT and exits 0 (1 on a second signal or a failed stop; the
 * code a part set in `process.exitCode` when it asked for the stop itself, such as 70 for a lost store).
 * Bad configuration exits 2 with the message naming every bad variable; a failed start exits 1.
 */
export async function runProcess<C, R extends Stoppable>(parts: ProcessParts<C, R>, source: EnvSource): Promise<void> {
  let starting: Promise<LaunchedProcess<C, R>> | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    // A second signal: the operator wants out now.
    if (stopping) process.exit(1);
    stopping = true;
    // A signal during start-up waits for the start to finish, then stops what it started.
    const running = await starting?.catch(() => null);
    if (!running) process.exit(0);
    running.log.info({ signal }, 'shutting down');
    let code = 0;
    try {
      await running.stop();
    } catch (err) {
      running.log.error({ err }, 'shutdown failed');
      code = 1;
    }
    await logWritten(running.log);
    // A stop asked by the process itself for a failure (the embedded store lost) keeps the code it set.
    process.exit(code !== 0 ? code : Number(process.exitCode ?? 0));
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    starting = (async () => {
      // Before anything compiles WebAssembly: V8's flags are the process's, read as each module is compiled.
      for (const flag of processV8Flags(readProcessConfigOf(source, parts), parts)) setFlagsFromString(flag);
      return launchProcess(source, parts);
    })();
    const running = await starting;
    collectStartGarbage();
    running.log.info(
      { services: running.config.platform.services, urls: running.urls },
      running.urls.length > 0 ? `platform started on ${running.urls.join(' and ')}` : 'platform started',
    );
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`start-up failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}

/**
 * The V8 flags a process sets for itself as it starts (`runProcess`), before it compiles any WebAssembly.
 * A process that opens the embedded store (services to run, no `DATABASE_URL`) with
 * `EMBEDDED_STORE_COMPILER=baseline` (the default) runs on V8's baseline WebAssembly compiler only
 * (`--liftoff-only`): without it V8 compiles PostgreSQL's hot functions again with its optimising compiler
 * on background threads, whose code and working memory stay resident: an idle all-in-one holds some 60 MiB
 * more, a first start peaks some 80 MiB higher and spends more CPU to get ready, for queries up to a third
 * faster (bench/README.md, "An edge box"). The flag is the process's, not one module's: the script sandbox
 * of such a process (the all-in-one) runs on baseline code too, and `optimizing` gives both the optimising
 * compiler back. A process on PostgreSQL (every pod) sets nothing; nor does a platform a test launches in
 * its own process (`launchProcess`). Deno fixes V8's WebAssembly flags when it starts: there the flag set
 * here has no effect (measured after a first start: 244–249 MiB with it, 225 with `optimizing`, 204–206
 * with the flag on Deno's command line), and `deno task start` passes `--v8-flags=--liftoff-only` itself.
 */
export function processV8Flags(config: ProcessConfig, parts: ProcessParts<any, any>): string[] {
  const { platform } = config;
  const embedded = parts.openStore !== undefined && serviceNamesOf(platform).length > 0 && (platform.databaseUrl ?? '') === '';
  return embedded && platform.storeCompiler === 'baseline' ? ['--liftoff-only'] : [];
}

/**
 * One full garbage collection once the process has started. A start reads files of megabytes into buffers
 * it then drops (the embedded store's WebAssembly, its template, the bundle's sources), and V8 collects
 * them only when its own heap grows, which an idle process's hardly does: an edge box kept some 10 MiB of
 * them for good (bench/README.md, "An edge box"). The collector is reached through a context made while
 * `--expose-gc` is set, and the flag is cleared again; a runtime without it (Deno) keeps its own pace.
 */
function collectStartGarbage(): void {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;
    setFlagsFromString('--no-expose-gc');
    gc?.();
  } catch {
    // Not offered here: the garbage waits for the runtime's own collection.
  }
}

/**
 * Waits until every line the logger holds is written (at most `ms`). At exit lines are written
 * synchronously, but not a block the destination is still writing to a pipe that reads slowly: a
 * stopping process lets that block finish first.
 */
async function logWritten(log: Logger, ms = 2000): Promise<void> {
  await new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    const finish = () => {
      clearTimeout(timer);
      done();
    };
    try {
      log.flush(finish);
    } catch {
      finish();
    }
  });
}
