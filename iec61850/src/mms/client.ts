/**
 * An MMS client over one association: confirmed requests multiplexed by invoke id within the negotiated
 * number of outstanding requests, the rest waiting their turn in order; the wait for a turn and the answer
 * each with a timeout of its own; a caller's deadline carried by each request of a view of the client
 * ({@link MmsClient.within}): a request is not sent once it has passed, and leaves the wait for a turn when it
 * passes; InformationReports as `report` events; a dead
 * peer found by an Identify probe after `idleTimeoutMs` of silence; conclude, abort and close. Every way the
 * connection can end rejects what is pending with the same {@link MmsConnectionError} and emits `close` once.
 */
import { EventEmitter } from 'node:events';
import { MmsConnectionError, MmsError } from './client_errors.ts';
import { connectLink, initiateFor, type IsoLink, type Negotiated, type Selectors } from './client_link.ts';
import type { PeeledTsdu } from './frames.ts';
import { buildAbort, buildConfirmedRequestFrame, buildReleaseRequest, confirmedRequestLength } from './frames.ts';
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
import { readAnswerAt, type ReadAnswer } from './read_answer.ts';
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
  service: Uint8Array | undefined;
  /** Undefined until it is sent. */
  invokeId: number | undefined;
  /** Until when it may wait for a turn, then (once sent) until when its answer may take (`performance.now()`). */
  deadline: number;
  /** Its caller's deadline, as `performance.now()` counts (Infinity: none); a wait for a turn ends at it. */
  callerDeadline: number;
  /** A read of one variable kept encoded: resolved with the results of its response, checked to be one. */
  resultsOnly: boolean;
  resolve(r: ConfirmedResponse | AccessResult[]): void;
  reject(e: Error): void;
};

/**
 * The requests an association answers, as {@link MmsClient} and a view of it bound to a caller's deadline
 * ({@link MmsClient.within}) both offer them: what the IEC 61850 layer asks of a client.
 */
export interface MmsRequester {
  readonly negotiated: Negotiated;
  /** Why the association ended, or undefined while it stands. */
  readonly closeReason: MmsConnectionError | undefined;
  /** The caller's deadline its requests carry, in ms since 1970 (`Date.now()`); Infinity: none. */
  readonly deadline: number;
  identify(): Promise<{ vendor: string; model: string; revision: string }>;
  getNameList(q: NameListQuery): Promise<NameListPage>;
  getAllNames(q: Omit<NameListQuery, 'continueAfter'>): Promise<string[]>;
  getVariableAccessAttributes(ref: VariableRef): Promise<MmsType>;
  read(refs: VariableRef[]): Promise<AccessResult[]>;
  readNamedVariableList(ref: VariableRef): Promise<AccessResult[]>;
  write(ref: VariableRef, data: MmsData): Promise<void>;
  writeMany(items: { ref: VariableRef; data: MmsData }[]): Promise<WriteResult[]>;
  getNamedVariableListAttributes(ref: VariableRef): Promise<{ deletable: boolean; variables: NamedVariable[] }>;
  request<S extends Service>(request: Extract<ConfirmedRequest, { service: S }>): Promise<ResponseOf<S>>;
  /** The same requests bound to `deadline` (ms since 1970) as well, the earlier of the two counting. */
  within(deadline: number): MmsRequester;
}

