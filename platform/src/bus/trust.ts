import * as nodeCrypto from 'node:crypto';
import { createHash, createHmac, createSecretKey, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import { busHeaders } from '@scada/contracts';
import { pairKey, tagIdBytes, type BusRole, type BusTrust, type TrustedBusKey } from './bus_keys.ts';
import type { BusHeaders, BusMessage } from './bus.ts';

export {
  busRoles,
  busTrustFrom,
  identityFromPem,
  newBusKey,
  ownTrust,
  parseTrustedKeys,
  trustedKeyEntry,
  type BusIdentity,
  type BusRole,
  type BusTrust,
  type TrustedBusKey,
  type TrustedKeySet,
} from './bus_keys.ts';

/**
 * Trust between the processes of a platform on NATS. A service acts on nobody's word for who asks: every
 * request carries a short-lived context made by the process that sent it and bound to the subject, the
 * request id and the body, authenticated with one HMAC-SHA-256 tag per key the sender trusts in a service's role, each under
 * the secret the sender shares with that key's holder (`bus_keys.ts`). The receiving service checks the
 * tag made for its own key, which only the named sender could have made, and takes the actor, space and
 * client address from the context alone (the request id and the time left travel in it too: a request on
 * NATS carries the context as its one header). Each key names the roles its holder plays (`gateway`, `auth`,
 * `config`, `protocol`, `history`):
 *
 * - a gateway's key vouches for any caller (it authenticated the user);
 * - a service's key vouches for the service itself (actor `service:<name>`), for the actors it runs
 *   (the config service's scripts, `script:<id>`), and for no user: a call a
 *   service makes on a user's behalf carries the gateway's own context of that request (`via`), so a
 *   service can act for a user only while that user's request through a gateway is under way; likewise a
 *   script's request passed on (to the protocol replica holding the device) carries the config service's
 *   context of it. The origin carries a tag for every key, so whoever it is passed on to checks it too;
 * - a context without an actor (sign-in, key fetches) may come from a gateway only;
 * - a context saying its message was checked against the operation's request schema (`chk`, the schema's
 *   fingerprint: the service then does not check it again, `rpc.ts`) may come from a gateway only, which
 *   checked it at its edge; any other key's is refused, and a bare header saying so is dropped.
 *
 * A context is good for {@link contextLifetimeSeconds}, for one request (each process remembers the ids
 * it took until they expire; a copy sent to another replica within its lifetime is left to the NATS
 * permissions, which let only the service read its subjects), and only for the subject it names: a copy
 * sent to another subject or again, a body changed on the way, an unknown sender, a tag that does not
 * check, a missing or expired context are refused with 401 and a warn line. The in-process bus carries no contexts: what runs in one process trusts itself.
 *
 * Until 2026-11-29 contexts were Ed25519 signatures (a JWS): one signature made and one checked cost
 * 0.13 ms of CPU a request, a third of an echo over NATS; the tags cost microseconds (bench/README.md).
 */

/**
 * The headers a verified request's handler gets from its context alone: what a sender put beside it is dropped
 * (the time left too: a context without one is a caller without a deadline, which nothing on the way may set).
 */
const fromContext = new Set<string>([
  busHeaders.actor,
  busHeaders.space,
  busHeaders.clientIp,
  busHeaders.checked,
  busHeaders.context,
  busHeaders.timeout,
]);

/** How long a context is good for, from its making. */
export const contextLifetimeSeconds = 30;
/** Clock difference between hosts that a context's times may show. */
const clockToleranceSeconds = 5;
/** Longer header values are refused before any parsing. */
const maxContextLength = 16 * 1024;
/** Bytes of each tag (HMAC-SHA-256 truncated to 128 bits, RFC 2104 section 5). */
const tagBytes = 16;
/** A tag entry: the receiving key's short id, then its tag. */
const entryBytes = tagIdBytes + tagBytes;
/** What each tag's input starts with: no other MAC made with these secrets can pass for a context's. */
const tagDomain = 'scada-bus-context.v1.';

/**
 * Node's one-shot hash (20.12 and later): no `Hash` object a call, half the CPU of `createHash` for a
 * body; `createHash` where the runtime has none. The same digest either way.
 */
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'base64url') => string }).hash;

