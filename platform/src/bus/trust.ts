import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyObject,
} from 'node:crypto';
import { busHeaders, mayCall, operations, problemBody, type Operation } from '@scada/contracts';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import type { Logger } from 'pino';
import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import type { EventLog, EventLogOptions } from './event_log.ts';
import type { SpaceVersions } from './space_versions.ts';
import type { SiteStreams } from './site_streams.ts';
import type {
  Bus,
  BusHeaders,
  BusMessage,
  BusReply,
  BusService,
  BusSubscription,
  EndpointSpec,
  EventHandler,
  RequestOptions,
  ServiceSpec,
} from './bus.ts';

/**
 * Trust between the processes of a platform on NATS. A service acts on nobody's word for who asks: every
 * request carries a short-lived context (a JWS, Ed25519) signed by the process that sent it and bound to
 * the subject, the request id and the body. The receiving service checks the signature against the public
 * keys it trusts, each of which names the roles its holder plays (`gateway`, `auth`, `config`,
 * `protocol`), and takes the actor, space and client address from the context alone:
 *
 * - a gateway's key vouches for any caller (it authenticated the user);
 * - a service's key vouches for the service itself (actor `service:<name>`), for the actors it runs
 *   (the config service's scripts, `script:<id>`), and for no user: a call a
 *   service makes on a user's behalf carries the gateway's own context of that request (`via`), so a
 *   service can act for a user only while that user's request through a gateway is under way; likewise a
 *   script's request passed on (to the protocol replica holding the device) carries the config service's
 *   context of it;
 * - a context without an actor (sign-in, key fetches) may come from any trusted key.
 *
 * A context is good for {@link contextLifetimeSeconds} and only for the subject it names: a copy sent to
 * another subject, a body changed on the way, an unknown key, a missing or expired context are refused
 * with 401 and a warn line. Reading a context off the bus needs the right to subscribe to the service's
 * subjects, which the NATS permissions give the service alone (deploy/README.md), so a replay on the same
 * subject within its lifetime is left to them. The in-process bus carries no contexts: what runs in one
 * process trusts itself.
 */

/** How long a signed context is good for, from its signing. */
export const contextLifetimeSeconds = 30;
/** Clock difference between hosts that a context's times may show. */
const clockToleranceSeconds = 5;
/** The JWS `typ` of a bus context: never accepted as any other kind of token, nor another as it. */
const contextType = 'scada-bus-context+jwt';
/** Longer header values are refused before any parsing. */
const maxContextLength = 16 * 1024;

/** The roles a trusted key may play. */
export const busRoles = ['gateway', 'auth', 'config', 'protocol', 'history'] as const;
export type BusRole = (typeof busRoles)[number];

/** This process's signing key, with the id receivers find its public half under. */
export type BusIdentity = { kid: string; privateKey: KeyObject; publicJwk: JWK };

/** A public key a process trusts, and the roles its holder plays. */
export type TrustedBusKey = { kid: string; roles: BusRole[]; key: KeyObject };

/** The keys of one process: its own, and those it accepts contexts from. */
export type BusTrust = { identity: BusIdentity; trusted: Map<string, TrustedBusKey> };

/** The public key set format of `BUS_TRUSTED_KEYS`: a JWK Set whose keys name their roles. */
export type TrustedKeySet = { keys: (JWK & { roles: string[] })[] };

/** Reads a PEM (PKCS #8) Ed25519 private key: this process's identity on the bus. */
export async function identityFromPem(pem: string): Promise<BusIdentity> {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the bus signing key is not an Ed25519 key');
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { kid: await calculateJwkThumbprint(publicJwk), privateKey, publicJwk };
}

/** A new Ed25519 key pair, as PEM private key and its public JWK with its id. */
export async function newBusKey(): Promise<{ pem: string; identity: BusIdentity }> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { pem, identity: await identityFromPem(pem) };
}

