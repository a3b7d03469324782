import type { Store } from '@scada/platform';
import type { JWK } from 'jose';
import { generateSigningKey, loadSigningKey, type SigningKey } from '../domain/tokens.ts';

/** The key ring every replica shares: the newest key signs, every stored key verifies. */
export type KeyRing = { current: SigningKey; byKid: Map<string, SigningKey> };

/**
 * Loads the signing keys, creating the first one when there is none. Creation happens under an advisory
 * lock, so replicas starting together agree on one key.
 */
export async function loadKeyRing(store: Store): Promise<KeyRing> {
  await store.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('auth.signing_keys'))`);
    const { rows } = await tx.query('select 1 from auth.signing_keys limit 1');
    if (rows.length > 0) return;
    const key = await generateSigningKey();
    await tx.query('insert into auth.signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)', [key.kid, JSON.stringify(key.privateJwk), JSON.stringify(key.publicJwk)]);
  });
  const { rows } = await store.query<{ kid: string; private_jwk: string; public_jwk: string }>(
    'select kid, private_jwk, public_jwk from auth.signing_keys order by created desc, kid',
  );
  const keys = await Promise.all(rows.map((r) => loadSigningKey(r.kid, JSON.parse(r.private_jwk) as JWK, JSON.parse(r.public_jwk) as JWK)));
  return { current: keys[0] as SigningKey, byKid: new Map(keys.map((k) => [k.kid, k])) };
}
