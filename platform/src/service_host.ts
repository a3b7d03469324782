import { randomUUID } from 'node:crypto';
import { pings, type ServiceName } from '@scada/contracts';
import type { Logger } from 'pino';
import type { Bus } from './bus/bus.ts';
import { implement, serve, type Implementation } from './rpc.ts';
import { migrate } from './store/migrate.ts';
import { storeStaging } from './staging.ts';
import { announcePresence } from './presence.ts';
import type { Migration, Store } from './store/store.ts';
import type { EnvReader } from './env.ts';
import type { Notices } from './notices.ts';

/** What every service is given by `main.ts`. */
export type ServiceDeps<C = unknown> = {
  bus: Bus;
  store: Store;
  log: Logger;
  config: C;
  /** Unique id of this replica. */
  instance: string;
  /** Where to leave words for the operator, shown once the process listens (absent outside a process). */
  notices?: Notices;
};

/** A service of the platform: its schema, its migrations and the operations it implements. */
export type ServiceDefinition<C = unknown> = {
  name: ServiceName;
  version: string;
  description: string;
  /** The PostgreSQL schema the service owns. */
  schema: string;
  /**
   * Takes requests and gives replies larger than one bus message, staged in parts in its schema's
   * `staged_parts` table (a migration of its own makes it; `staging.ts`).
   */
  stagesLargeMessages?: true;
  /** Reads the service's own section of the environment. */
  readConfig(env: EnvReader): C;
  /** Reads the service's migrations (its `migrations/` folder). */
  migrations: () => Promise<Migration[]>;
  /** Builds the handlers; may start background work, stopped by the returned `stop`. */
  setup(deps: ServiceDeps<C>): Promise<{ implementations: Implementation[]; stop?: () => Promise<void> }>;
};

/** A service that runs. */
export type RunningService = { name: ServiceName; instance: string; stop(): Promise<void> };

/**
 * Starts one service: applies its migrations, then serves its operations and its health ping on the bus
 * and announces the replica's presence (`presence.ts`). `stop()` says the replica is stopping, stops taking requests, waits for the ones in flight, then stops the service's own work; the
 * store and the bus belong to the caller.
 */
export async function startService<C>(
  def: ServiceDefinition<C>,
  deps: Omit<ServiceDeps<C>, 'instance'> & { instance?: string },
): Promise<RunningService> {
  const instance = deps.instance ?? randomUUID();
  const log = deps.log.child({ service: def.name, instance });
  await migrate(deps.store, def.schema, await def.migrations(), log);
  const built = await def.setup({ ...deps, log, instance });
  const ping = implement(pings[def.name], async () => ({
    service: def.name,
    version: def.version,
    instance,
    store: (await deps.store.ping()) ? ('ok' as const) : ('down' as const),
  }));
  const registration = await serve(
    deps.bus,
    { name: def.name, version: def.version, description: def.description, instance },
    [ping, ...built.implementations],
    log,
    def.stagesLargeMessages ? storeStaging(deps.store, def.schema) : undefined,
  );
  await deps.bus.flush();
  const present = announcePresence({ bus: deps.bus, store: deps.store, log, service: def.name, version: def.version, instance });
  log.info('service started');
  let stopped: Promise<void> | null = null;
  return {
    name: def.name,
    instance,
    stop: () =>
      (stopped ??= (async () => {
        present.stop();
        await registration.stop();
        await built.stop?.();
        log.info('service stopped');
      })()),
  };
}