/** The entry of a trusted key set for a public key and its roles. */
export function trustedKeyEntry(identity: BusIdentity, roles: readonly BusRole[]): TrustedKeySet['keys'][number] {
  return { ...identity.publicJwk, kid: identity.kid, alg: 'EdDSA', use: 'sig', roles: [...roles] };
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
  for (const [i, entry] of keys.entries()) {
    const jwk = entry as JWK & { roles?: unknown };
    if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || jwk.d !== undefined)
      throw new Error(`key ${i} is not an Ed25519 public key`);
    const roles = Array.isArray(jwk.roles) ? jwk.roles : [];
    if (roles.length === 0 || !roles.every((r) => (busRoles as readonly unknown[]).includes(r)))
      throw new Error(`key ${i} must name its roles, of ${busRoles.join(', ')}`);
    const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x });
    if (jwk.kid !== undefined && jwk.kid !== kid) throw new Error(`key ${i}: its kid is not its thumbprint (${kid})`);
    let key: KeyObject;
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    } catch {
      throw new Error(`key ${i} is not an Ed25519 public key`);
    }
    out.set(kid, { kid, roles: roles as BusRole[], key });
  }
  return out;
}

/** A one-process trust: a fresh key that only this process holds and trusts, in the roles it runs. */
export async function ownTrust(roles: readonly BusRole[]): Promise<BusTrust> {
  const { identity } = await newBusKey();
  const trusted = await parseTrustedKeys(JSON.stringify({ keys: [trustedKeyEntry(identity, roles)] }));
  return { identity, trusted };
}

const encoder = new TextEncoder();

function digest(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('base64url');
}

type ContextClaims = {
  sub: string;
  rid: string;
  bdy: string;
  act?: string;
  spc?: string;
  ip?: string;
  via?: string;
  jti: string;
  iat: number;
  exp: number;
};

/**
 * Signs the context of an outgoing request: a compact JWS (RFC 7515) of EdDSA over the claims, made with
 * `node:crypto` directly and synchronously. Signing through jose's WebCrypto path cost four times the
 * signature itself on every request a gateway forwards. One call at a time a signature costs the same on
 * libuv's pool as here (37 µs of CPU, bench/bus_trust.bench.ts); under 32 connections the hand-overs to
 * the pool and back did not (bench/README.md, "Beside the peers").
 */
export class ContextSigner {
  readonly #identity: BusIdentity;
  /** The protected header, the same for every context of this process. */
  readonly #header: string;

  constructor(identity: BusIdentity) {
    this.#identity = identity;
    this.#header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: identity.kid, typ: contextType })).toString('base64url');
  }

