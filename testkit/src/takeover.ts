/**
 * Two protocol replicas for a takeover test: the first holder of a connection and its successor. On NATS
 * and PostgreSQL the first holder is a process of its own (the platform's in-process replica stopped), so
 * that it can be killed with SIGKILL; on the embedded store and bus it is the platform's own replica,
 * stopped. The successor is a replica in this process on the platform's bus and store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protocolPing } from '@scada/contracts';
import { call, startService, type RunningService } from '@scada/platform';
import { protocolService } from '@scada/protocol';
import { testBusKeys } from './bus_keys.ts';
import { until } from './live.ts';
import { platformNatsEnv } from './nats_auth.ts';
import { secretsKeyOf, type TestPlatform } from './platform.ts';
import { startMain, type MainProcess } from './processes.ts';

/** What this module needs of a tap test: to run something when the test ends (the testkit does not depend on tap). */
type Test = { teardown(fn: () => unknown): void };

/** Settings a takeover test runs with: short leases and reconnects, so that a takeover takes seconds. */
export const takeoverSettings = {
  SESSION_LEASE_SECONDS: '2',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '300',
  MMS_REQUEST_TIMEOUT_MS: '2000',
};

/** Whether the first holder is a process of its own (on NATS and PostgreSQL), killed with SIGKILL. */
const inProcesses = () => Boolean(process.env.NATS_URL && process.env.DATABASE_URL);

/** How the first holder goes in this environment, for test names. */
export const takeoverHow = (): string => (inProcesses() ? 'holder killed with SIGKILL' : 'holder stopped');

export type TakeoverCluster = {
  /** Starts the successor in this process, under `instance`. */
  startSuccessor(instance?: string): Promise<RunningService>;
  /** The first holder goes: its process killed (and waited for), or the in-process replica stopped. */
  holderGoes(): Promise<void>;
};

/** A protocol replica in a process of its own on the platform's NATS and PostgreSQL, once it serves. */
async function replicaProcess(t: Test, p: TestPlatform, settings: Record<string, string>): Promise<MainProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-takeover-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const replica = startMain({
    SERVICES: 'protocol',
    ...platformNatsEnv(),
    ...testBusKeys,
    DATABASE_URL: p.proc.config.platform.databaseUrl!,
    SECRETS_KEY: secretsKeyOf(p).toString('base64'),
    BUS_SUBJECT_PREFIX: p.proc.config.platform.busSubjectPrefix!,
    DATA_DIR: dataDir,
    HTTP_PORT: '0',
    HTTPS_PORT: '0',
    LOG_LEVEL: 'warn',
    ...settings,
  });
  t.teardown(() => void replica.child.kill('SIGKILL'));
  const own = p.proc.services.find((s) => s.name === 'protocol')!.instance;
  await until(
    'the replica process to serve',
    async () => {
      const pong = await call(p.proc.bus, protocolPing, { params: {}, query: {} } as never, {
        requestId: 'takeover',
        timeoutMs: 1000,
      }).catch(() => null);
      return pong !== null && (pong as { instance: string }).instance !== own;
    },
    60_000,
  );
  return replica;
}

/**
 * Sets the first holder up before the test creates its connection: on NATS and PostgreSQL a replica
 * process (and the platform's own protocol replica stopped, so that the process takes the connection).
 */
export async function takeoverCluster(
  t: Test,
  p: TestPlatform,
  settings: Record<string, string> = takeoverSettings,
): Promise<TakeoverCluster> {
  const inProcess = p.proc.services.find((s) => s.name === 'protocol')!;
  const killable = inProcesses() ? await replicaProcess(t, p, settings) : null;
  if (killable) await inProcess.stop();
  return {
    startSuccessor: async (instance = 'successor') => {
      const successor = await startService(protocolService, {
        bus: p.proc.bus,
        store: p.proc.store!,
        log: p.proc.log,
        config: p.proc.config.services.protocol as never,
        instance,
      });
      t.teardown(() => successor.stop());
      return successor;
    },
    holderGoes: async () => {
      if (killable) {
        killable.child.kill('SIGKILL');
        await killable.exited;
      } else await inProcess.stop();
    },
  };
}
