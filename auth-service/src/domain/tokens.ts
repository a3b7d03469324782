import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, errors as joseErrors, type JWK } from 'jose';
import { ProblemError, tokenProfile } from '@scada/contracts';

/** The claims of one token pair, enough to sign it again byte for byte (Ed25519 is deterministic). */
export type PairClaims = {
  sub: string;
  sid: string;
  name: string;
  iat: number;
  accessJti: string;
  accessExp: number;
  refreshJti: string;
  refreshExp: number;
};

/** A signing key with its id. */
export type SigningKey = { kid: string; privateKey: CryptoKey; publicKey: CryptoKey; publicJwk: JWK & { kid: string; alg: string } };

/** A fresh random token id. */
export function newJti(): string {
  return randomBytes(16).toString('base64url');
}

/** Generates an Ed25519 key pair as JWKs, with its RFC 7638 thumbprint as `kid`. */
export async function generateSigningKey(): Promise<{ kid: string; privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, privateJwk: await exportJWK(privateKey), publicJwk };
}

/** Imports a stored key pair. */
export async function loadSigningKey(kid: string, privateJwk: JWK, publicJwk: JWK): Promise<SigningKey> {
  const privateKey = (await importJWK({ ...privateJwk, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey;
  const publicKey = (await importJWK({ ...publicJwk, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey;
  return { kid, privateKey, publicKey, publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' } };
}

/** Signs the access and refresh token of a pair. Signing the same claims again gives the same strings. */
export async function signPair(key: SigningKey, claims: PairClaims): Promise<{ access: string; refresh: string }> {
  const sign = (typ: string, audience: string, jti: string, exp: number) =>
    new SignJWT({ sid: claims.sid, name: claims.name })
      .setProtectedHeader({ alg: 'EdDSA', typ, kid: key.kid })
      .setIssuer(tokenProfile.issuer)
      .setAudience(audience)
      .setSubject(claims.sub)
      .setJti(jti)
      .setIssuedAt(claims.iat)
      .setExpirationTime(exp)
      .sign(key.privateKey);
  return {
    access: await sign(tokenProfile.accessType, tokenProfile.accessAudience, claims.accessJti, claims.accessExp),
    refresh: await sign(tokenProfile.refreshType, tokenProfile.refreshAudience, claims.refreshJti, claims.refreshExp),
  };
}

/** The claims of a valid refresh token; `invalid_token` otherwise. Algorithm, issuer, audience and typ are pinned. */
export async function verifyRefresh(key: SigningKey, token: string): Promise<{ sub: string; sid: string; jti: string; exp: number }> {
  try {
    const { payload } = await jwtVerify(token, key.publicKey, {
      algorithms: [tokenProfile.algorithm],
      issuer: tokenProfile.issuer,
      audience: tokenProfile.refreshAudience,
      typ: tokenProfile.refreshType,
      requiredClaims: [...tokenProfile.requiredClaims],
    });
    if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string' || typeof payload.jti !== 'string')
      throw new joseErrors.JWTInvalid('claims');
    return { sub: payload.sub, sid: payload.sid, jti: payload.jti, exp: payload.exp as number };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) throw new ProblemError('invalid_token', 'The refresh token is not valid');
    throw err;
  }
}