function digest(data: Uint8Array): string {
  return oneShotHash ? oneShotHash('sha256', data, 'base64url') : createHash('sha256').update(data).digest('base64url');
}

function tagOf(secret: KeyObject, payload: string): Buffer {
  return createHmac('sha256', secret).update(tagDomain).update(payload).digest().subarray(0, tagBytes);
}

type ContextClaims = {
  iss: string;
  sub: string;
  rid: string;
  bdy: string;
  act?: string;
  spc?: string;
  ip?: string;
  via?: string;
  /** The request schema's fingerprint, when the gateway that made the context checked the message against it. */
  chk?: string;
  /** The time left for the request when it was sent, in milliseconds (what `x-timeout-ms` says elsewhere). */
  tmo?: string;
  jti: string;
  iat: number;
  exp: number;
};

/** The claims of a context a test makes by hand, each of which may be wrong or missing. */
export type ContextClaimsByHand = Partial<Record<keyof ContextClaims | 'nbf', unknown>>;

/** A trusted key with the secret this process shares with its holder. */
type Peer = TrustedBusKey & { secret: KeyObject; id: Buffer };

function peersOf(trust: BusTrust): Peer[] {
  return [...trust.trusted.values()].map((k) => ({
    ...k,
    secret: createSecretKey(pairKey(trust.identity, k)),
    id: Buffer.from(k.tagId, 'base64url'),
  }));
}

/** Whether the holder of a key may serve requests on the bus, and so check a context's tag for it. */
function mayReceive(key: TrustedBusKey): boolean {
  return key.roles.some((role) => role !== 'gateway');
}

/**
 * Makes a context from its claims: `<claims>.<tags>`, the claims as base64url JSON, the tags as base64url
 * of one entry per trusted key that may receive it (its 8-byte short id, then the 16-byte HMAC of the claims under the secret
 * shared with it). `makeContext` in `@scada/platform/testing` makes one from any claims.
 */
export class ContextSigner {
  readonly #iss: string;
  readonly #peers: Peer[];

  constructor(trust: BusTrust) {
    const own = [...trust.trusted.values()].find((k) => k.kid === trust.identity.kid);
    this.#iss = own?.tagId ?? Buffer.from(trust.identity.kid, 'base64url').subarray(0, tagIdBytes).toString('base64url');
    // A tag for each key whose holder may receive a context: every key that plays a service's role. A key
    // trusted as a gateway alone is held by processes that run a gateway and no service (the launcher
    // refuses a process whose key is not trusted in every role it runs), and a gateway answers no request
    // on the bus: a tag for it would never be checked. One HMAC a request less for a gateway.
    this.#peers = peersOf(trust).filter(mayReceive);
  }