  async sign(subject: string, data: Uint8Array, headers: BusHeaders): Promise<string> {
    const iat = Math.floor(Date.now() / 1000);
    const claims: Record<string, string | number> = {
      sub: subject,
      rid: headers[busHeaders.requestId] ?? '',
      bdy: digest(data),
      jti: randomUUID(),
      iat,
      exp: iat + contextLifetimeSeconds,
    };
    if (headers[busHeaders.actor]) claims.act = headers[busHeaders.actor];
    if (headers[busHeaders.space]) claims.spc = headers[busHeaders.space];
    if (headers[busHeaders.clientIp]) claims.ip = headers[busHeaders.clientIp];
    if (headers[busHeaders.context]) claims.via = headers[busHeaders.context];
    const input = `${this.#header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = cryptoSign(null, Buffer.from(input), this.#identity.privateKey);
    return `${input}.${signature.toString('base64url')}`;
  }
}

/** Why a context was refused (for the warn line; the caller only hears 401). */
export type Refusal = { reason: string };

/** Verifies the contexts of incoming requests. */
export class ContextVerifier {
  readonly #trusted: Map<string, TrustedBusKey>;
  /** Contexts already used, by id, until they expire: each one is good for one request. */
  readonly #used = new Map<string, number>();
  #nextSweep = 0;

  constructor(trusted: Map<string, TrustedBusKey>) {
    this.#trusted = trusted;
  }

  /**
   * The headers a handler may believe (actor, space and client address taken from the verified context,
   * and the context to pass on when the handler calls on the caller's behalf) and the roles of the key
   * that signed it. A refusal otherwise.
   */
  async verify(msg: BusMessage): Promise<{ headers: BusHeaders; roles: readonly BusRole[] } | Refusal> {
    const token = msg.headers[busHeaders.context];
    if (!token) return { reason: 'the request carries no signed context' };
    const checked = this.#check(token, msg.subject);
    if ('reason' in checked) return checked;
    const { claims, signer } = checked;
    if (claims.rid !== (msg.headers[busHeaders.requestId] ?? '')) return { reason: 'the context belongs to another request' };
    if (claims.bdy !== digest(msg.data)) return { reason: 'the body is not the one the context was signed for' };
    let root = token;
    if (claims.act === undefined) {
      // Sign-in, key and session look-ups: only what a gateway asks carries no caller.
      if (!signer.roles.includes('gateway')) return { reason: 'only a gateway asks without a caller' };
    } else if (!vouchesFor(signer, claims.act)) {
      // A request passed on by a service: only with the context of that request from a key that vouches for its caller.
      if (claims.via === undefined) return { reason: `a ${signer.roles.join('/')} key cannot vouch for this actor` };
      const origin = this.#check(claims.via, null);
      if ('reason' in origin) return { reason: `its origin: ${origin.reason}` };
      const same = origin.claims.act === claims.act && origin.claims.rid === claims.rid;
      // The origin's key must vouch for the caller by itself: a gateway for a user, the config service for
      // one of its scripts (whose request a protocol replica passes on to the one holding the device).
      if (!same || !vouchesFor(origin.signer, claims.act))
        return { reason: 'its origin is not a context of the same caller and request from a key that vouches for it' };
      if (origin.claims.spc !== claims.spc || origin.claims.ip !== claims.ip)
        return { reason: 'it names another space or client address than its origin' };
      root = claims.via;
    }
    if (!this.#firstUse(claims.jti, claims.exp)) return { reason: 'the context was used before' };
    const headers: BusHeaders = { ...msg.headers, [busHeaders.context]: root };
    delete headers[busHeaders.actor];
    delete headers[busHeaders.space];
    delete headers[busHeaders.clientIp];
    if (claims.act !== undefined) headers[busHeaders.actor] = claims.act;
    if (claims.spc !== undefined) headers[busHeaders.space] = claims.spc;
    if (claims.ip !== undefined) headers[busHeaders.clientIp] = claims.ip;
    return { headers, roles: signer.roles };
  }

  /** Records a context's id; false when it was seen before (a replay within its lifetime). */
  #firstUse(jti: string, exp: number): boolean {
    const now = Date.now();
    if (now >= this.#nextSweep) {
      for (const [id, until] of this.#used) if (until < now) this.#used.delete(id);
      this.#nextSweep = now + 5_000;
    }
    if (this.#used.has(jti)) return false;
    this.#used.set(jti, (exp + clockToleranceSeconds) * 1000);
    return true;
  }

  /**
   * Signature, type, times and (unless null) subject of one context. jose reads the JWS (header and
   * claims), `node:crypto` checks the Ed25519 signature synchronously, and the checks on the claims are
   * the ones jose's `jwtVerify` made with this service's options. One call at a time jose's WebCrypto path
   * costs what this does (95 µs of CPU); under 32 connections its job dispatch took a fifth of the
   * service's main thread, and the echo over NATS cost 0.81–0.85 ms of CPU instead of 0.98–1.18
   * (bench/README.md, "Beside the peers"). `test/bus_trust.test.ts` holds every refusal.
   */
  #check(token: string, subject: string | null): { claims: ContextClaims; signer: TrustedBusKey } | Refusal {
    if (token.length > maxContextLength) return { reason: 'the context is too long' };
    const parts = token.split('.');
    if (parts.length !== 3) return { reason: 'the context is not a JWS' };
    let header: ReturnType<typeof decodeProtectedHeader>;
    let payload: ReturnType<typeof decodeJwt>;
    try {
      header = decodeProtectedHeader(token);
      payload = decodeJwt(token);
    } catch {
      return { reason: 'the context is not a JWS' };
    }
    const signer = typeof header.kid === 'string' ? this.#trusted.get(header.kid) : undefined;
    if (!signer) return { reason: 'the context is signed by a key this service does not trust' };
    // The algorithm pinned, the type of a bus context only, and no header extension to honour.
    if (header.alg !== 'EdDSA') return { reason: 'the context is not valid (ERR_JOSE_ALG_NOT_ALLOWED)' };
    if (header.typ !== contextType) return { reason: 'the context is not valid (ERR_JWT_CLAIM_VALIDATION_FAILED)' };
    if (header.crit !== undefined || header.b64 !== undefined) return { reason: 'the context is not valid (ERR_JWS_INVALID)' };
    const [protectedPart, payloadPart, signaturePart] = parts as [string, string, string];
    const signature = Buffer.from(signaturePart, 'base64url');
    if (signature.length !== 64 || signature.toString('base64url') !== signaturePart)
      return { reason: 'the context is not valid (ERR_JWS_SIGNATURE_VERIFICATION_FAILED)' };
    if (!cryptoVerify(null, Buffer.from(`${protectedPart}.${payloadPart}`), signer.key, signature))
      return { reason: 'the context is not valid (ERR_JWS_SIGNATURE_VERIFICATION_FAILED)' };
    const claims = payload as unknown as ContextClaims;
    for (const name of ['sub', 'rid', 'bdy', 'jti'] as const)
      if (typeof claims[name] !== 'string') return { reason: `the context is not valid (its ${name} is missing or not text)` };
    for (const name of ['act', 'spc', 'ip', 'via'] as const)
      if (claims[name] !== undefined && typeof claims[name] !== 'string') return { reason: `the context's ${name} is not text` };
    if (!Number.isFinite(claims.iat) || !Number.isFinite(claims.exp)) return { reason: 'the context is not valid (its times are missing)' };
    const now = Math.floor(Date.now() / 1000);
    if (claims.exp <= now - clockToleranceSeconds) return { reason: 'the context has expired' };
    if (claims.iat > now + clockToleranceSeconds) return { reason: 'the context is not valid (issued in the future)' };
    if (now - claims.iat > contextLifetimeSeconds + 2 * clockToleranceSeconds) return { reason: 'the context has expired' };
    const nbf = (payload as { nbf?: unknown }).nbf;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + clockToleranceSeconds))
      return { reason: 'the context is not valid (nbf)' };
    if (claims.exp - claims.iat > contextLifetimeSeconds) return { reason: 'the context lives longer than a context may' };
    if (subject !== null && claims.sub !== subject) return { reason: 'the context was signed for another subject' };
    return { claims, signer };
  }
}

