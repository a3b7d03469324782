import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

/**
 * The keys bus contexts are authenticated with. Each process holds an X25519 key pair; every pair of keys
 * shares a secret (X25519, then HKDF-SHA-256) that only the two holders can compute. A context carries one
 * HMAC-SHA-256 tag per trusted key, each made with the secret the sender shares with that key's holder,
 * and a receiver checks the one made for it: no holder can make a tag another holder accepts as coming
 * from a third key. `npm run bus-keys` makes the keys, one per role (and one per edge site).
 */

/** The roles a trusted key may play. */
export const busRoles = ['gateway', 'auth', 'config', 'protocol', 'history'] as const;
/** One of {@link busRoles}. */
export type BusRole = (typeof busRoles)[number];

/** This process's key, with the id receivers find its public half under. */
export type BusIdentity = { kid: string; privateKey: KeyObject; publicJwk: JWK };

/**
 * A public key a process trusts, the roles its holder plays, the short id contexts name it by, and the
 * secret this process shares with its holder.
 */
export type TrustedBusKey = { kid: string; roles: BusRole[]; key: KeyObject; tagId: string };

/** The keys of one process: its own, and those it accepts contexts from (and makes tags for). */
export type BusTrust = { identity: BusIdentity; trusted: Map<string, TrustedBusKey> };

/** The public key set format of `BUS_TRUSTED_KEYS`: a JWK Set whose keys name their roles. */
export type TrustedKeySet = { keys: (JWK & { roles: string[] })[] };

/** Bytes of a key's short id in a context: the first bytes of its JWK thumbprint. */
export const tagIdBytes = 8;

/** The short id a context names a key by: the first {@link tagIdBytes} of its thumbprint, base64url. */
export function tagIdOf(kid: string): string {
  return Buffer.from(kid, 'base64url').subarray(0, tagIdBytes).toString('base64url');
}

/** Reads a PEM (PKCS #8) X25519 private key: this process's identity on the bus. */
export async function identityFromPem(pem: string): Promise<BusIdentity> {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'x25519')
    throw new Error(`the bus key is an ${privateKey.asymmetricKeyType ?? 'unknown'} key, not X25519 (npm run bus-keys makes one)`);
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { kid: await calculateJwkThumbprint(publicJwk), privateKey, publicJwk };
}

/** A new X25519 key pair, as PEM private key and its public JWK with its id. */
export async function newBusKey(): Promise<{ pem: string; identity: BusIdentity }> {
  const { privateKey } = generateKeyPairSync('x25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { pem, identity: await identityFromPem(pem) };
}

/** The entry of a trusted key set for a public key and its roles. */
export function trustedKeyEntry(identity: BusIdentity, roles: readonly BusRole[]): TrustedKeySet['keys'][number] {
  return { ...identity.publicJwk, kid: identity.kid, alg: 'ECDH-ES', use: 'enc', roles: [...roles] };
}

/** Parses a trusted key set (JSON text); throws a message naming what is wrong. */
export async function parseTrustedKeys(text: string): Promise<Map<string, TrustedBusKey>> {
  let set: unknown;
  try {
    set = JSON.parse(text);
  } catch {
    throw new Error('is not JSON');
  }
  const keys = (set as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw new Error('is not a JWK Set ({"keys": [...]})');
  const out = new Map<string, TrustedBusKey>();
  const tagIds = new Set<string>();
  for (const [i, entry] of keys.entries()) {
    const jwk = entry as JWK & { roles?: unknown };
    if (jwk?.kty !== 'OKP' || jwk.crv !== 'X25519' || typeof jwk.x !== 'string' || jwk.d !== undefined)
      throw new Error(
        `key ${i} is not an X25519 public key${jwk?.crv === 'Ed25519' ? ' (an Ed25519 key of old: make new keys with npm run bus-keys)' : ''}`,
      );
    const roles = Array.isArray(jwk.roles) ? jwk.roles : [];
    if (roles.length === 0 || !roles.every((r) => (busRoles as readonly unknown[]).includes(r)))
      throw new Error(`key ${i} must name its roles, of ${busRoles.join(', ')}`);
    const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'X25519', x: jwk.x });
    if (jwk.kid !== undefined && jwk.kid !== kid) throw new Error(`key ${i}: its kid is not its thumbprint (${kid})`);
    let key: KeyObject;
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: jwk.x }, format: 'jwk' });
    } catch {
      throw new Error(`key ${i} is not an X25519 public key`);
    }
    const tagId = tagIdOf(kid);
    if (tagIds.has(tagId) && !out.has(kid)) throw new Error(`key ${i}: another key has the same short id ${tagId}; make a new one`);
    tagIds.add(tagId);
    out.set(kid, { kid, roles: roles as BusRole[], key, tagId });
  }
  return out;
}

/** Reads this process's key and the keys it trusts (as `BUS_SIGNING_KEY` and `BUS_TRUSTED_KEYS` give them). */
export async function busTrustFrom(pem: string, trustedJson: string): Promise<BusTrust> {
  const identity = await identityFromPem(pem);
  const trusted = await parseTrustedKeys(trustedJson);
  for (const key of trusted.values()) {
    try {
      pairKey(identity, key);
    } catch {
      throw new Error(`key ${key.kid} shares no secret with this process's key (X25519 refuses it)`);
    }
  }
  return { identity, trusted };
}

/** A one-process trust: a fresh key that only this process holds and trusts, in the roles it runs. */
export async function ownTrust(roles: readonly BusRole[]): Promise<BusTrust> {
  const { identity } = await newBusKey();
  const trusted = await parseTrustedKeys(JSON.stringify({ keys: [trustedKeyEntry(identity, roles)] }));
  return { identity, trusted };
}

/**
 * The secret this process shares with the holder of a trusted key: HKDF-SHA-256 over their X25519 shared
 * secret, bound to both key ids (in a fixed order, so both holders derive the same). Throws for a public
 * key X25519 refuses (a low-order point).
 */
export function pairKey(identity: BusIdentity, other: TrustedBusKey): Buffer {
  const shared = diffieHellman({ privateKey: identity.privateKey, publicKey: other.key });
  const ids = [identity.kid, other.kid].sort().join('.');
  return Buffer.from(hkdfSync('sha256', shared, Buffer.alloc(0), `scada bus context pair key ${ids}`, 32));
}
