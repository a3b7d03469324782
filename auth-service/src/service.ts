import { loadMigrations, secretsKeyOf, type ServiceDefinition } from '@scada/platform';
import { bootstrap } from './bootstrap.ts';
import { readAuthConfig, type AuthConfig } from './config.ts';
import { adminHandlers } from './handlers/admin.ts';
import { membershipHandlers } from './handlers/memberships.ts';
import { profileHandlers } from './handlers/profile.ts';
import { sessionHandlers } from './handlers/sessions.ts';
import { signInHandlers } from './handlers/sign_in.ts';
import { spaceHandlers } from './handlers/spaces.ts';
import { userAdminHandlers } from './handlers/user_admin.ts';
import { userHandlers } from './handlers/users.ts';
import { CheckQueue } from './domain/check_queue.ts';
import { passwords as passwordHashing } from './domain/passwords.ts';
import { secretBox } from './domain/secrets.ts';
import { loadKeyRing, sealSecretsAtRest } from './store/keys.ts';

/** The auth service: users, roles, spaces, sessions, one-time passwords, account lock, IP settings. */
export const authService: ServiceDefinition<AuthConfig> = {
  name: 'auth',
  version: '0.1.0',
  description: 'Users, roles, spaces, sessions, one-time passwords, account lock and IP filter settings',
  readConfig: readAuthConfig,
  schema: 'auth',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async ({ store, bus, config, log, notices }) => {
    const passwords = passwordHashing(config.passwordHashCost);
    await bootstrap(store, config, passwords, log, notices);
    const checks = new CheckQueue({ concurrency: config.passwordCheckConcurrency, queueLength: config.passwordCheckQueue });
    // One hash at start, timed, so that the queue judges early what can finish before its deadline. It runs
    // beside the start, not before readiness: a replica is ready in well under the time of one hash.
    void passwords.prepare().then(
      (ms) => checks.estimate(ms),
      (err: unknown) => log.warn({ err }, 'the start-up password hash failed'),
    );
    const secrets = secretBox(await secretsKeyOf(config.secretsKey, config.dataDir, log), config.previousSecretsKeys);
    await sealSecretsAtRest(store, secrets, log);
    const deps = { store, bus, config, log, passwords, checks, secrets, keys: await loadKeyRing(store, secrets) };
    return {
      implementations: [
        ...signInHandlers(deps),
        ...sessionHandlers(deps),
        ...userHandlers(deps),
        ...spaceHandlers(deps),
        ...adminHandlers(deps),
        ...profileHandlers(deps),
        ...membershipHandlers(deps),
        ...userAdminHandlers(deps),
      ],
    };
  },
};
