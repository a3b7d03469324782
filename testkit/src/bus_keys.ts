import { generateKeyPairSync } from 'node:crypto';

/**
 * Bus keys for a test run whose parts run in several processes on NATS: one X25519 key that every
 * process signs with, trusted in every role. A deployment gives each role its own key (`npm run
 * bus-keys`); tests that hold roles apart make their own.
 */
export function sharedBusKeys(roles: readonly string[] = ['gateway', 'auth', 'config', 'protocol', 'history']): Record<string, string> {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    BUS_SIGNING_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    BUS_TRUSTED_KEYS: JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), roles }] }),
  };
}

/** The keys of this test process: the same for every platform and process a test file starts. */
export const testBusKeys: Record<string, string> = sharedBusKeys();

/**
 * Bus keys held apart: one key per process, trusted in the roles that process plays and no other, as a
 * deployment gives them (`npm run bus-keys`). Answers each process's environment.
 */
export function roleBusKeys<K extends string>(processes: Record<K, readonly string[]>): Record<K, Record<string, string>> {
  const pairs = Object.entries(processes).map(([name, roles]) => ({ name, roles, ...generateKeyPairSync('x25519') }));
  const trusted = JSON.stringify({ keys: pairs.map((p) => ({ ...p.publicKey.export({ format: 'jwk' }), roles: p.roles })) });
  return Object.fromEntries(
    pairs.map((p) => [
      p.name,
      { BUS_SIGNING_KEY: p.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), BUS_TRUSTED_KEYS: trusted },
    ]),
  ) as unknown as Record<K, Record<string, string>>;
}
