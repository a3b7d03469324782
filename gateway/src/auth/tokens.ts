import { randomUUID } from 'node:crypto';
import { deadlineOf, ProblemError, signingKeys, tokenProfile } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { AccessClaims } from './auth_view.ts';

/** The access token profile the gateway accepts; anything else is refused. */
const profile = { typ: tokenProfile.accessType, requiredClaims: [...tokenProfile.requiredClaims] };
/** An unknown `kid` makes the gateway fetch the keys again, but not more often than this. */
const keyRefetchMs = 5_000;
/** Verified tokens remembered, so that a session's every request does not pay a signature check. */
const cacheSize = 10_000;

type KeySet = { getKey: JWTVerifyGetKey; issuer: string; audience: string; algorithm: string; kids: Set<string> };

/**
 * Verifies access tokens locally with the auth service's public keys, fetched over the bus on first use
 * and again when a token names a key this replica has not seen (a rotation). The algorithm, issuer,
 * audience, `typ` and the required claims are pinned.
 */
export class TokenVerifier {
  readonly #deps: { bus: Bus; log: Logger; timeoutMs: number };
  #keys: KeySet | null = null;
  #loading: Promise<KeySet> | null = null;
  #lastFetch = 0;
  /** The least recently used go first (bench/parts.bench.ts: a Map kept first in first out was 1.02–1.12 × as fast, too little to keep). */
  readonly #verified = new LRUCache<string, AccessClaims>({ max: cacheSize });

  constructor(deps: { bus: Bus; log: Logger; timeoutMs: number }) {
    this.#deps = deps;
  }

  /** The claims of a valid access token; an `invalid_token` problem otherwise. */
  async verify(token: string, requestId: string): Promise<AccessClaims> {
    if (token.length > 8192) throw invalid('The token is too long');
    const known = this.#verified.get(token);
    if (known) {
      // Same string, same signature: only the clock can have changed its verdict.
      if (known.exp * 1000 <= Date.now()) throw invalid('The token has expired', true);
      return known;
    }
    const claims = await this.#verifySignature(token, requestId);
    this.#verified.set(token, claims);
    return claims;
  }

  async #verifySignature(token: string, requestId: string): Promise<AccessClaims> {
    let keys = this.#keys ?? (await this.#load(requestId));
    if (!keys.kids.has(kidOf(token) ?? '') && Date.now() - this.#lastFetch > keyRefetchMs) keys = await this.#load(requestId);
    try {
      const { payload } = await jwtVerify(token, keys.getKey, {
        algorithms: [keys.algorithm],
        issuer: keys.issuer,
        audience: keys.audience,
        ...profile,
      });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.jti !== 'string') {
        throw invalid('The token lacks its subject, session or id');
      }
      return { sub: payload.sub, sid: payload.sid, jti: payload.jti, exp: payload.exp as number, iat: payload.iat as number };
    } catch (err) {
      if (err instanceof ProblemError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw invalid('The token has expired', true);
      if (err instanceof joseErrors.JOSEError) throw invalid('The token is not valid');
      throw err;
    }
  }

  #load(requestId: string): Promise<KeySet> {
    this.#loading ??= (async () => {
      try {
        const answer = await call(
          this.#deps.bus,
          signingKeys,
          { params: {}, query: {} },
          { requestId: requestId || randomUUID(), timeoutMs: deadlineOf(signingKeys, this.#deps.timeoutMs) },
        );
        this.#lastFetch = Date.now();
        const keys: KeySet = {
          getKey: createLocalJWKSet({ keys: answer.keys as never }),
          issuer: answer.issuer,
          audience: answer.audience,
          algorithm: answer.algorithm,
          kids: new Set(answer.keys.map((k) => k.kid)),
        };
        this.#keys = keys;
        return keys;
      } finally {
        this.#loading = null;
      }
    })();
    return this.#loading;
  }
}

/** The `kid` of a compact JWS header, without trusting anything else in it (jose's reading of the header). */
function kidOf(token: string): string | null {
  try {
    const { kid } = decodeProtectedHeader(token);
    return typeof kid === 'string' ? kid : null;
  } catch {
    return null;
  }
}

/** An `invalid_token` problem; `expired` lets the caller try the refresh cookie. */
export function invalid(detail: string, expired = false): ProblemError {
  const problem = new ProblemError('invalid_token', detail);
  (problem as ProblemError & { expired?: boolean }).expired = expired;
  return problem;
}

/** True for the problem of an expired (but otherwise valid) token. */
export function isExpired(err: unknown): boolean {
  return err instanceof ProblemError && (err as ProblemError & { expired?: boolean }).expired === true;
}
