import { createHash, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { constants as zlibConstants, gunzip, gzip } from 'node:zlib';
import {
  busEnvelopeBytes,
  busHeaders,
  decodeEvent,
  encodeEvent,
  encodeOwnEvent,
  kindOf,
  isProblemBody,
  problemBody,
  problemFromBody,
  ProblemError,
  StagedReference,
  stagingOperations,
  validate,
  type Actor,
  type EventBody,
  type EventDefinition,
  type EventMessage,
  type Operation,
  type RequestOf,
  type ResponseOf,
} from '@scada/contracts';
import type { Logger } from 'pino';
import {
  BusError,
  serviceErrorCodeHeader,
  type Bus,
  type BusHeaders,
  type BusMessage,
  type BusReply,
  type BusService,
  type BusSubscription,
} from './bus/bus.ts';
import { eventIdHeader } from './bus/event_log.ts';
import type { SpaceVersions } from './bus/space_versions.ts';
import { checkedJsonInPieces } from './json_pieces.ts';
import { checkWhole, partsOf, type Staging } from './staging.ts';
import { StoreOverloadedError, StoreUnavailableError } from './store/store.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
// Compressed and expanded on the thread pool: a reply of megabytes is no task of the event loop's.
const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

/** What a handler knows about the request besides its message. */
export type HandlerContext = {
  requestId: string;
  space: string | null;
  actor: Actor | null;
  clientIp: string | null;
  subject: string;
  /** The signed context the request came with (NATS), passed on by calls made on the caller's behalf. */
  origin: string | null;
  /**
   * When the caller stops waiting, in this process's `Date.now()` time: counted from the receipt of the
   * request by the time it carried (`x-timeout-ms`); `Infinity` when it carried none.
   */
  deadline: number;
  /** Child logger carrying request id, space and subject. */
  log: Logger;
};

/** Milliseconds left before the caller of a request stops waiting (never below 0). */
export function remainingMs(ctx: Pick<HandlerContext, 'deadline'>): number {
  return Math.max(0, ctx.deadline - Date.now());
}

/** Throws the caller's timeout when the request's deadline has passed: work nobody waits for is skipped. */
export function checkDeadline(ctx: Pick<HandlerContext, 'deadline'>, what = 'The request'): void {
  if (Date.now() >= ctx.deadline) throw new ProblemError('upstream_timeout', `${what} was not started: its deadline had passed`);
}

/**
 * The context of a call made on behalf of a request being handled: same request id, space, caller and
 * address, and what is left of its deadline.
 */
export function onBehalfOf(ctx: HandlerContext, overrides: Partial<CallContext> = {}): CallContext {
  return {
    requestId: ctx.requestId,
    space: ctx.space,
    actor: ctx.actor,
    clientIp: ctx.clientIp,
    origin: ctx.origin,
    timeoutMs: Number.isFinite(ctx.deadline) ? Math.max(1, ctx.deadline - Date.now()) : undefined,
    ...overrides,
  };
}

/** An operation bound to the function that serves it. */
export type Implementation = {
  op: Operation;
  handle: (request: unknown, ctx: HandlerContext) => Promise<unknown>;
};

/** Binds a handler to its operation, with the types the operation's schemas give. */
export function implement<O extends Operation>(
  op: O,
  handle: (request: RequestOf<O>, ctx: HandlerContext) => Promise<ResponseOf<O>>,
): Implementation {
  return { op, handle: handle as Implementation['handle'] };
}

/** Context of an outgoing call. */
export type CallContext = {
  requestId: string;
  space?: string | null;
  actor?: Actor | null;
  clientIp?: string | null;
  /** The signed context of the request this call serves (`onBehalfOf`): the bus signs the call with it as its origin. */
  origin?: string | null;
  /** How long to wait for the answer; sent along, so the service knows its deadline. */
  timeoutMs?: number;
  /**
   * The message was checked against the operation's request schema by a gateway at its edge: the service
   * takes it without checking it again (`busHeaders.checked`). Only what a gateway's key attests counts.
   */
  checked?: boolean;
};

const fingerprints = new WeakMap<Operation, string>();

/**
 * What a gateway attests of a message it checked: the operation and its request schema, hashed. A
 * service whose schema of the operation differs (another version of the platform) checks the message
 * itself.
 */
export function requestFingerprint(op: Operation): string {
  let fingerprint = fingerprints.get(op);
  if (fingerprint === undefined) {
    const text = `${op.operationId}\n${JSON.stringify(op.request)}`;
    fingerprint = createHash('sha256').update(text).digest('base64url').slice(0, 22);
    fingerprints.set(op, fingerprint);
  }
  return fingerprint;
}

/** Seconds a client should wait before retrying when a service has no live replica. */
export const retryAfterSeconds = 5;

/**
 * Serves operations on the bus as one micro-service: each request is decoded and validated against the
 * operation's request schema, handled, and its reply validated against the response schema. Problems
 * travel back as service errors with a problem body; anything unexpected is logged once and answered as a
 * bare 500. With `staging` (a service that `stagingOperations` lists), requests and replies larger than one
 * bus message travel staged in parts (`@scada/contracts`' `staging.ts`), and its staging operations are served.
 */
export async function serve(
  bus: Bus,
  service: { name: string; version: string; description?: string; instance: string },
  implementations: Implementation[],
  log: Logger,
  staging?: Staging,
): Promise<BusService> {
  const large = staging ? { staging, maxReplyBytes: bus.maxPayload - busEnvelopeBytes } : undefined;
  const all = [...implementations, ...(staging ? stagingImplementations(service.name, staging) : [])];
  return bus.addService(
    { name: service.name, version: service.version, description: service.description, metadata: { instance: service.instance } },
    all.map((impl) => {
      const versions = changesSpace(impl.op) ? bus.spaceVersions() : undefined;
      return {
        name: impl.op.operationId,
        subject: impl.op.subject,
        metadata: { operationId: impl.op.operationId },
        handler: (msg) => handleOne(impl, msg, log, versions, large),
      };
    }),
  );
}

/** What a service that stages large messages serves for its callers: parts of requests in, parts of replies out. */
function stagingImplementations(service: string, staging: Staging): Implementation[] {
  const ops = stagingOperations[service as keyof typeof stagingOperations];
  if (!ops) throw new Error(`the ${service} service has no staging operations in the contract`);
  return [
    implement(ops.stage, async ({ body }, ctx) => {
      const { id, index, data } = body as { id: string; index: number; data: string };
      await staging.put(ctx.space ?? '', id, index, Buffer.from(data, 'base64'));
      return null;
    }),
    implement(ops.read, async ({ body }, ctx) => {
      const { id, index, parts } = body as { id: string; index: number; parts: number };
      const data = await staging.read(ctx.space ?? '', id, index, parts);
      if (data === null) throw new ProblemError('not_found', 'The staged reply is gone (read already, or kept too long)');
      return { data: data.toString('base64') };
    }),
  ];
}

/** A service's staging and the largest reply that still travels as one bus message. */
type LargeMessages = { staging: Staging; maxReplyBytes: number };

/**
 * Whether serving the operation may change what a read of its space answers: every operation with an
 * HTTP binding that is not a GET, unless the binding says it keeps the configuration (device and session
 * operations). Operations without one are the platform's own (pings, sign-in checks, upload chunks staged
 * for a later create, snapshots), and change no configuration.
 */
export function changesSpace(op: Operation): boolean {
  return op.http !== undefined && op.http.method !== 'GET' && op.http.keepsConfiguration !== true;
}

async function handleOne(
  impl: Implementation,
  msg: BusMessage,
  baseLog: Logger,
  versions?: SpaceVersions,
  large?: LargeMessages,
): Promise<BusReply> {
  const ctx = contextOf(msg, baseLog);
  const started = performance.now();
  try {
    checkDeadline(ctx);
    // A message a gateway checked against this very schema is not checked again (one check a hop); a staged
    // request is the whole message the gateway checked, taken back from its parts.
    // The staged flag is not among the signed claims, so a staged request is always checked, and the gateway
    // attests none: a flag taken off on the way leaves the reference unattested, and it is checked as the body.
    const staged = msg.headers[busHeaders.staged] === '1';
    const data = await requestData(msg, ctx, large);
    const request = decodeRequest(impl.op, data, !staged && msg.headers[busHeaders.checked] === requestFingerprint(impl.op));
    const result = await impl.handle(request, ctx);
    const reply = await stagedIfLarge(await encodeResult(impl.op, result), ctx, large);
    // Routine traffic: the gateway's access line already says the request was answered.
    // Asked of the process's logger: asking the request's would build it, for every request.
    if (baseLog.isLevelEnabled('debug')) ctx.log.debug({ ms: round(performance.now() - started) }, 'request served');
    return reply;
  } catch (err) {
    const problem = toProblem(err);
    if (problem.code === 'upstream_timeout')
      ctx.log.warn({ code: problem.code, detail: problem.detail, ms: round(performance.now() - started) }, 'request dropped');
    // A device's refusal is the device's answer, not the platform's failure: one line, its reason, no stack.
    else if (problem.code === 'device_refused')
      ctx.log.warn(
        { code: problem.code, detail: problem.detail, ...problem.extensions, ms: round(performance.now() - started) },
        'device refused',
      );
    // A failure another service answered this one with was logged by that service: a trace here.
    else if (problem.relayed && problem.status >= 500)
      ctx.log.debug({ code: problem.code, ms: round(performance.now() - started) }, 'a service this request called failed');
    else if (problem.status >= 500 && problem.code !== 'overloaded')
      ctx.log.error({ err, ms: round(performance.now() - started) }, 'request failed');
    else ctx.log.info({ code: problem.code, status: problem.status, ms: round(performance.now() - started) }, 'request refused');
    return {
      data: encoder.encode(JSON.stringify(problem.toBody())),
      error: { code: problem.status, description: problem.code },
      headers: problem.retryAfter !== undefined ? { 'retry-after': String(problem.retryAfter) } : undefined,
    };
  } finally {
    // Before the answer leaves: whoever hears of the write can no longer read what it changed from a cache.
    // A refused write bumps too (one that failed late may have changed something; it costs a cache miss).
    if (versions && ctx.space !== null) await bumpVersion(versions, ctx);
  }
}

async function bumpVersion(versions: SpaceVersions, ctx: HandlerContext): Promise<void> {
  try {
    await versions.bump(ctx.space as string);
  } catch (err) {
    // The write stands; caches elsewhere still drop what they hold within their age bound.
    ctx.log.warn({ err }, 'recording the change of the space failed');
  }
}

function contextOf(msg: BusMessage, baseLog: Logger): HandlerContext {
  const requestId = msg.headers[busHeaders.requestId] || randomUUID();
  const space = msg.headers[busHeaders.space] || null;
  let actor: Actor | null = null;
  const rawActor = msg.headers[busHeaders.actor];
  if (rawActor) {
    try {
      actor = JSON.parse(rawActor) as Actor;
    } catch {
      actor = null;
    }
  }
  const budget = Number(msg.headers[busHeaders.timeout]);
  let log: Logger | undefined;
  return {
    requestId,
    space,
    actor,
    clientIp: msg.headers[busHeaders.clientIp] || null,
    subject: msg.subject,
    origin: msg.headers[busHeaders.context] || null,
    deadline: msg.headers[busHeaders.timeout] && Number.isFinite(budget) ? Date.now() + budget : Infinity,
    // Built on first use: most requests log nothing, and a child logger per request was a measurable cost.
    get log() {
      return (log ??= baseLog.child({ reqId: requestId, space, subject: msg.subject }));
    },
  };
}

/** The request's message: the one received, or the staged one its reference names (taken whole, then dropped). */
async function requestData(msg: BusMessage, ctx: HandlerContext, large?: LargeMessages): Promise<Uint8Array> {
  if (msg.headers[busHeaders.staged] !== '1') return msg.data;
  if (!large) throw new ProblemError('payload_too_large', 'This service takes no request larger than one bus message');
  let ref: unknown;
  try {
    ref = JSON.parse(decoder.decode(msg.data));
  } catch {
    throw new ProblemError('malformed_body', 'The staged reference is not JSON');
  }
  const checked = validate(StagedReference, ref);
  if (!checked.ok)
    throw new ProblemError('validation_failed', 'The staged reference does not match its schema', { errors: checked.errors });
  return large.staging.take(ctx.space ?? '', checked.value as StagedReference);
}

/** A reply too large for one bus message, staged: its reference travels in its place, with its headers. */
async function stagedIfLarge(reply: BusReply, ctx: HandlerContext, large?: LargeMessages): Promise<BusReply> {
  if (!large || reply.data.byteLength <= large.maxReplyBytes) return reply;
  // Parts nobody would read are not written: they would only wait in the store for the sweep.
  checkDeadline(ctx, 'The reply');
  const ref = await large.staging.stage(ctx.space ?? '', reply.data);
  return { data: encoder.encode(JSON.stringify(ref)), headers: { ...reply.headers, [busHeaders.staged]: '1' } };
}

function decodeRequest(op: Operation, data: Uint8Array, checked: boolean): unknown {
  let request: unknown;
  try {
    request = data.byteLength === 0 ? { params: {}, query: {} } : JSON.parse(decoder.decode(data));
  } catch {
    throw new ProblemError('malformed_body', 'The request message is not JSON');
  }
  if (checked) return request;
  const result = validate(op.request, request);
  if (!result.ok) throw new ProblemError('validation_failed', 'The request does not match the schema', { errors: result.errors });
  return result.value;
}

/**
 * Replies larger than this travel compressed. JSON of lists and models compresses ten to twenty times (a
 * trend of 10,000 points, 11.5 times at the fastest level the replies are made with), so
 * an answer of several megabytes still fits one bus message (NATS carries 1 MiB by default).
 */
export const compressRepliesOver = 128 * 1024;

/** Compressed answers never expand past this when read back (a guard, not a limit anyone should meet). */
const maxExpandedReply = 256 * 1024 * 1024;

/**
 * A handler's result as its reply: checked against the response schema, as JSON, compressed past
 * {@link compressRepliesOver}. A result with an array of more than a thousand items is checked and written
 * a piece at a time, the event loop free between pieces (`json_pieces.ts`); the compression runs on the
 * thread pool.
 */
async function encodeResult(op: Operation, body: unknown): Promise<BusReply> {
  const pieces = body === undefined || body === null || op.replyOctets ? undefined : await checkedJsonInPieces(op.response, body);
  if (pieces === undefined || pieces === false) {
    const checked = validate(op.response, body ?? null);
    if (!checked.ok) {
      throw new Error(`reply of ${op.operationId} does not match its schema: ${JSON.stringify(checked.errors)}`);
    }
  }
  if (body === undefined || body === null) return { data: new Uint8Array() };
  if (op.replyOctets) return octetsReply(body as { data: Uint8Array });
  const data = encoder.encode(typeof pieces === 'string' ? pieces : JSON.stringify(body));
  if (data.byteLength <= compressRepliesOver) return { data };
  // The fastest level: a 2.3 MB trend compresses 11.5 times instead of 12.3, in a third of the CPU.
  return { data: await gzipped(data, { level: zlibConstants.Z_BEST_SPEED }), headers: { [busHeaders.contentEncoding]: 'gzip' } };
}

/** The reply of an operation with `replyOctets`: its octets as the body, its other fields in a header. */
function octetsReply(body: { data: Uint8Array }): BusReply {
  const { data, ...fields } = body;
  return { data, headers: { [busHeaders.replyFields]: JSON.stringify(fields) } };
}

/** A reply of octets as its operation's response: the fields of its header with the body as `data`. */
function octetsOf(op: Operation, reply: BusMessage): unknown {
  try {
    return { ...(JSON.parse(reply.headers[busHeaders.replyFields] ?? '') as object), data: reply.data };
  } catch (err) {
    throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} without the fields of its octets`, { cause: err });
  }
}

/** A reply's body as sent: expanded when it travelled compressed (then in memory of its own). */
async function replyBody(op: Operation, reply: BusMessage): Promise<Uint8Array> {
  if (reply.data.byteLength === 0 || reply.headers[busHeaders.contentEncoding] !== 'gzip') return reply.data;
  try {
    return await gunzipped(reply.data, { maxOutputLength: maxExpandedReply });
  } catch (err) {
    throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} with a compressed body that does not expand`, {
      cause: err,
    });
  }
}