/**
 * The kinds of actor a service acts as on its own, besides itself (`service:<role>`): the config service
 * runs scripts, each acting as `script:<id>`.
 */
const ownActorKinds: Partial<Record<BusRole, string[]>> = { config: ['script'] };

function rolesWithin(actorJson: string, allowed: readonly string[]): boolean {
  const roles = (JSON.parse(actorJson) as { roles?: unknown }).roles;
  return roles === undefined || (Array.isArray(roles) && roles.every((r) => allowed.includes(r as string)));
}

/** Whether a key vouches for an actor by itself: a gateway for anyone, a service for itself and its own kinds of actor. */
function vouchesFor(signer: TrustedBusKey, actorJson: string): boolean {
  if (signer.roles.includes('gateway')) return true;
  let id: unknown;
  try {
    id = (JSON.parse(actorJson) as { id?: unknown }).id;
  } catch {
    return false;
  }
  if (typeof id !== 'string') return false;
  const colon = id.indexOf(':');
  if (colon <= 0 || colon === id.length - 1) return false;
  const kind = id.slice(0, colon);
  const rest = id.slice(colon + 1);
  // What a service says of itself or of its scripts never makes an administrator.
  if (!rolesWithin(actorJson, ['editor', 'viewer'])) return false;
  return signer.roles.some((role) => (kind === 'service' && rest === role) || (ownActorKinds[role] ?? []).includes(kind));
}

