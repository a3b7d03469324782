/**
 * An MMS client over one association: confirmed requests multiplexed by invoke id within the negotiated
 * number of outstanding requests, the rest waiting their turn in order; the wait for a turn and the answer
 * each with a timeout of its own; InformationReports as `report` events; a dead
 * peer found by an Identify probe after `idleTimeoutMs` of silence; conclude, abort and close. Every way the
 * connection can end rejects what is pending with the same {@link MmsConnectionError} and emits `close` once.
 */
import { EventEmitter } from 'node:events';
import { MmsConnectionError, MmsError } from './client_errors.ts';
import { connectLink, initiateFor, type IsoLink, type Negotiated, type Selectors } from './client_link.ts';
import type { PeeledTsdu } from './frames.ts';
import { buildAbort, buildReleaseRequest } from './frames.ts';
import type { MmsData } from './mms_data.ts';
import { objectNameOf, objectNameText, type AccessResult, type NamedVariable } from './mms_access.ts';
import { encodeConfirmedRequestPdu, encodeMmsPdu, type InformationReport, type MmsPdu } from './mms_pdu.ts';
import {
  encodeConfirmedRequest,
  type ConfirmedRequest,
  type ConfirmedResponse,
  type ObjectClass,
  type WriteResult,
} from './mms_services.ts';
import type { MmsType } from './mms_types.ts';
import type { TlsOptions } from './tls_transport.ts';

export { MmsConnectionError, MmsError } from './client_errors.ts';
export type { Negotiated, Selectors } from './client_link.ts';

/**
 * The largest MMS PDU a client proposes unless told otherwise: 1 MiB, more than devices accept (libiec61850's
 * servers 65000), so that the device's own limit decides: larger FileRead pieces and reads mean fewer round
 * trips. It also bounds what one answer may make the client hold.
 */
export const PROPOSED_MAX_PDU_SIZE = 1024 * 1024;

/** How to reach and talk to a server. Times are in milliseconds. */
export type MmsClientOptions = {
  host: string;
  /** 102 by default. */
  port?: number;
  /** TCP, COTP and association together; 10 s by default. */
  connectTimeoutMs?: number;
  /** Each confirmed request, from sending it to the answer; 10 s by default. */
  requestTimeoutMs?: number;
  /**
   * How long a request may wait for a turn while `maxOutstanding` others are out (the request timeout by
   * default); past it the request is not sent and fails with `queue_timeout`.
   */
  queueTimeoutMs?: number;
  /** Requests proposed to have outstanding at once (the server may lower it); 5 by default. */
  maxOutstanding?: number;
  /**
   * Largest MMS PDU proposed; {@link PROPOSED_MAX_PDU_SIZE} by default, so that the association gets the
   * largest the device accepts (a device answers the smaller of the proposal and its own limit).
   */
  maxPduSize?: number;
  /** Largest TPDU proposed in the COTP CR; 8192 by default. */
  tpduSize?: number;
  /** Silence after which an Identify probes the peer; 0 (the default) turns probing off. */
  idleTimeoutMs?: number;
  selectors?: Selectors;
  /** ACSE password authentication (mechanism 2.2.3.1, the password as a GraphicString). */
  password?: string;
  /** TLS under the ISO stack (IEC 62351-3; port 3782 by convention): CA, client certificate and key, server name. */
  tls?: TlsOptions;
  /** Cancels the connect; aborting it later aborts the association. */
  signal?: AbortSignal;
};

/** A reference: `LD/LN$FC$DO$DA` text, or an ObjectName (with an alternate access into it, such as an array element's). */
export type VariableRef = string | NamedVariable;

/** One page of GetNameList. */
export type NameListPage = { identifiers: string[]; moreFollows: boolean };

/** What GetNameList lists: a class, in a domain (else VMD-wide, or association-specific with `aa`). */
export type NameListQuery = { objectClass: ObjectClass; domain?: string; aa?: boolean; continueAfter?: string };

/** The events of a client. */
export type MmsClientEvents = { report: [InformationReport]; close: [MmsConnectionError]; warning: [Error] };

type Service = ConfirmedRequest['service'];
type ResponseOf<S extends Service> = Extract<ConfirmedResponse, { service: S }>;
type Pending = {
  request: ConfirmedRequest;
  /** The request's service already encoded (a read kept by its reference). */
  service?: Uint8Array;
  invokeId?: number;
  /** Until when it may wait for a turn, then (once sent) until when its answer may take. */
  deadline: number;
  resolve(r: ConfirmedResponse): void;
  reject(e: Error): void;
};

