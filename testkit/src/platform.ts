import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { parseSecretsKey, secretBox, signingKeyPurpose } from '@scada/auth';
import { busAuthView, startGateway } from '@scada/gateway';
import type { JWK } from 'jose';
import { launchProcess, openStore, type Bus } from '@scada/platform';
import { allParts, type PlatformProcess } from '../../launch.ts';
import { migrate, PGliteStore, unpackStoreTemplate } from '@scada/platform/testing';
import { cachedDump, compileStoresAsPlatform, pgliteTemplate, testStoreThread } from './stores.ts';
import { dropEventStream } from './event_streams.ts';
import { testBusKeys } from './bus_keys.ts';
import { platformNatsEnv } from './nats_auth.ts';
import { testAdminPassword, testHashing } from './settings.ts';
import { createDatabase } from './databases.ts';

// The settings every test platform runs with, and the database maker, live in modules of their own so
// that a test of processes or a README block pays for them alone, not for importing the whole platform.
export { createDatabase, testAdminPassword, testHashing };

/** Log lines a test platform wrote, parsed. */
export type LogLine = Record<string, unknown> & { msg?: string; reqId?: string; level: number };

/** A platform started for one test file, on the bus and store the environment names. */
export type TestPlatform = {
  /** Base URL of the plain HTTP listener. */
  url: string;
  /** Base URL of the TLS listener, when started with one. */
  tlsUrl: string | null;
  proc: PlatformProcess;
  logs: LogLine[];
  /** The store and bus the run uses, for test names. */
  mode: string;
  stop(): Promise<void>;
};

/**
 * Starts the whole platform in this process: on NATS and PostgreSQL when `NATS_URL` and `DATABASE_URL`
 * are set (with a subject prefix and a database of its own, so parallel test files never meet), on the
 * in-process bus and the embedded store otherwise. Every log line is kept for assertions.
 */