/** A reply's body as text. */
async function replyText(op: Operation, reply: BusMessage): Promise<string> {
  return decoder.decode(await replyBody(op, reply));
}

/** Turns any failure into a problem; unknown errors become a bare internal error. */
export function toProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  // The store's queue is full: refused at once, so the caller may come back soon.
  if (err instanceof StoreOverloadedError) {
    return new ProblemError('overloaded', 'The store has too much work waiting: try again shortly', { retryAfter: 1, cause: err });
  }
  if (err instanceof StoreUnavailableError) {
    return new ProblemError('service_unavailable', 'The store is not reachable', { retryAfter: retryAfterSeconds, cause: err });
  }
  return new ProblemError('internal_error', undefined, { cause: err });
}

/**
 * Calls an operation over the bus and returns its reply, validated against the response schema.
 * Transport failures become problems: no replica → 503 with Retry-After, timeout → 504; a service's
 * problem reply is rethrown as the same problem.
 */
export async function call<O extends Operation>(bus: Bus, op: O, request: RequestOf<O>, ctx: CallContext): Promise<ResponseOf<O>> {
  const reply = await exchange(bus, op, request, ctx);
  let body: unknown = null;
  if (op.replyOctets) body = octetsOf(op, reply);
  else {
    const text = await replyText(op, reply);
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch (err) {
      throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} with a body that is not JSON`, { cause: err });
    }
  }
  const checked = validate(op.response, body);
  if (!checked.ok) throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} outside its schema`);
  return checked.value as ResponseOf<O>;
}

