import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { centralSite, deadlines } from '@scada/contracts';
import type { EnvReader } from './env.ts';

/** The parts a platform process can run. */
export const serviceKeys = ['gateway', 'auth', 'config', 'protocol', 'history'] as const;
/** One part a platform process can run. */
export type ServiceKey = (typeof serviceKeys)[number];

/** Process-wide settings: which services run here, and the bus and store they share. */
export type PlatformConfig = {
  services: ServiceKey[];
  dataDir: string;
  databaseUrl?: string;
  natsUrl?: string;
  /** Puts every subject under a prefix, so several platforms can share one NATS server. */
  busSubjectPrefix?: string;
  /** How this process proves itself to NATS. */
  natsAuth: NatsAuth;
  /** The edge site a protocol service runs at (`SITE`, validated by that service), for its replies' inbox; none at the hub. */
  site?: string;
  /** This process's key for signing bus contexts and the keys it trusts (PEM and JWK Set text), when configured. */
  busKeys: { signingKeyPem: string; trustedKeysJson: string } | null;
  logLevel: string;
  /** How long a bus request waits for its reply. */
  busTimeoutMs: number;
  /** How long SIGTERM waits for work in flight before closing anyway. */
  shutdownGraceMs: number;
  /** How long a stopping gateway keeps serving new connections after its readiness fails, before it closes its listeners. */
  shutdownDrainMs: number;
  /** Port of the probe listener (`/healthz`, `/readyz`) of a process; 0 turns it off. */
  healthPort: number;
  /** How V8 compiles the embedded store's WebAssembly: its baseline compiler only, or optimising hot code too. */
  storeCompiler: StoreCompiler;
  /** Where the embedded store's PostgreSQL runs: `auto` (a worker thread, an edge site's on the main thread), `main` or `worker`. */
  storeThread: StoreThreadChoice;
};

/** The choices of `EMBEDDED_STORE_THREAD`. */
export const storeThreadChoices = ['auto', 'main', 'worker'] as const;
/** One choice of `EMBEDDED_STORE_THREAD`. */
export type StoreThreadChoice = (typeof storeThreadChoices)[number];

/** The choices of `EMBEDDED_STORE_COMPILER`. */
export const storeCompilers = ['baseline', 'optimizing'] as const;
/** One choice of `EMBEDDED_STORE_COMPILER`. */
export type StoreCompiler = (typeof storeCompilers)[number];

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads the process-wide section of the environment. `available` are the parts this build of the process
 * carries (every one for `main.ts`, one for a single-service bundle): `SERVICES` chooses among them and
 * names them all when unset.
 */
export function readPlatformConfig(env: EnvReader, available: readonly ServiceKey[] = serviceKeys): PlatformConfig {
  const refusal = `is not a service${available.length < serviceKeys.length ? ' this build runs' : ''} (${available.join(', ')})`;
  const services = env.list('SERVICES', [...available], (s) =>
    (available as readonly string[]).includes(s) ? null : refusal,
  ) as ServiceKey[];
  return {
    services: [...new Set(services)],
    dataDir: env.string('DATA_DIR', './data'),
    databaseUrl: env.optionalUrl('DATABASE_URL', ['postgres', 'postgresql']),
    natsUrl: env.optionalUrl('NATS_URL', ['nats', 'tls', 'ws', 'wss']),
    busSubjectPrefix: readPrefix(env),
    natsAuth: readNatsAuth(env),
    site: readSite(env),
    busKeys: readBusKeys(env),
    logLevel: env.oneOf('LOG_LEVEL', 'info', logLevels),
    busTimeoutMs: env.int('BUS_TIMEOUT_MS', deadlines.standardMs, { min: 100, max: 120000 }),
    shutdownGraceMs: env.int('SHUTDOWN_GRACE_MS', 10000, { min: 0, max: 300000 }),
    shutdownDrainMs: env.int('SHUTDOWN_DRAIN_MS', 0, { min: 0, max: 60000 }),
    healthPort: env.port('HEALTH_PORT', 0),
    storeCompiler: env.oneOf('EMBEDDED_STORE_COMPILER', 'baseline', storeCompilers),
    storeThread: env.oneOf('EMBEDDED_STORE_THREAD', 'auto', storeThreadChoices),
  };
}

function readSite(env: EnvReader): string | undefined {
  const site = env.optionalString('SITE');
  return site === undefined || site === centralSite ? undefined : site;
}