export async function startTestPlatform(
  env: Record<string, string> = {},
  options: { tls?: boolean; stderr?: (text: string) => void; nats?: string } = {},
): Promise<TestPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-test-'));
  const database = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL) : null;
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const source: Record<string, string> = {
    DATA_DIR: dataDir,
    HTTP_PORT: '1',
    HTTPS_PORT: options.tls ? '2' : '0',
    LOG_LEVEL: 'debug',
    ADMIN_PASSWORD: testAdminPassword,
    ...testHashing,
    // How the embedded store's WebAssembly is compiled, as the environment of the run says (the test
    // stores of `stores.ts` read the same variable), so that both compilers can be run and compared.
    ...(process.env.EMBEDDED_STORE_COMPILER ? { EMBEDDED_STORE_COMPILER: process.env.EMBEDDED_STORE_COMPILER } : {}),
    ...(database ? { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') } : {}),
    ...(process.env.NATS_URL && !options.nats
      ? { ...platformNatsEnv(), ...testBusKeys, BUS_SUBJECT_PREFIX: `t${randomBytes(6).toString('hex')}` }
      : {}),
    // A NATS server of the test's own (sites): no credentials, no prefix.
    ...(options.nats ? { NATS_URL: options.nats, ...testBusKeys } : {}),
    ...env,
  };
  const proc = await launchProcess(
    source,
    { ...allParts, openStore: env.DATA_DIR ? openTestStore : openTestStoreInMemory },
    { log, host: '127.0.0.1', ephemeralPorts: true, stderr: options.stderr },
  );
  const mode = `${proc.bus.kind} bus, ${proc.store?.kind ?? 'no'} store`;
  return {
    url: `http://127.0.0.1:${proc.gateway?.httpPort}`,
    tlsUrl: proc.gateway?.httpsPort ? `https://127.0.0.1:${proc.gateway.httpsPort}` : null,
    proc,
    logs,
    mode,
    stop: async () => {
      await proc.stop();
      if (source.BUS_SUBJECT_PREFIX && process.env.NATS_URL) await dropEventStream(source.BUS_SUBJECT_PREFIX).catch(() => {});
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let migrated: Promise<Blob> | undefined;

/**
 * The embedded store with every service's migrations applied: a platform opens a copy of it instead of
 * running initdb and the migrations (2.5 s and more on a loaded machine). What PGlite's own `clone()`
 * does, kept as a dump so that a file-backed store can load it, and cached in the temp folder under a
 * hash of the migrations (a changed migration makes a new one), so each test file does not build it anew.
 */
export function migratedTemplate(): Promise<Blob> {
  migrated ??= (async () => {
    const schemas = await Promise.all(
      Object.values(allParts.services).map(async (s) => ({ schema: s.schema, migrations: await s.migrations() })),
    );
    const key = createHash('sha256').update(JSON.stringify(schemas)).digest('hex').slice(0, 16);
    return cachedDump(`-migrated-${key}-one-database`, async () => {
      const store = await PGliteStore.memory({ template: await pgliteTemplate(), checkNesting: true });
      try {
        for (const { schema, migrations } of schemas) await migrate(store, schema, migrations);
        // The platform uses the one database PGlite opens (`postgres`); initdb's `template0` and `template1`
        // are half the data folder's 1,200 files, each of which every store copies into its in-memory file
        // system when it starts (0.2–0.4 CPU-s of a start).
        await store.query(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
        await store.query('drop database template0');
        await store.query('drop database template1');
        return await store.dump();
      } finally {
        await store.close();
      }
    });
  })();
  return migrated;
}

/**
 * Puts the migrated template into `dataDir` as the embedded store's data folder (`pgdata`), as a platform's
 * own start would unpack a `store_template.tar.gz` beside its bundle: a process started on the folder
 * (`startMain`) opens a store with every migration applied instead of running initdb and the migrations
 * (some 3 CPU-s). For processes whose first start on an empty folder is not what is tested.
 */
export async function prepareDataFolder(dataDir: string): Promise<void> {
  const file = join(dataDir, 'store_template.tar');
  await writeFile(file, new Uint8Array(await (await migratedTemplate()).arrayBuffer()), { mode: 0o600 });
  try {
    unpackStoreTemplate(file, join(dataDir, 'pgdata'));
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * Opens the store a test platform names: PostgreSQL as in production, the embedded one from the migrated
 * template, its WebAssembly compiled as a started platform's (`EMBEDDED_STORE_COMPILER`: V8's baseline
 * compiler only unless `optimizing`). Before 2026-11-29 the test stores left V8's optimising compiler on,
 * unlike a started platform: it recompiled PostgreSQL's hot functions on background threads in every test
 * process, about 1.3 CPU-s a file, more than a test's queries won back from the faster code.
 */
const openTestStore: typeof openStore = async (config, log) => {
  if (config.databaseUrl) return openStore(config, log);
  compileStoresAsPlatform();
  return PGliteStore.open(config.dataDir, {
    log,
    timeoutMs: config.timeoutMs,
    template: await migratedTemplate(),
    checkNesting: true,
    thread: testStoreThread,
  });
};

/**
 * The same, with the embedded store's database in memory instead of in `DATA_DIR`: the same engine and
 * the same SQL, without writing the template out to files (about a second of CPU a platform). A test
 * that names its own `DATA_DIR` (a restart on the same data, the files' modes) gets the folder.
 */
const openTestStoreInMemory: typeof openStore = async (config, log) => {
  if (config.databaseUrl) return openStore(config, log);
  compileStoresAsPlatform();
  return PGliteStore.memory({
    log,
    timeoutMs: config.timeoutMs,
    template: await migratedTemplate(),
    checkNesting: true,
    thread: testStoreThread,
  });
};

/**
 * Lets `seconds` pass for the auth service without waiting: moves the times it stored (account locks,
 * refresh-token use) that far into the past. The service compares them with the store's clock, so to
 * it this is the same as the time having passed; a test that would sleep through a lock or a grace time
 * calls this instead.
 */
export async function letAuthTimePass(p: TestPlatform, seconds: number): Promise<void> {
  const store = p.proc.store;
  if (!store) throw new Error('letAuthTimePass: the platform runs no store');
  const back = [seconds];
  await store.query(
    `update auth.login_failures set locked_until = locked_until - make_interval(secs => $1) where locked_until is not null`,
    back,
  );
  await store.query(`update auth.refresh_tokens set used_at = used_at - make_interval(secs => $1) where used_at is not null`, back);
}

/**
 * Another gateway replica of a test platform, on the same bus (or `bus`, a view of it a test controls): its
 * URL and how to stop it.
 */
export async function secondGateway(p: TestPlatform, bus: Bus = p.proc.bus): Promise<{ url: string; stop(): Promise<void> }> {
  const gateway = await startGateway({
    bus,
    log: p.proc.log,
    config: { ...p.proc.config.gateway!, httpsPort: 0 },
    dataDir: p.proc.config.platform.dataDir,
    busTimeoutMs: 5000,
    shutdownGraceMs: 1000,
    host: '127.0.0.1',
    ephemeralPorts: true,
    auth: busAuthView({ bus, log: p.proc.log, timeoutMs: 5000 }),
  });
  // Stopped once, however many times asked (a test's own stop and its teardown's).
  let stopping: Promise<void> | undefined;
  return { url: `http://127.0.0.1:${gateway.httpPort}`, stop: () => (stopping ??= gateway.stop()) };
}

/** The key that seals the platform's secrets at rest: the one it was given, or its generated `DATA_DIR/secrets.key`. */
export function secretsKeyOf(p: TestPlatform): Buffer {
  const given = (p.proc.config.services.auth as { secretsKey?: Buffer | null } | undefined)?.secretsKey;
  if (given) return given;
  const key = parseSecretsKey(readFileSync(join(p.proc.config.platform.dataDir, 'secrets.key'), 'utf8'));
  if (!key) throw new Error('no secrets key');
  return key;
}

/** The platform's current token-signing private key, opened with its secrets key (what a forger would need). */
export async function signingKeyOf(p: TestPlatform): Promise<{ kid: string; jwk: JWK }> {
  const { rows } = await p.proc.store!.query<{ kid: string; private_jwk: string }>(
    'select kid, private_jwk from auth.signing_keys order by created desc limit 1',
  );
  const row = rows[0]!;
  return { kid: row.kid, jwk: JSON.parse(secretBox(secretsKeyOf(p)).open(row.private_jwk, signingKeyPurpose(row.kid))) as JWK };
}