/** `work`'s value, or undefined once `ms` have passed; the timer never outlives the race. */
async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<undefined>((r) => {
        timer = setTimeout(() => r(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const nameOf = (ref: VariableRef): NamedVariable => (typeof ref === 'string' ? objectNameOf(ref) : ref);

/** A read of one reference, encoded once for an association that reads it again and again (polling). */
type KeptRead = { request: Extract<ConfirmedRequest, { service: 'read' }>; service: Uint8Array };

/** Reads of one reference an association keeps encoded; past this many, it starts over. */
const KEPT_READS = 256;

/** An MMS client association; make one with {@link MmsClient.connect}. */
export class MmsClient extends EventEmitter<MmsClientEvents> {
  /** What the association settled. */
  readonly negotiated: Negotiated;
  readonly #link: IsoLink;
  readonly #requestTimeoutMs: number;
  readonly #queueTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  /** Requests sent and not answered, by invoke id; a Map keeps them in the order sent: the order their deadlines fall in. */
  readonly #pending = new Map<number, Pending>();
  /** Requests waiting for a turn, oldest first: the order their deadlines fall in too. */
  readonly #queue: Pending[] = [];
  readonly #drained: (() => void)[] = [];
  #deadlineTimer: NodeJS.Timeout | undefined;
  /** When the armed timer fires. */
  #deadlineAt = Infinity;
  #nextInvokeId = 1;
  readonly #keptReads = new Map<string, KeptRead>();
  #closeReason: MmsConnectionError | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #concluding: { resolve(ok: boolean): void } | undefined;
  #releasing: (() => void) | undefined;

  private constructor(link: IsoLink, negotiated: Negotiated, o: MmsClientOptions) {
    super();
    this.#link = link;
    this.negotiated = negotiated;
    this.#requestTimeoutMs = o.requestTimeoutMs ?? 10_000;
    this.#queueTimeoutMs = o.queueTimeoutMs ?? this.#requestTimeoutMs;
    this.#idleTimeoutMs = o.idleTimeoutMs ?? 0;
    link.handler = {
      tsdu: (p) => this.#receive(p),
      cotp: () => this.#fail('protocol_error', 'unexpected COTP TPDU after the connect phase'),
      failure: (e) => this.#closed(e),
    };
    if (o.signal) {
      const onAbort = () => this.abort();
      o.signal.addEventListener('abort', onAbort, { once: true });
      this.once('close', () => o.signal?.removeEventListener('abort', onAbort));
    }
    this.#armIdle();
  }

  /** Connects and associates; rejects with an {@link MmsConnectionError} (no socket is left open). */
  static async connect(o: MmsClientOptions): Promise<MmsClient> {
    const maxOutstanding = o.maxOutstanding ?? 5;
    const { link, negotiated } = await connectLink({
      host: o.host,
      port: o.port ?? 102,
      connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
      selectors: o.selectors ?? {},
      tpduSize: o.tpduSize ?? 8192,
      initiate: initiateFor(maxOutstanding, o.maxPduSize ?? PROPOSED_MAX_PDU_SIZE),
      ...(o.password === undefined ? {} : { password: o.password }),
      ...(o.tls === undefined ? {} : { tls: o.tls }),
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
    return new MmsClient(link, negotiated, o);
  }

  /** Why the association ended, or undefined while it stands. */
  get closeReason(): MmsConnectionError | undefined {
    return this.#closeReason;
  }

  /** Requests sent and not answered yet. */
  get outstanding(): number {
    return this.#pending.size;
  }

  /** Requests waiting for a turn to be sent. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Vendor, model and revision of the server. */
  async identify(): Promise<{ vendor: string; model: string; revision: string }> {
    const { vendor, model, revision } = await this.request({ service: 'identify' });
    return { vendor, model, revision };
  }

  /** One page of names. */
  async getNameList(q: NameListQuery): Promise<NameListPage> {
    const scope =
      q.domain !== undefined ? { scope: 'domain' as const, domain: q.domain } : q.aa ? { scope: 'aa' as const } : { scope: 'vmd' as const };
    const request: ConfirmedRequest = { service: 'getNameList', objectClass: q.objectClass, scope };
    if (q.continueAfter !== undefined) request.continueAfter = q.continueAfter;
    const { identifiers, moreFollows } = await this.request(request);
    return { identifiers, moreFollows };
  }

  /** Every name, following `moreFollows` page after page. */
  async getAllNames(q: Omit<NameListQuery, 'continueAfter'>): Promise<string[]> {
    const all: string[] = [];
    let continueAfter: string | undefined;
    for (;;) {
      const page = await this.getNameList(continueAfter === undefined ? q : { ...q, continueAfter });
      all.push(...page.identifiers);
      const last = page.identifiers.at(-1);
      if (!page.moreFollows) return all;
      // a server that claims more but gives nothing new would loop forever
      if (last === undefined || last === continueAfter)
        throw new MmsConnectionError('protocol_error', 'GetNameList says more follow but names nothing new');
      continueAfter = last;
    }
  }

  /** The type of a variable. */
  async getVariableAccessAttributes(ref: VariableRef): Promise<MmsType> {
    return (await this.request({ service: 'getVariableAccessAttributes', name: nameOf(ref) })).type;
  }

  /** Reads variables; one result per reference, in order. A read of one reference by its text is encoded once. */
  async read(refs: VariableRef[]): Promise<AccessResult[]> {
    const kept = refs.length === 1 && typeof refs[0] === 'string' ? this.#keptRead(refs[0]) : undefined;
    const { results } = kept
      ? await this.#ask(kept.request, kept.service)
      : await this.request({ service: 'read', specificationWithResult: false, variables: { kind: 'variables', names: refs.map(nameOf) } });
    if (results.length !== refs.length)
      throw new MmsConnectionError('protocol_error', `read of ${refs.length} variables answered with ${results.length} results`);
    return results;
  }

  /** The read of `ref` as encoded the first time (only its invoke id differs from one read to the next). */
  #keptRead(ref: string): KeptRead {
    let kept = this.#keptReads.get(ref);
    if (!kept) {
      const request: KeptRead['request'] = {
        service: 'read',
        specificationWithResult: false,
        variables: { kind: 'variables', names: [nameOf(ref)] },
      };
      kept = { request, service: encodeConfirmedRequest(request) };
      if (this.#keptReads.size >= KEPT_READS) this.#keptReads.clear();
      this.#keptReads.set(ref, kept);
    }
    return kept;
  }

  /** Reads the members of a named variable list (a data set). */
  async readNamedVariableList(ref: VariableRef): Promise<AccessResult[]> {
    return (await this.request({ service: 'read', specificationWithResult: true, variables: { kind: 'list', name: nameOf(ref) } })).results;
  }

  /** Writes one variable; a refused write throws an {@link MmsError} of kind `access`. */
  async write(ref: VariableRef, data: MmsData): Promise<void> {
    const [result] = await this.writeMany([{ ref, data }]);
    if (!result.ok) throw MmsError.fromAccess(result.error, result.errorText, objectNameText(nameOf(ref)));
  }

  /** Writes several variables in one request; one result per variable. */
  async writeMany(items: { ref: VariableRef; data: MmsData }[]): Promise<WriteResult[]> {
    const names = items.map((i) => nameOf(i.ref));
    const { results } = await this.request({ service: 'write', variables: { kind: 'variables', names }, data: items.map((i) => i.data) });
    if (results.length !== names.length)
      throw new MmsConnectionError('protocol_error', `write of ${names.length} variables answered with ${results.length} results`);
    return results;
  }

  /** The members of a named variable list. */
  async getNamedVariableListAttributes(ref: VariableRef): Promise<{ deletable: boolean; variables: NamedVariable[] }> {
    const { deletable, variables } = await this.request({ service: 'getNamedVariableListAttributes', name: nameOf(ref) });
    return { deletable, variables };
  }

  /** Sends any confirmed request and resolves with the response of the same service. */
  request<S extends Service>(request: Extract<ConfirmedRequest, { service: S }>): Promise<ResponseOf<S>> {
    return this.#ask(request);
  }

  /** Sends `request` (its service already encoded, when given) and resolves with the response of the same service. */
  #ask<S extends Service>(request: Extract<ConfirmedRequest, { service: S }>, service?: Uint8Array): Promise<ResponseOf<S>> {
    // resolved only with a response of the request's own service (`#mms` checks it)
    return new Promise<ConfirmedResponse>((resolve, reject) => {
      if (this.#closeReason)
        return reject(new MmsConnectionError('not_connected', `not connected: ${this.#closeReason.message}`, this.#closeReason));
      if (this.#concluding) return reject(new MmsConnectionError('not_connected', 'the association is concluding'));
      const p: Pending = { request, service, resolve, reject, deadline: 0 };
      if (this.#pending.size < this.negotiated.maxOutstanding) this.#send(p);
      else {
        p.deadline = performance.now() + this.#queueTimeoutMs;
        this.#queue.push(p);
        this.#armDeadline(p.deadline);
      }
    }) as Promise<ResponseOf<S>>;
  }

  /**
   * Ends the association gracefully: waits for outstanding requests, MMS Conclude, ACSE release, then closes.
   * Each step waits at most `timeoutMs` (the request timeout by default); past it the association is aborted.
   */
  async conclude(timeoutMs = this.#requestTimeoutMs): Promise<void> {
    if (this.#closeReason) return;
    const within = <T>(work: Promise<T>) => withTimeout(work, timeoutMs);
    if (this.#pending.size + this.#queue.length > 0) await within(new Promise<void>((r) => this.#drained.push(r)));
    if (this.#closeReason) return;
    const concluded = await within(
      new Promise<boolean>((resolve) => {
        this.#concluding = { resolve };
        this.#link.sendMms(encodeMmsPdu({ pdu: 'conclude-request' }));
      }),
    );
    if (!concluded || this.#closeReason) return this.abort();
    const released = await within(
      new Promise<true>((resolve) => {
        this.#releasing = () => resolve(true);
        this.#link.send([buildReleaseRequest()]);
      }),
    );
    if (!released) return this.abort();
    this.#link.fail(new MmsConnectionError('closed', 'association concluded'));
  }

  /** Aborts the association (ACSE ABRT) and closes the socket. */
  abort(): void {
    this.#link.fail(new MmsConnectionError('aborted', 'association aborted by the client'), buildAbort());
  }

  /** Closes the socket without a word to the peer. */
  close(): void {
    this.#link.fail(new MmsConnectionError('closed', 'connection closed by the client'));
  }

  #send(p: Pending): void {
    while (this.#pending.has(this.#nextInvokeId)) this.#nextInvokeId = (this.#nextInvokeId + 1) >>> 0;
    const invokeId = this.#nextInvokeId;
    this.#nextInvokeId = (this.#nextInvokeId + 1) >>> 0;
    let pdu: Uint8Array;
    try {
      pdu = p.service
        ? encodeConfirmedRequestPdu(invokeId, p.service)
        : encodeMmsPdu({ pdu: 'confirmed-request', invokeId, request: p.request });
    } catch (e) {
      return this.#settle(p, () => p.reject(e instanceof Error ? e : new Error(String(e))));
    }
    if (pdu.length > this.negotiated.maxPduSize) {
      const error = new MmsConnectionError(
        'too_large',
        `a ${p.request.service} request of ${pdu.length} octets exceeds the negotiated PDU size ${this.negotiated.maxPduSize}; not sent`,
      );
      return this.#settle(p, () => p.reject(error));
    }
    p.invokeId = invokeId;
    p.deadline = performance.now() + this.#requestTimeoutMs;
    this.#pending.set(invokeId, p);
    this.#armDeadline(p.deadline);
    this.#link.sendMms(pdu);
  }

  /** Frees the request's slot, runs `outcome`, and sends the next queued request. */
  #settle(p: Pending, outcome: () => void): void {
    if (p.invokeId !== undefined) this.#pending.delete(p.invokeId);
    // Only a request never sent can still wait in the queue: an answer skips the scan.
    const queued = p.invokeId === undefined ? this.#queue.indexOf(p) : -1;
    if (queued >= 0) this.#queue.splice(queued, 1);
    outcome();
    while (!this.#closeReason && this.#queue.length > 0 && this.#pending.size < this.negotiated.maxOutstanding)
      this.#send(this.#queue.shift()!);
    if (this.#pending.size + this.#queue.length === 0) for (const r of this.#drained.splice(0)) r();
  }

  /**
   * One timer for all requests, set for the earliest deadline, rather than one set and cleared per request:
   * a read costs a few microseconds, and a timer each was a good part of them. A timer already due sooner
   * is kept; one that fires early finds nothing due and sets itself again.
   */
  #armDeadline(at: number): void {
    if (this.#deadlineTimer && this.#deadlineAt <= at) return;
    clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = at;
    this.#deadlineTimer = setTimeout(() => this.#expire(), Math.max(1, at - performance.now()));
  }

  /** Fails every request whose deadline has passed, sent or waiting, and sets the timer for the next one. */
  #expire(): void {
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Infinity;
    const now = performance.now();
    // Waiting requests past their wait first: a sent request's timeout frees a slot for the queue's head,
    // which must not be one whose wait already ended (a timer that fired late finds both due).
    while (this.#queue.length > 0 && this.#queue[0].deadline <= now) this.#timeout(this.#queue[0]);
    for (const p of this.#pending.values()) {
      if (p.deadline > now) break;
      this.#timeout(p);
    }
    const next = Math.min(this.#pending.values().next().value?.deadline ?? Infinity, this.#queue[0]?.deadline ?? Infinity);
    if (next < Infinity && !this.#closeReason) this.#armDeadline(next);
  }

  #timeout(p: Pending): void {
    const error =
      p.invokeId === undefined
        ? new MmsConnectionError(
            'queue_timeout',
            `${p.request.service} waited ${this.#queueTimeoutMs} ms for a turn behind ${this.#pending.size} outstanding requests; not sent`,
          )
        : new MmsConnectionError(
            'request_timeout',
            `${p.request.service} (invoke id ${p.invokeId}) not answered within ${this.#requestTimeoutMs} ms`,
          );
    this.#settle(p, () => p.reject(error));
  }

  #receive(t: PeeledTsdu): void {
    const kind = t.session.kind;
    if (kind === 'abort')
      return this.#fail(
        'aborted',
        `association aborted by the peer${t.presentation?.kind === 'ARP' ? `: ${t.presentation.reasonText}` : ''}`,
      );
    if (kind === 'disconnect' && this.#releasing) return this.#releasing();
    if (kind !== 'data') return this.#fail(kind === 'disconnect' ? 'closed' : 'protocol_error', `session ${kind} from the peer`);
    if (t.mms) this.#mms(t.mms);
  }

  #mms(pdu: MmsPdu): void {
    switch (pdu.pdu) {
      case 'confirmed-response':
      case 'confirmed-error':
      case 'reject': {
        const p = pdu.invokeId === undefined ? undefined : this.#pending.get(pdu.invokeId);
        if (!p)
          return void this.emit(
            'warning',
            new Error(
              `${pdu.pdu} for invoke id ${pdu.invokeId ?? '(none)'} matches no request${pdu.pdu === 'reject' ? `: ${pdu.reason.text}` : ''}`,
            ),
          );
        if (pdu.pdu === 'confirmed-response') {
          const { response } = pdu;
          if (response.service === p.request.service) return this.#settle(p, () => p.resolve(response));
          const wrong = new MmsConnectionError('protocol_error', `${p.request.service} answered with a ${response.service} response`);
          return this.#settle(p, () => p.reject(wrong));
        }
        const error = pdu.pdu === 'reject' ? MmsError.fromReject(pdu.reason) : MmsError.fromServiceError(pdu.error);
        return this.#settle(p, () => p.reject(error));
      }
      case 'information-report':
        return void this.emit('report', pdu.report);
      case 'conclude-response':
      case 'conclude-error':
        return this.#concluding?.resolve(pdu.pdu === 'conclude-response');
      default:
        return void this.emit('warning', new Error(`unexpected MMS ${pdu.pdu} from the server`));
    }
  }

  #fail(code: MmsConnectionError['code'], message: string): void {
    this.#link.fail(new MmsConnectionError(code, message));
  }

  /** The link is gone: fail everything pending, stop timers, tell listeners once. */
  #closed(reason: MmsConnectionError): void {
    if (this.#closeReason) return;
    this.#closeReason = reason;
    clearTimeout(this.#idleTimer);
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    const all = [...this.#pending.values(), ...this.#queue.splice(0)];
    this.#pending.clear();
    for (const p of all) p.reject(reason);
    for (const r of this.#drained.splice(0)) r();
    this.#concluding?.resolve(false);
    this.#releasing?.();
    this.emit('close', reason);
  }

  /** Probes the peer with Identify once nothing has arrived for `idleTimeoutMs`. */
  #armIdle(): void {
    if (this.#idleTimeoutMs <= 0 || this.#closeReason) return;
    const wait = Math.max(1, this.#link.lastReceived + this.#idleTimeoutMs - Date.now());
    this.#idleTimer = setTimeout(() => {
      if (Date.now() - this.#link.lastReceived < this.#idleTimeoutMs) return this.#armIdle();
      this.identify().then(
        () => this.#armIdle(),
        (e: unknown) => {
          // any answer, even a refusal, shows the peer is alive
          if (e instanceof MmsConnectionError && e.code === 'request_timeout')
            this.#fail('peer_unresponsive', `no answer to an Identify probe after ${this.#idleTimeoutMs} ms of silence`);
          else this.#armIdle();
        },
      );
    }, wait);
  }
}
