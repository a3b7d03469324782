import type { Queryable, Store } from '@scada/platform';
import type { JWK } from 'jose';
import type { Logger } from 'pino';
import { signingKeyPurpose, totpPurpose, type SecretBox } from '../domain/secrets.ts';
import { generateSigningKey, loadSigningKey, type SigningKey } from '../domain/tokens.ts';

/** The key ring every replica shares: the newest key signs, every stored key verifies. */
export type KeyRing = { current: SigningKey; byKid: Map<string, SigningKey> };

async function insertKey(db: Queryable, box: SecretBox): Promise<string> {
  const key = await generateSigningKey();
  const sealed = box.seal(JSON.stringify(key.privateJwk), signingKeyPurpose(key.kid));
  await db.query('insert into auth.signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)', [
    key.kid,
    sealed,
    JSON.stringify(key.publicJwk),
  ]);
  return key.kid;
}

/**
 * Seals what the store holds in plain, and seals again under the current key what a previous key sealed,
 * in one transaction under an advisory lock (replicas starting together do it once). A signing key found
 * in plain is retired, not sealed: anyone who read it could mint tokens, so a new key replaces it and the
 * tokens it signed stop working. TOTP secrets are sealed in place (authenticator apps keep working).
 */
export async function sealSecretsAtRest(store: Store, box: SecretBox, log: Logger): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('auth.secrets'))`);
    const { rows: keys } = await tx.query<{ kid: string; private_jwk: string }>('select kid, private_jwk from auth.signing_keys');
    const plain = keys.filter((k) => !box.isSealed(k.private_jwk));
    for (const k of keys.filter((k) => box.isSealed(k.private_jwk) && !box.isCurrent(k.private_jwk))) {
      const purpose = signingKeyPurpose(k.kid);
      await tx.query('update auth.signing_keys set private_jwk = $2 where kid = $1', [
        k.kid,
        box.seal(box.open(k.private_jwk, purpose), purpose),
      ]);
    }
    if (plain.length > 0) {
      const kid = await insertKey(tx, box);
      await tx.query('delete from auth.signing_keys where kid = any($1)', [plain.map((k) => k.kid)]);
      log.warn(
        { retired: plain.map((k) => k.kid), kid },
        'a token-signing key was stored in plain: replaced by a new sealed key; tokens it signed no longer work',
      );
    }
    const { rows: users } = await tx.query<{ id: string; otp_secret: string }>(
      'select id, otp_secret from auth.users where otp_secret is not null',
    );
    let sealed = 0;
    for (const u of users) {
      if (box.isCurrent(u.otp_secret)) continue;
      const purpose = totpPurpose(u.id);
      const secret = box.isSealed(u.otp_secret) ? box.open(u.otp_secret, purpose) : u.otp_secret;
      await tx.query('update auth.users set otp_secret = $2 where id = $1', [u.id, box.seal(secret, purpose)]);
      sealed += 1;
    }
    if (sealed > 0) log.info({ users: sealed }, 'sealed TOTP secrets under the current secrets key');
  });
}

/**
 * Loads the signing keys, creating the first one when there is none. Creation happens under an advisory
 * lock, so replicas starting together agree on one key.
 */
export async function loadKeyRing(store: Store, box: SecretBox): Promise<KeyRing> {
  await store.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('auth.signing_keys'))`);
    const { rows } = await tx.query('select 1 from auth.signing_keys limit 1');
    if (rows.length === 0) await insertKey(tx, box);
  });
  const { rows } = await store.query<{ kid: string; private_jwk: string; public_jwk: string }>(
    'select kid, private_jwk, public_jwk from auth.signing_keys order by created desc, kid',
  );
  const keys = await Promise.all(
    rows.map((r) =>
      loadSigningKey(r.kid, JSON.parse(box.open(r.private_jwk, signingKeyPurpose(r.kid))) as JWK, JSON.parse(r.public_jwk) as JWK),
    ),
  );
  return { current: keys[0] as SigningKey, byKid: new Map(keys.map((k) => [k.kid, k])) };
}