  /** A context of arbitrary claims (tests make wrong ones with it); `iss` defaults to this process's key. */
  seal(claims: ContextClaimsByHand): string {
    const payload = Buffer.from(JSON.stringify({ iss: this.#iss, ...claims })).toString('base64url');
    const tags = Buffer.allocUnsafe(this.#peers.length * entryBytes);
    this.#peers.forEach((peer, i) => {
      peer.id.copy(tags, i * entryBytes);
      tagOf(peer.secret, payload).copy(tags, i * entryBytes + tagIdBytes);
    });
    return `${payload}.${tags.toString('base64url')}`;
  }

  /** The context of an outgoing request. */
  sign(subject: string, data: Uint8Array, headers: BusHeaders): string {
    const iat = Math.floor(Date.now() / 1000);
    const claims: ContextClaimsByHand = {
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
    if (headers[busHeaders.checked]) claims.chk = headers[busHeaders.checked];
    if (headers[busHeaders.timeout]) claims.tmo = headers[busHeaders.timeout];
    return this.seal(claims);
  }
}

/** Why a context was refused (for the warn line; the caller only hears 401). */
export type Refusal = { reason: string };

/** Verifies the contexts of incoming requests. */
export class ContextVerifier {
  /** Trusted keys by the short id contexts name them by, with the secret shared with each. */
  readonly #senders: Map<string, Peer>;
  /** This process's own short id: the tag entry made for it. */
  readonly #ownId: Buffer;
  /** Contexts already used, by id, until they expire: each one is good for one request. */
  readonly #used = new Map<string, number>();
  #nextSweep = 0;

  constructor(trust: BusTrust) {
    const peers = peersOf(trust);
    this.#senders = new Map(peers.map((p) => [p.tagId, p]));
    this.#ownId = Buffer.from(trust.identity.kid, 'base64url').subarray(0, tagIdBytes);
  }

  /**
   * The headers a handler may believe (actor, space and client address taken from the verified context,
   * and the context to pass on when the handler calls on the caller's behalf) and the roles of the key
   * that made it. A refusal otherwise.
   */
  verify(msg: BusMessage): { headers: BusHeaders; roles: readonly BusRole[] } | Refusal {
    const token = msg.headers[busHeaders.context];
    if (!token) return { reason: 'the request carries no signed context' };
    const checked = this.#check(token, msg.subject);
    if ('reason' in checked) return checked;
    const { claims, signer } = checked;
    // The request id travels in the context (`SignedBus` sends no header of its own for it); one sent beside
    // it must be the same.
    const rid = msg.headers[busHeaders.requestId];
    if (rid !== undefined && claims.rid !== rid) return { reason: 'the context belongs to another request' };
    if (claims.bdy !== digest(msg.data)) return { reason: 'the body is not the one the context was signed for' };
    // That the message was checked at the edge is a gateway's word: no service may spare another the check.
    if (claims.chk !== undefined && !signer.roles.includes('gateway')) return { reason: 'only a gateway attests a checked message' };
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
    // Built anew rather than copied and `delete`d from, which would leave it in V8's slow dictionary mode.
    const headers: BusHeaders = {};
    for (const name in msg.headers) if (!fromContext.has(name)) headers[name] = msg.headers[name] as string;
    headers[busHeaders.context] = root;
    if (claims.rid !== '') headers[busHeaders.requestId] = claims.rid;
    if (claims.tmo !== undefined) headers[busHeaders.timeout] = claims.tmo;
    if (claims.act !== undefined) headers[busHeaders.actor] = claims.act;
    if (claims.chk !== undefined) headers[busHeaders.checked] = claims.chk;
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

  /** Tag, claims, times and (unless null) subject of one context. `test/bus_trust.test.ts` holds every refusal. */
  #check(token: string, subject: string | null): { claims: ContextClaims; signer: Peer } | Refusal {
    if (token.length > maxContextLength) return { reason: 'the context is too long' };
    const parts = token.split('.');
    if (parts.length !== 2) return { reason: 'the context is not a bus context' };
    const [payloadPart, tagsPart] = parts as [string, string];
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(payloadPart, 'base64url').toString());
    } catch {
      return { reason: 'the context is not a bus context' };
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { reason: 'the context is not a bus context' };
    const claims = payload as ContextClaims;
    const signer = typeof claims.iss === 'string' ? this.#senders.get(claims.iss) : undefined;
    if (!signer) return { reason: 'the context is signed by a key this service does not trust' };
    const tags = Buffer.from(tagsPart, 'base64url');
    if (tags.length === 0 || tags.length % entryBytes !== 0 || tags.toString('base64url') !== tagsPart)
      return { reason: 'the context is not valid (its tags are malformed)' };
    let tag: Buffer | undefined;
    for (let at = 0; at < tags.length && !tag; at += entryBytes)
      if (tags.compare(this.#ownId, 0, tagIdBytes, at, at + tagIdBytes) === 0) tag = tags.subarray(at + tagIdBytes, at + entryBytes);
    if (!tag) return { reason: "the context carries no tag for this service's key" };
    if (!timingSafeEqual(tag, tagOf(signer.secret, payloadPart))) return { reason: 'the context is not valid (its tag does not check)' };
    for (const name of ['sub', 'rid', 'bdy', 'jti'] as const)
      if (typeof claims[name] !== 'string') return { reason: `the context is not valid (its ${name} is missing or not text)` };
    for (const name of ['act', 'spc', 'ip', 'via', 'chk', 'tmo'] as const)
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