/**
 * Calls an operation over the bus and answers its reply as the bytes of the JSON the service sent
 * (expanded when it travelled compressed; empty for no body), for a caller that only passes it on: the
 * gateway answering a client. The serving side checked the reply against the response schema before
 * sending it (`serve`), so it is not parsed and checked a second time here, nor decoded into a string
 * only to be encoded again on its way out. The bytes are the caller's own (copied out of the bus's
 * buffer, which a kept answer must not hold on to). Failures as `call`.
 */
export async function relay<O extends Operation>(bus: Bus, op: O, request: RequestOf<O>, ctx: CallContext): Promise<Buffer> {
  return await replyBytes(op, await exchange(bus, op, request, ctx));
}

/**
 * A reply's body as sent, as bytes of its own: expanded when it travelled compressed. Its own memory, of
 * its own length: `Buffer.from` would cut a short body out of Node's shared 8 KiB pool, and a body the
 * read cache keeps would then hold the whole block alive while the cache counts only the body.
 */
async function replyBytes(op: Operation, reply: BusMessage): Promise<Buffer> {
  const body = await replyBody(op, reply);
  const own = body === reply.data ? new Uint8Array(body) : body;
  return Buffer.from(own.buffer, own.byteOffset, own.byteLength);
}

/** Sends a request and answers its reply; transport failures and a service's problem reply thrown as problems. */
async function exchange<O extends Operation>(bus: Bus, op: O, request: RequestOf<O>, ctx: CallContext): Promise<BusMessage> {
  const headers: BusHeaders = { [busHeaders.requestId]: ctx.requestId };
  if (ctx.space) headers[busHeaders.space] = ctx.space;
  if (ctx.actor) headers[busHeaders.actor] = JSON.stringify(ctx.actor);
  if (ctx.clientIp) headers[busHeaders.clientIp] = ctx.clientIp;
  if (ctx.origin) headers[busHeaders.context] = ctx.origin;
  if (ctx.timeoutMs !== undefined) headers[busHeaders.timeout] = String(Math.max(0, Math.round(ctx.timeoutMs)));
  let data = encoder.encode(JSON.stringify(request));
  const staging = stagingOperations[op.service];
  const staged = staging !== undefined && data.byteLength > bus.maxPayload - busEnvelopeBytes;
  if (ctx.checked && !staged) headers[busHeaders.checked] = requestFingerprint(op);
  // One deadline for the whole exchange: each part, the request and each part of the reply get what is left.
  const deadline = ctx.timeoutMs === undefined ? undefined : Date.now() + ctx.timeoutMs;
  const left = (): number | undefined => {
    if (deadline === undefined) return undefined;
    const ms = deadline - Date.now();
    if (ms <= 0) throw new ProblemError('upstream_timeout', `${op.service} did not answer ${op.operationId} in time`);
    return ms;
  };
  if (staged) {
    data = encoder.encode(JSON.stringify(await stageRequest(bus, staging.stage, data, ctx, left)));
    headers[busHeaders.staged] = '1';
  }
  let reply: BusMessage;
  try {
    const timeoutMs = left();
    if (timeoutMs !== undefined) headers[busHeaders.timeout] = String(Math.round(timeoutMs));
    reply = await bus.request(op.subject, data, { headers, timeoutMs });
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    throw transportProblem(op, err);
  }
  if (staging && reply.headers[busHeaders.staged] === '1') reply = await readStagedReply(bus, op, staging.read, reply, ctx, left);
  const errorCode = reply.headers[serviceErrorCodeHeader];
  if (errorCode) throw replyProblem(op, await replyText(op, reply), Number(errorCode));
  return reply;
}

