import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { EnvReader } from '@scada/platform';
import { defaultHashCost, lowestTestHashCost } from './domain/passwords.ts';
import { parseSecretsKey } from './domain/secrets.ts';

/** Settings of the auth service. */
export type AuthConfig = {
  adminUsername: string;
  adminPassword?: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  lockoutThreshold: number;
  lockoutSeconds: number;
  refreshReuseGraceSeconds: number;
  /** scrypt's log2 N for new password hashes; old hashes keep the cost they were made with. */
  passwordHashCost: number;
  /** Password checks hashed at once by one replica. */
  passwordCheckConcurrency: number;
  /** Password checks waiting for a turn in one replica; more are refused at once (503 `overloaded`). */
  passwordCheckQueue: number;
  /** The key that seals signing keys and TOTP secrets; null: the embedded mode's `DATA_DIR/secrets.key`. */
  secretsKey: Buffer | null;
  /** Keys that sealed before the current one: they still open, and what they sealed is sealed again at start. */
  previousSecretsKeys: Buffer[];
  dataDir: string;
};

/** Hashes at once by default: one core left for everything else, at most 4 (scrypt takes 128 MiB each). */
export function defaultCheckConcurrency(cores = availableParallelism()): number {
  return Math.min(4, Math.max(1, cores - 1));
}

/** Reads the auth service's section of the environment. */
export function readAuthConfig(env: EnvReader): AuthConfig {
  const testRun = env.optionalString('NODE_ENV') === 'test';
  const config: AuthConfig = {
    adminUsername: env.string('ADMIN_USERNAME', 'admin'),
    adminPassword: env.optionalString('ADMIN_PASSWORD'),
    // Lifetimes of seconds only for test runs, which follow a session to its end instead of waiting minutes.
    accessTokenTtlSeconds: env.int('ACCESS_TOKEN_TTL_SECONDS', 300, { min: testRun ? 1 : 10, max: 86400 }),
    refreshTokenTtlSeconds: env.int('REFRESH_TOKEN_TTL_SECONDS', 86400, { min: testRun ? 2 : 60, max: 31536000 }),
    lockoutThreshold: env.int('LOCKOUT_THRESHOLD', 5, { min: 1, max: 1000 }),
    lockoutSeconds: env.int('LOCKOUT_SECONDS', 600, { min: 1, max: 86400 }),
    refreshReuseGraceSeconds: env.int('REFRESH_REUSE_GRACE_SECONDS', 10, { min: 0, max: 300 }),
    // Below production cost only for test runs, where hundreds of hashes would otherwise take minutes.
    passwordHashCost: env.int('PASSWORD_HASH_COST', defaultHashCost, {
      min: testRun ? lowestTestHashCost : defaultHashCost,
      max: 20,
    }),
    passwordCheckConcurrency: env.int('PASSWORD_CHECK_CONCURRENCY', defaultCheckConcurrency(), { min: 1, max: 64 }),
    passwordCheckQueue: env.int('PASSWORD_CHECK_QUEUE', 32, { min: 0, max: 10_000 }),
    secretsKey: readKey(env, 'SECRETS_KEY', 'SECRETS_KEY_FILE'),
    previousSecretsKeys: [readKey(env, 'SECRETS_PREVIOUS_KEY', 'SECRETS_PREVIOUS_KEY_FILE')].filter((k): k is Buffer => k !== null),
    dataDir: env.string('DATA_DIR', './data'),
  };
  if (config.secretsKey === null && env.optionalString('DATABASE_URL') !== undefined) {
    env.fail(
      'SECRETS_KEY_FILE or SECRETS_KEY: required with DATABASE_URL, so that a database dump alone can neither mint tokens nor ' +
        'compute TOTP codes; make a key with `openssl rand -base64 32 > secrets.key` (or `node -e "console.log(crypto.randomBytes(32).toString(\'base64\'))"`), ' +
        'keep it outside the database (a Kubernetes Secret, a file only the platform can read) and set SECRETS_KEY_FILE to its path',
    );
  }
  if (config.adminPassword !== undefined && (config.adminPassword.length < 8 || config.adminPassword.length > 1024)) {
    env.fail('ADMIN_PASSWORD: must be 8 to 1024 characters');
  }
  if (config.refreshTokenTtlSeconds <= config.accessTokenTtlSeconds) {
    env.fail('REFRESH_TOKEN_TTL_SECONDS: must be longer than ACCESS_TOKEN_TTL_SECONDS');
  }
  return config;
}

/** A key given as `name` (base64 text) or `fileName` (a file holding it); null when neither is set. */
function readKey(env: EnvReader, name: string, fileName: string): Buffer | null {
  const text = env.optionalString(name);
  const file = env.optionalString(fileName);
  if (text !== undefined && file !== undefined) {
    env.fail(`${name}, ${fileName}: set one or the other`);
    return null;
  }
  if (file !== undefined) {
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (err) {
      env.fail(`${fileName}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return null;
    }
    const key = parseSecretsKey(content);
    if (!key) env.fail(`${fileName}: ${file} must hold the base64 text of 32 random bytes`);
    return key;
  }
  if (text === undefined) return null;
  const key = parseSecretsKey(text);
  if (!key) env.fail(`${name}: must be the base64 text of 32 random bytes`);
  return key;
}