/** What a view of a client needs of it. */
type Port = {
  negotiated: Negotiated;
  closeReason(): MmsConnectionError | undefined;
  ask(request: ConfirmedRequest, deadline: number): Promise<ConfirmedResponse>;
  /** A read of one reference by its text, encoded once: its results. */
  readKept(ref: string, deadline: number): Promise<AccessResult[]>;
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

/** A request not sent because its caller's deadline had passed (`when`: before it was sent, while it waited). */
const deadlinePassed = (service: string, when: string) =>
  new MmsConnectionError('deadline_passed', `${service} was not sent: its caller's deadline passed ${when}`);

const nameOf = (ref: VariableRef): NamedVariable => (typeof ref === 'string' ? objectNameOf(ref) : ref);

/** A read answered with another number of results than it named variables. */
const wrongCount = (asked: number, answered: number) =>
  new MmsConnectionError('protocol_error', `read of ${asked} variables answered with ${answered} results`);

/** A read of one reference, encoded once for an association that reads it again and again (polling). */
type KeptRead = { request: Extract<ConfirmedRequest, { service: 'read' }>; service: Uint8Array };

/** Reads of one reference an association keeps encoded; past this many, it starts over. */
const KEPT_READS = 256;

/**
 * The requests of one association with the caller's deadline each carries (Infinity: none): the client's
 * own, or a view made by {@link MmsClient.within}.
 */
class MmsRequests implements MmsRequester {
  readonly deadline: number;
  readonly #port: Port;

  constructor(port: Port, deadline: number) {
    this.#port = port;
    this.deadline = deadline;
  }

  get negotiated(): Negotiated {
    return this.#port.negotiated;
  }

  get closeReason(): MmsConnectionError | undefined {
    return this.#port.closeReason();
  }

  within(deadline: number): MmsRequester {
    return deadline >= this.deadline ? this : new MmsRequests(this.#port, deadline);
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

  /**
   * Reads variables; one result per reference, in order. A read of one reference by its text (polling) is
   * encoded once and costs one promise: the one answered.
   */
  read(refs: VariableRef[]): Promise<AccessResult[]> {
    if (refs.length === 1 && typeof refs[0] === 'string') return this.#port.readKept(refs[0], this.deadline);
    return this.#readMany(refs);
  }

  async #readMany(refs: VariableRef[]): Promise<AccessResult[]> {
    const { results } = await this.request({
      service: 'read',
      specificationWithResult: false,
      variables: { kind: 'variables', names: refs.map(nameOf) },
    });
    if (results.length !== refs.length) throw wrongCount(refs.length, results.length);
    return results;
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
    // resolved only with a response of the request's own service (`#mms` checks it)
    return this.#port.ask(request, this.deadline) as Promise<ResponseOf<S>>;
  }
}

/** An MMS client association; make one with {@link MmsClient.connect}. */
export class MmsClient extends EventEmitter<MmsClientEvents> {
  /** What the association settled. */
  readonly negotiated: Negotiated;
  readonly #link: IsoLink;
  readonly #requestTimeoutMs: number;
  readonly #queueTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  /**
   * Requests sent and not answered, in the order sent: the order their deadlines fall in. At most the
   * negotiated number of outstanding requests (a handful), so an answer finds its request by a scan, usually
   * at the front: cheaper than a Map's entry made and deleted for every read.
   */
  readonly #sent: Pending[] = [];
  /** Where the in-place decoding of a read's answer leaves its invoke id. */
  readonly #answer: ReadAnswer = { invokeId: 0 };
  /**
   * Requests waiting for a turn, oldest first. Their deadlines fall in that order unless a caller's deadline
   * ends a wait sooner: the few a queue holds (bounded by the device requests above it) are scanned for those.
   */
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
  /** What views of this client ({@link within}) ask it through. */
  readonly #port: Port;
  /** The client's own requests: without a caller's deadline. */
  readonly #requests: MmsRequests;

  private constructor(link: IsoLink, negotiated: Negotiated, o: MmsClientOptions) {
    super();
    this.#link = link;
    this.negotiated = negotiated;
    this.#requestTimeoutMs = o.requestTimeoutMs ?? 10_000;
    this.#queueTimeoutMs = o.queueTimeoutMs ?? this.#requestTimeoutMs;
    this.#idleTimeoutMs = o.idleTimeoutMs ?? 0;
    this.#port = {
      negotiated,
      closeReason: () => this.#closeReason,
      ask: (request, deadline) => this.#ask(request, undefined, deadline, false) as Promise<ConfirmedResponse>,
      readKept: (ref, deadline) => {
        let kept: KeptRead;
        try {
          kept = this.#keptRead(ref);
        } catch (e) {
          return Promise.reject(e);
        }
        return this.#ask(kept.request, kept.service, deadline, true) as Promise<AccessResult[]>;
      },
    };
    this.#requests = new MmsRequests(this.#port, Infinity);
    link.handler = {
      tsdu: (p) => this.#receive(p),
      tsduAt: (buf, start, end) => this.#receiveAt(buf, start, end),
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
    return this.#sent.length;
  }

  /** Requests waiting for a turn to be sent. */
  get queued(): number {
    return this.#queue.length;
  }

  /** The caller's deadline of the client's own requests: none. */
  get deadline(): number {
    return Infinity;
  }

  /**
   * The client's requests bound to a caller's `deadline` (ms since 1970, as `Date.now()`): a request is not
   * sent once the deadline has passed, and one waiting for a turn is taken out of the wait when it passes
   * (both fail with `deadline_passed`); a request already sent is answered as any other. The requests of an
   * operation made of several (a browse, a select and its operate) go one after another through the same
   * view, so the operation stops between two of them once its caller has given up.
   */
  within(deadline: number): MmsRequester {
    return new MmsRequests(this.#port, deadline);
  }

  identify(): Promise<{ vendor: string; model: string; revision: string }> {
    return this.#requests.identify();
  }

  getNameList(q: NameListQuery): Promise<NameListPage> {
    return this.#requests.getNameList(q);
  }

  getAllNames(q: Omit<NameListQuery, 'continueAfter'>): Promise<string[]> {
    return this.#requests.getAllNames(q);
  }

  getVariableAccessAttributes(ref: VariableRef): Promise<MmsType> {
    return this.#requests.getVariableAccessAttributes(ref);
  }

  read(refs: VariableRef[]): Promise<AccessResult[]> {
    return this.#requests.read(refs);
  }

  readNamedVariableList(ref: VariableRef): Promise<AccessResult[]> {
    return this.#requests.readNamedVariableList(ref);
  }

  write(ref: VariableRef, data: MmsData): Promise<void> {
    return this.#requests.write(ref, data);
  }

  writeMany(items: { ref: VariableRef; data: MmsData }[]): Promise<WriteResult[]> {
    return this.#requests.writeMany(items);
  }

  getNamedVariableListAttributes(ref: VariableRef): Promise<{ deletable: boolean; variables: NamedVariable[] }> {
    return this.#requests.getNamedVariableListAttributes(ref);
  }

  request<S extends Service>(request: Extract<ConfirmedRequest, { service: S }>): Promise<ResponseOf<S>> {
    return this.#requests.request(request);
  }

  /**
   * Sends `request` (its service already encoded, when given) and resolves with its response, or with the
   * results of a read's response (`resultsOnly`); `deadline` is its caller's (ms since 1970): past it the
   * request is not sent, and its wait for a turn ends at it.
   */
  #ask(
    request: ConfirmedRequest,
    service: Uint8Array | undefined,
    deadline: number,
    resultsOnly: boolean,
  ): Promise<ConfirmedResponse | AccessResult[]> {
    return new Promise<ConfirmedResponse | AccessResult[]>((resolve, reject) => {
      if (this.#closeReason)
        return reject(new MmsConnectionError('not_connected', `not connected: ${this.#closeReason.message}`, this.#closeReason));
      if (this.#concluding) return reject(new MmsConnectionError('not_connected', 'the association is concluding'));
      let callerDeadline = Infinity;
      if (deadline !== Infinity) {
        const left = deadline - Date.now();
        if (left <= 0) return reject(deadlinePassed(request.service, 'before it was sent'));
        callerDeadline = performance.now() + left;
      }
      const p: Pending = { request, service, invokeId: undefined, deadline: 0, callerDeadline, resultsOnly, resolve, reject };
      if (this.#sent.length < this.negotiated.maxOutstanding) this.#send(p);
      else {
        p.deadline = Math.min(performance.now() + this.#queueTimeoutMs, callerDeadline);
        this.#queue.push(p);
        this.#armDeadline(p.deadline);
      }
    });
  }

  /**
   * Ends the association gracefully: waits for outstanding requests, MMS Conclude, ACSE release, then closes.
   * Each step waits at most `timeoutMs` (the request timeout by default); past it the association is aborted.
   */
  async conclude(timeoutMs = this.#requestTimeoutMs): Promise<void> {
    if (this.#closeReason) return;
    const within = <T>(work: Promise<T>) => withTimeout(work, timeoutMs);
    if (this.#sent.length + this.#queue.length > 0) await within(new Promise<void>((r) => this.#drained.push(r)));
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

  /**
   * Reads nothing more from the device until `until` settles or `maxMs` have passed (`IsoLink.holdReads`):
   * a process that cannot keep up with a device's reports leaves them with the device, whose buffered
   * report blocks keep their entries, instead of dropping some downstream. Nothing is held while a request
   * is sent and unanswered, a request sent ends a hold, and no hold lasts half a request's time.
   */
  holdReads(until: Promise<unknown>, maxMs: number): void {
    // Not while a request waits for its answer, which would wait behind the hold; and never as long as
    // half a request's time.
    if (this.#sent.length > 0) return;
    this.#link.holdReads(until, Math.min(maxMs, this.#requestTimeoutMs / 2));
  }

  /** Aborts the association (ACSE ABRT) and closes the socket. */
  abort(): void {
    this.#link.fail(new MmsConnectionError('aborted', 'association aborted by the client'), buildAbort());
  }

  /** Closes the socket without a word to the peer. */
  close(): void {
    this.#link.fail(new MmsConnectionError('closed', 'connection closed by the client'));
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

  /** The request sent with `invokeId`, or undefined. */
  #sentWith(invokeId: number): Pending | undefined {
    const sent = this.#sent;
    for (let i = 0; i < sent.length; i++) if (sent[i].invokeId === invokeId) return sent[i];
    return undefined;
  }

  #send(p: Pending): void {
    if (p.callerDeadline <= performance.now()) return this.#refuse(p, deadlinePassed(p.request.service, 'while it waited for a turn'));
    while (this.#sentWith(this.#nextInvokeId) !== undefined) this.#nextInvokeId = (this.#nextInvokeId + 1) >>> 0;
    const invokeId = this.#nextInvokeId;
    this.#nextInvokeId = (this.#nextInvokeId + 1) >>> 0;
    // a request kept encoded goes straight into its frame; any other is encoded layer by layer
    let pdu: Uint8Array | undefined;
    let length: number;
    try {
      if (p.service) length = confirmedRequestLength(invokeId, p.service.length);
      else {
        pdu = encodeMmsPdu({ pdu: 'confirmed-request', invokeId, request: p.request });
        length = pdu.length;
      }
    } catch (e) {
      return this.#refuse(p, e instanceof Error ? e : new Error(String(e)));
    }
    if (length > this.negotiated.maxPduSize) {
      const error = new MmsConnectionError(
        'too_large',
        `a ${p.request.service} request of ${length} octets exceeds the negotiated PDU size ${this.negotiated.maxPduSize}; not sent`,
      );
      return this.#refuse(p, error);
    }
    p.invokeId = invokeId;
    p.deadline = performance.now() + this.#requestTimeoutMs;
    this.#sent.push(p);
    // Its answer is not held back behind the device's reports.
    this.#link.endHold();
    this.#armDeadline(p.deadline);
    const frame = p.service ? buildConfirmedRequestFrame(invokeId, p.service, this.#link.tpduSize) : undefined;
    if (frame) this.#link.sendFrame(frame);
    else this.#link.sendMms(pdu ?? encodeConfirmedRequestPdu(invokeId, p.service!));
  }

  /** Frees the request's slot: out of the requests sent, or out of the queue. */
  #free(p: Pending): void {
    if (p.invokeId !== undefined) {
      // answers come mostly in the order sent
      const at = this.#sent[0] === p ? 0 : this.#sent.indexOf(p);
      if (at === 0) this.#sent.shift();
      else if (at > 0) this.#sent.splice(at, 1);
      return;
    }
    // only a request never sent can still wait in the queue
    const queued = this.#queue.indexOf(p);
    if (queued >= 0) this.#queue.splice(queued, 1);
  }

  /** Sends the queued requests there are turns for; tells `conclude` once nothing is pending. */
  #next(): void {
    while (!this.#closeReason && this.#queue.length > 0 && this.#sent.length < this.negotiated.maxOutstanding)
      this.#send(this.#queue.shift()!);
    if (this.#sent.length + this.#queue.length === 0 && this.#drained.length > 0) for (const r of this.#drained.splice(0)) r();
  }

  /** Frees the request's slot, answers it, and sends the next queued request. */
  #fulfil(p: Pending, value: ConfirmedResponse | AccessResult[]): void {
    this.#free(p);
    p.resolve(value);
    this.#next();
  }

  /** Frees the request's slot, fails it with `error`, and sends the next queued request. */
  #refuse(p: Pending, error: Error): void {
    this.#free(p);
    p.reject(error);
    this.#next();
  }

  /** A read's results for the request `p`: its response, or for a kept read (one variable) the results alone. */
  #readAnswered(p: Pending, results: AccessResult[], response: ConfirmedResponse | undefined): void {
    if (!p.resultsOnly) return this.#fulfil(p, response ?? { service: 'read', results });
    if (results.length !== 1) return this.#refuse(p, wrongCount(1, results.length));
    this.#fulfil(p, results);
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
    // which must not be one whose wait already ended (a timer that fired late finds both due). A caller's
    // deadline can end a later request's wait before an earlier one's: the whole queue is looked at.
    for (const p of this.#queue.filter((q) => q.deadline <= now)) this.#timeout(p);
    // a timeout frees the front one's slot (and may send a queued one, at the end, due later)
    while (this.#sent.length > 0 && this.#sent[0].deadline <= now) this.#timeout(this.#sent[0]);
    let next = this.#sent[0]?.deadline ?? Infinity;
    for (const p of this.#queue) next = Math.min(next, p.deadline);
    if (next < Infinity && !this.#closeReason) this.#armDeadline(next);
  }

  #timeout(p: Pending): void {
    const error =
      p.invokeId === undefined && p.deadline >= p.callerDeadline
        ? deadlinePassed(p.request.service, `while it waited for a turn behind ${this.#sent.length} outstanding requests`)
        : p.invokeId === undefined
          ? new MmsConnectionError(
              'queue_timeout',
              `${p.request.service} waited ${this.#queueTimeoutMs} ms for a turn behind ${this.#sent.length} outstanding requests; not sent`,
            )
          : new MmsConnectionError(
              'request_timeout',
              `${p.request.service} (invoke id ${p.invokeId}) not answered within ${this.#requestTimeoutMs} ms`,
            );
    this.#refuse(p, error);
  }

  /** A TSDU where it lies: a read's answer in the usual form is taken here; false leaves anything else to {@link #receive}. */
  #receiveAt(buf: Uint8Array, start: number, end: number): boolean {
    const results = readAnswerAt(buf, start, end, this.#answer);
    if (results === undefined) return false;
    const { invokeId } = this.#answer;
    const p = this.#sentWith(invokeId);
    if (!p) this.emit('warning', new Error(`confirmed-response for invoke id ${invokeId} matches no request`));
    else if (p.request.service !== 'read')
      this.#refuse(p, new MmsConnectionError('protocol_error', `${p.request.service} answered with a read response`));
    else this.#readAnswered(p, results, undefined);
    return true;
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
        const p = pdu.invokeId === undefined ? undefined : this.#sentWith(pdu.invokeId);
        if (!p)
          return void this.emit(
            'warning',
            new Error(
              `${pdu.pdu} for invoke id ${pdu.invokeId ?? '(none)'} matches no request${pdu.pdu === 'reject' ? `: ${pdu.reason.text}` : ''}`,
            ),
          );
        if (pdu.pdu === 'confirmed-response') {
          const { response } = pdu;
          if (response.service === 'read' && p.request.service === 'read') return this.#readAnswered(p, response.results, response);
          if (response.service === p.request.service) return this.#fulfil(p, response);
          const wrong = new MmsConnectionError('protocol_error', `${p.request.service} answered with a ${response.service} response`);
          return this.#refuse(p, wrong);
        }
        const error = pdu.pdu === 'reject' ? MmsError.fromReject(pdu.reason) : MmsError.fromServiceError(pdu.error);
        return this.#refuse(p, error);
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
    const all = [...this.#sent.splice(0), ...this.#queue.splice(0)];
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