/** Sends a request's message in parts to the service's staging; answers the reference to send in its place. */
async function stageRequest(
  bus: Bus,
  stage: Operation,
  message: Uint8Array,
  ctx: CallContext,
  left: () => number | undefined,
): Promise<StagedReference> {
  const { ref, parts } = partsOf(message);
  for (const [index, part] of parts.entries()) {
    const body = { id: ref.id, index, data: Buffer.from(part).toString('base64') };
    await call(bus, stage, { params: {}, query: {}, body } as never, { ...ctx, checked: false, timeoutMs: left() });
  }
  return ref;
}

/** A staged reply read back part by part and put together, with the headers it came with. */
async function readStagedReply(
  bus: Bus,
  op: Operation,
  read: Operation,
  reply: BusMessage,
  ctx: CallContext,
  left: () => number | undefined,
): Promise<BusMessage> {
  let ref: StagedReference;
  try {
    const checked = validate(StagedReference, JSON.parse(decoder.decode(reply.data)));
    if (!checked.ok) throw new Error('not a staged reference');
    ref = checked.value as StagedReference;
  } catch (err) {
    throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} with a staged reply whose reference is broken`, {
      cause: err,
    });
  }
  const parts: Buffer[] = [];
  for (let index = 0; index < ref.parts; index++) {
    const body = { id: ref.id, index, parts: ref.parts };
    let part: { data: string };
    try {
      part = (await call(bus, read, { params: {}, query: {}, body } as never, { ...ctx, checked: false, timeoutMs: left() })) as {
        data: string;
      };
    } catch (err) {
      // A part gone (read already, swept) is the service's failure to answer, not the resource's absence.
      if (err instanceof ProblemError && err.code === 'not_found')
        throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} with a staged reply that is gone`, { cause: err });
      throw err;
    }
    parts.push(Buffer.from(part.data, 'base64'));
  }
  let whole: Buffer;
  try {
    whole = checkWhole(ref, Buffer.concat(parts));
  } catch (err) {
    throw new ProblemError('bad_gateway', `${op.service} answered ${op.operationId} with a staged reply that is not whole`, { cause: err });
  }
  const headers = { ...reply.headers };
  delete headers[busHeaders.staged];
  return { ...reply, data: whole, headers };
}

