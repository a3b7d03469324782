/**
 * Where and how a session reaches its device: the connection's address and port, with its ACSE password and
 * TLS settings opened from the store just before each attempt, so that an attempt always uses what is
 * stored now and nothing secret is kept in memory between attempts.
 */
import type { SecretBox, Store } from '@scada/platform';
import { openSecurity } from '../domain/connection_security.ts';
import { sealedSecurity } from '../store/connections.ts';
import type { StartedConnection } from '../store/sessions.ts';
import type { DeviceTarget } from './live_device.ts';

/** The target of a started connection; fails with a reason the session shows when the settings cannot be opened. */
export function deviceTargets(store: Store, secrets: SecretBox): (connection: StartedConnection) => Promise<DeviceTarget> {
  return async (c) => {
    const sealed = await sealedSecurity(store, c.space, c.id);
    if (!sealed) return { host: c.ip, port: c.port };
    try {
      return { host: c.ip, port: c.port, ...openSecurity(sealed, c, secrets) };
    } catch (err) {
      throw new Error(`the connection's password or TLS settings cannot be opened with this SECRETS_KEY: ${(err as Error).message}`);
    }
  };
}