function readPrefix(env: EnvReader): string | undefined {
  const prefix = env.optionalString('BUS_SUBJECT_PREFIX');
  if (prefix !== undefined && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix)) {
    env.fail(`BUS_SUBJECT_PREFIX: must be subject tokens of letters, digits, '_' and '-' (got "${prefix}")`);
    return undefined;
  }
  return prefix;
}

/** Credentials and TLS of the NATS connection: at most one of a credentials file, a user and password, a token. */
export type NatsAuth = {
  /** A NATS credentials file (user JWT and NKey seed). */
  credsFile?: string;
  user?: string;
  password?: string;
  token?: string;
  /** TLS: the CA that signed the server's certificate, and this process's own certificate and key. */
  tls?: { caFile: string; certFile?: string; keyFile?: string };
};

function readNatsAuth(env: EnvReader): NatsAuth {
  const auth: NatsAuth = {};
  auth.credsFile = readableFile(env, 'NATS_CREDS');
  auth.user = env.optionalString('NATS_USER');
  auth.password = env.optionalString('NATS_PASSWORD');
  auth.token = env.optionalString('NATS_TOKEN');
  if ((auth.user === undefined) !== (auth.password === undefined)) env.fail('NATS_USER and NATS_PASSWORD: set both or neither');
  const ways = [auth.credsFile, auth.user, auth.token].filter((v) => v !== undefined).length;
  if (ways > 1) env.fail('NATS_CREDS, NATS_USER/NATS_PASSWORD and NATS_TOKEN: set one way of signing in to NATS, not several');
  const caFile = readableFile(env, 'NATS_TLS_CA');
  const certFile = readableFile(env, 'NATS_TLS_CERT');
  const keyFile = readableFile(env, 'NATS_TLS_KEY');
  if ((certFile === undefined) !== (keyFile === undefined)) env.fail('NATS_TLS_CERT and NATS_TLS_KEY: set both or neither');
  if (caFile === undefined && certFile !== undefined) env.fail('NATS_TLS_CERT: needs NATS_TLS_CA, the CA of the server');
  if (caFile !== undefined) auth.tls = { caFile, certFile, keyFile };
  for (const key of Object.keys(auth) as (keyof NatsAuth)[]) if (auth[key] === undefined) delete auth[key];
  return auth;
}

/** A file the process can read, named by a variable; a problem when it cannot be read. */
function readableFile(env: EnvReader, name: string): string | undefined {
  const file = env.optionalString(name);
  if (file === undefined) return undefined;
  try {
    accessSync(file, constants.R_OK);
    return file;
  } catch (err) {
    env.fail(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

/** A value given inline (`NAME`) or in a file (`NAME_FILE`), not both. */
function valueOrFile(env: EnvReader, name: string, fileName: string): string | undefined {
  const inline = env.optionalString(name);
  const file = readableFile(env, fileName);
  if (inline !== undefined && file !== undefined) env.fail(`${name} and ${fileName}: set one, not both`);
  return inline ?? (file !== undefined ? readFileSync(file, 'utf8') : undefined);
}

function readBusKeys(env: EnvReader): PlatformConfig['busKeys'] {
  // A private key any user of the machine can read signs for this process: refused, as ssh refuses one.
  for (const name of ['BUS_SIGNING_KEY_FILE', 'NATS_CREDS', 'NATS_TLS_KEY']) {
    const file = env.optionalString(name);
    if (file === undefined) continue;
    try {
      const mode = statSync(file).mode;
      if ((mode & 0o007) !== 0)
        env.fail(`${name}: ${file} is readable by every user of the machine (mode ${(mode & 0o777).toString(8)}): make it 0600`);
    } catch {
      // readableFile names a file that cannot be read
    }
  }
  const signingKeyPem = valueOrFile(env, 'BUS_SIGNING_KEY', 'BUS_SIGNING_KEY_FILE');
  const trustedKeysJson = valueOrFile(env, 'BUS_TRUSTED_KEYS', 'BUS_TRUSTED_KEYS_FILE');
  if ((signingKeyPem === undefined) !== (trustedKeysJson === undefined)) {
    env.fail('BUS_SIGNING_KEY(_FILE) and BUS_TRUSTED_KEYS(_FILE): set both or neither');
    return null;
  }
  return signingKeyPem !== undefined && trustedKeysJson !== undefined ? { signingKeyPem, trustedKeysJson } : null;
}