function transportProblem(op: Operation, err: unknown): ProblemError {
  if (err instanceof BusError) {
    if (err.code === 'timeout')
      return new ProblemError('upstream_timeout', `The ${op.service} service did not answer in time`, { cause: err });
    if (err.code === 'payload_too_large')
      return new ProblemError('payload_too_large', 'The request is too large for the bus', { cause: err });
    return new ProblemError('service_unavailable', `The ${op.service} service is not available`, {
      retryAfter: retryAfterSeconds,
      cause: err,
    });
  }
  return new ProblemError('internal_error', undefined, { cause: err });
}

function replyProblem(op: Operation, text: string, code: number): ProblemError {
  try {
    const body: unknown = JSON.parse(text);
    if (isProblemBody(body)) return problemFromBody(body);
  } catch {
    // fall through: a service error without a problem body
  }
  if (code === 503) return new ProblemError('service_unavailable', undefined, { retryAfter: retryAfterSeconds, relayed: true });
  return new ProblemError(code >= 500 ? 'internal_error' : 'bad_request', `The ${op.service} service failed`, { relayed: true });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** The kinds of an event definition. */
export type KindOf<E> = E extends EventDefinition<infer _S, infer K> ? K : never;

/**
 * Publishes an event of the registry after a change committed, its body checked against the event's
 * schema (a body that does not match is a bug of the publisher and throws). `eventId` names an event that
 * may be published again (by another replica that takes over the work): the event log keeps one event of
 * an id within its duplicate window (`eventIdHeader`); followers of the subject itself see every publication.
 */
export function publishEvent<E extends EventDefinition>(
  bus: Bus,
  event: E,
  body: EventBody<E>,
  options: { kind?: KindOf<E>; requestId: string; eventId?: string },
): void {
  const headers = {
    [busHeaders.requestId]: options.requestId,
    ...(options.eventId === undefined ? {} : { [eventIdHeader]: options.eventId }),
  };
  bus.publish(event.subject(options.kind), encodeEvent(event, body), headers);
}

/**
 * Publishes an event whose body the service's own code shapes on a hot path (a session's reports, thousands
 * a second), as `publishEvent` does but encoded once and not checked against the schema here
 * (`encodeOwnEvent`): the tests check what the service sends, and followers elsewhere check what they
 * read. `listed` names the body's array whose items the live channel writes as they are encoded.
 */
export function publishOwnEvent<E extends EventDefinition>(
  bus: Bus,
  event: E,
  body: EventBody<E>,
  options: { kind?: KindOf<E>; requestId: string; eventId?: string; listed?: string },
): void {
  const headers = {
    [busHeaders.requestId]: options.requestId,
    ...(options.eventId === undefined ? {} : { [eventIdHeader]: options.eventId }),
  };
  bus.publish(event.subject(options.kind), encodeOwnEvent(event, body, options.listed), headers);
}

/**
 * Follows an event of the registry: every kind of it, each body checked against the event's schema. It
 * subscribes to the event's own subjects, not its wildcard, which may cover another event's subject
 * (`events.config.script.*` covers `events.config.script.ran`). A body that is not of the shape (an older
 * or foreign publisher) is logged and skipped.
 */
export function subscribeEvent<E extends EventDefinition>(
  bus: Bus,
  event: E,
  handle: (body: EventMessage<E>, kind: KindOf<E> | undefined) => void | Promise<void>,
  log: Logger,
): BusSubscription {
  const receive = (msg: BusMessage) => {
    const kind = kindOf(event, msg.subject);
    const body = kind === null ? null : decodeEvent(event, msg.data);
    if (body === null) return void log.warn({ subject: msg.subject, event: event.name }, 'an event not of its defined shape; skipped');
    return handle(body, kind as KindOf<E> | undefined);
  };
  const subscriptions = event.subjects.map((subject) => bus.subscribe(subject, receive));
  return { unsubscribe: async () => void (await Promise.all(subscriptions.map((s) => s.unsubscribe()))) };
}

/** The body of a problem for a code, re-exported for boundaries that build one directly. */
export { problemBody };