/**
 * A bus that signs every request it sends and verifies every request its services receive (see above).
 * It sits directly on the transport, under any subject prefix, so a context names the subject as it
 * travels. Publications and subscriptions pass through: who may publish an event is NATS's to say.
 */
export class SignedBus implements Bus {
  readonly kind: Bus['kind'];
  readonly maxPayload: number;
  readonly #inner: Bus;
  readonly #signer: ContextSigner;
  readonly #verifier: ContextVerifier;
  readonly #log: Logger;

  constructor(inner: Bus, trust: BusTrust, log: Logger) {
    this.#inner = inner;
    this.kind = inner.kind;
    this.maxPayload = inner.maxPayload;
    this.#signer = new ContextSigner(trust.identity);
    this.#verifier = new ContextVerifier(trust.trusted);
    this.#log = log;
  }

  async request(subject: string, data: Uint8Array, options?: RequestOptions): Promise<BusMessage> {
    const given = options?.headers ?? {};
    const headers: BusHeaders = { ...given, [busHeaders.requestId]: given[busHeaders.requestId] ?? randomUUID() };
    const context = await this.#signer.sign(subject, data, headers);
    delete headers[busHeaders.actor];
    delete headers[busHeaders.space];
    delete headers[busHeaders.clientIp];
    headers[busHeaders.context] = context;
    return this.#inner.request(subject, data, { ...options, headers });
  }

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    this.#inner.publish(subject, data, headers);
  }

  subscribe(subject: string, handler: EventHandler, options?: { queue?: string }): BusSubscription {
    return this.#inner.subscribe(subject, handler, options);
  }

  addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService> {
    return this.#inner.addService(
      spec,
      endpoints.map((e) => {
        const op = e.metadata?.operationId ? operations.find((o) => o.operationId === e.metadata?.operationId) : undefined;
        return { ...e, handler: (m: BusMessage) => this.#verified(m, e, op) };
      }),
    );
  }

  async #verified(msg: BusMessage, endpoint: EndpointSpec, op: Operation | undefined): Promise<BusReply> {
    // A message the endpoint did not get from its own subject (a JetStream delivery, say) is no request.
    const verdict: { headers: BusHeaders; roles: readonly BusRole[] } | Refusal =
      msg.subject !== endpoint.subject
        ? { reason: `it came on ${msg.subject}, not the endpoint's subject` }
        : await this.#verifier.verify(msg);
    const refusal =
      'reason' in verdict
        ? verdict.reason
        : op && !verdict.roles.some((role) => mayCall(role, op))
          ? `a ${verdict.roles.join('/')} key may not ask for ${op.operationId}`
          : null;
    if (refusal === null && 'headers' in verdict) return endpoint.handler({ ...msg, headers: verdict.headers });
    this.#log.warn({ subject: msg.subject, reqId: msg.headers[busHeaders.requestId], reason: refusal }, 'bus request refused');
    const body = problemBody('unauthenticated', 'The request carries no valid signed context');
    return { data: encoder.encode(JSON.stringify(body)), error: { code: 401, description: 'unauthenticated' } };
  }

  flush(): Promise<void> {
    return this.#inner.flush();
  }

  isConnected(): boolean {
    return this.#inner.isConnected();
  }

  openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog> {
    return this.#inner.openEventLog(options);
  }

  consumeEvents(options: DurableEventsOptions): Promise<DurableEvents> {
    return this.#inner.consumeEvents(options);
  }

  siteStreams(prefix?: string): SiteStreams {
    return this.#inner.siteStreams(prefix);
  }

  spaceVersions(prefix?: string): SpaceVersions {
    return this.#inner.spaceVersions(prefix);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
