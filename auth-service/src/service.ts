import { loadMigrations, type ServiceDefinition } from '@scada/platform';
import { readAuthConfig, type AuthConfig } from './config.ts';

/** The auth service: users, roles, spaces, sessions, one-time passwords, account lock, IP settings. */
export const authService: ServiceDefinition<AuthConfig> = {
  name: 'auth',
  version: '0.1.0',
  description: 'Users, roles, spaces, sessions, one-time passwords, account lock and IP filter settings',
  readConfig: readAuthConfig,
  schema: 'auth',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async () => ({ implementations: [] }),
};
