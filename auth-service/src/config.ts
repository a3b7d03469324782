import { availableParallelism } from 'node:os';
import { readSecretsKeys, type EnvReader } from '@scada/platform';
import { defaultHashCost, highestHashCost, lowestHashCost, lowestTestHashCost } from './domain/passwords.ts';

/** Settings of the auth service. */
export type AuthConfig = {
  adminUsername: string;
  adminPassword?: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  lockoutThreshold: number;
  lockoutSeconds: number;
  refreshReuseGraceSeconds: number;
  /**
   * scrypt's log2 N for new password hashes (with the parallelism OWASP pairs with it); old hashes keep the
   * cost their PHC string names.
   */
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

/**
 * Hashes at once by default: one core left for everything else, at most 4 (each takes 128 * 2^cost * 8
 * bytes while it runs: 32 MiB at the default cost, 128 MiB for a hash stored at 2^17).
 */
export function defaultCheckConcurrency(cores = availableParallelism()): number {
  return Math.min(4, Math.max(1, cores - 1));
}

/** Reads the auth service's section of the environment. */
export function readAuthConfig(env: EnvReader): AuthConfig {
  const testRun = env.optionalString('NODE_ENV') === 'test';
  const keys = readSecretsKeys(env);
  const config: AuthConfig = {
    adminUsername: env.string('ADMIN_USERNAME', 'admin'),
    adminPassword: env.optionalString('ADMIN_PASSWORD'),
    // Lifetimes of seconds only for test runs, which follow a session to its end instead of waiting minutes.
    accessTokenTtlSeconds: env.int('ACCESS_TOKEN_TTL_SECONDS', 300, { min: testRun ? 1 : 10, max: 86400 }),
    refreshTokenTtlSeconds: env.int('REFRESH_TOKEN_TTL_SECONDS', 86400, { min: testRun ? 2 : 60, max: 31536000 }),
    lockoutThreshold: env.int('LOCKOUT_THRESHOLD', 5, { min: 1, max: 1000 }),
    lockoutSeconds: env.int('LOCKOUT_SECONDS', 600, { min: 1, max: 86400 }),
    refreshReuseGraceSeconds: env.int('REFRESH_REUSE_GRACE_SECONDS', 10, { min: 0, max: 300 }),
    // Below OWASP's lowest setting (2^13, p=10) only for test runs, where hundreds of hashes would otherwise take minutes.
    passwordHashCost: env.int('PASSWORD_HASH_COST', defaultHashCost, {
      min: testRun ? lowestTestHashCost : lowestHashCost,
      max: highestHashCost,
    }),
    passwordCheckConcurrency: env.int('PASSWORD_CHECK_CONCURRENCY', defaultCheckConcurrency(), { min: 1, max: 64 }),
    passwordCheckQueue: env.int('PASSWORD_CHECK_QUEUE', 32, { min: 0, max: 10_000 }),
    secretsKey: keys.current,
    previousSecretsKeys: keys.previous,
    dataDir: env.string('DATA_DIR', './data'),
  };
  if (config.adminPassword !== undefined && (config.adminPassword.length < 8 || config.adminPassword.length > 1024)) {
    env.fail('ADMIN_PASSWORD: must be 8 to 1024 characters');
  }
  if (config.refreshTokenTtlSeconds <= config.accessTokenTtlSeconds) {
    env.fail('REFRESH_TOKEN_TTL_SECONDS: must be longer than ACCESS_TOKEN_TTL_SECONDS');
  }
  return config;
}
