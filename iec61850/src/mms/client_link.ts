/**
 * The client's ISO link over one TCP socket (or TLS, see `tls_transport.ts`): TPKT deframing of any
 * segmentation, COTP DT reassembly and segmentation, and the connect phase (COTP CR/CC, then session
 * CONNECT / presentation CP / ACSE AARQ with the MMS initiate, and its password when one is given) that
 * settles TPDU size, PDU size and outstanding requests. Any failure destroys the socket once and reports one
 * error; a refused password or certificate says so.
 */
import type { Socket } from 'node:net';
import { nextTick } from 'node:process';
import { aareRefusal, type Aare } from './acse.ts';
import { concat } from './ber.ts';
import type { BitString } from './ber_values.ts';
import { MmsConnectionError, MmsError } from './client_errors.ts';
import { createDtReassembler, decodeCotp, segmentData, type CotpTpdu } from './cotp.ts';
import { buildAssociationRequest, buildConnectionRequest, buildMmsDataFrame, peelTsdu, type PeeledTsdu } from './frames.ts';
import { DEFAULT_INITIATE, type InitiateParameters } from './mms_pdu.ts';
import { encodeUserData, MMS_CONTEXT_ID } from './presentation.ts';
import { encodeDataSpdu } from './session.ts';
import { MMS_TLS_PORT, openTransport, tlsFailure, type TlsOptions } from './tls_transport.ts';
import { createTpktDeframer, decodeTpkt, encodeTpkt } from './tpkt.ts';

/** A selector as bytes or hex text (`'0001'`, as SCL writes it). */
export type Selector = Uint8Array | string;

/** ISO addressing; every field defaults to what the captured libiec61850 client sends. */
export type Selectors = {
  callingTsel?: Selector;
  calledTsel?: Selector;
  callingSsel?: Selector;
  calledSsel?: Selector;
  callingPsel?: Selector;
  calledPsel?: Selector;
  /** Dotted (`1.1.1.999.1`) or SCL's space-separated form (`1 1 1 999 1`). */
  calledApTitle?: string;
  calledAeQualifier?: number;
  callingApTitle?: string;
  callingAeQualifier?: number;
};

/** What the connect phase needs. */
export type LinkOptions = {
  host: string;
  port: number;
  connectTimeoutMs: number;
  selectors: Selectors;
  /** Largest TPDU proposed in the CR. */
  tpduSize: number;
  initiate: InitiateParameters;
  password?: string;
  /** TLS (IEC 62351-3) under the ISO stack; plain TCP without. */
  tls?: TlsOptions;
  signal?: AbortSignal;
};

/** What the association settled. */
export type Negotiated = {
  tpduSize: number;
  /** Largest MMS PDU either side may send. */
  maxPduSize: number;
  /** Requests the client may have outstanding. */
  maxOutstanding: number;
  nestingLevel?: number;
  servicesSupported: BitString;
};

/**
 * Receives what the link delivers; `failure` is called at most once, after which nothing else is. A TSDU
 * that arrives in one DT is offered to `tsduAt` first, where it lies (`buf` from `start` to `end`), if the
 * handler has it: true when it took the TSDU, false to have it peeled and given to `tsdu` instead.
 */
export type LinkHandler = {
  tsdu(p: PeeledTsdu): void;
  tsduAt?(buf: Uint8Array, start: number, end: number): boolean;
  cotp(t: CotpTpdu): void;
  failure(e: MmsConnectionError): void;
};

/** Bytes of a selector given as bytes or hex. */
export function selectorBytes(s: Selector | undefined, fallback: Uint8Array): Uint8Array {
  if (s === undefined) return fallback;
  if (typeof s !== 'string') return s;
  const hex = s.replace(/\s+/g, '');
  if (!/^([0-9a-f]{2})+$/i.test(hex)) throw new MmsConnectionError('connect_failed', `selector '${s}' is not hex`);
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

function dotted(title: string | undefined): string | undefined {
  return title
    ?.trim()
    .split(/[\s.]+/)
    .join('.');
}

/**
 * The most bytes a link takes from its socket in one turn of the event loop: past it the socket is paused
 * until the next turn. A device that sends faster than the process handles (a buffered block's backlog,
 * thousands of reports a second on a busy machine) then waits in TCP's window and its own buffer, not in
 * this process: without it one turn read up to 2 MB (libuv reads 32 times 64 KB while data waits) and
 * handled every report in it before any timer ran, seconds on a starved process.
 */
export const readPerTurnBytes = 64 * 1024;

/**
 * The most time a link spends handling what it read in one turn of the event loop (whole frames: one at
 * least each turn). Past it the rest of the chunk waits for the next turn with the socket paused, so a
 * chunk of thousands of values does not hold every timer and answer of the process behind it: 64 KB of a
 * buffered block's reports is a few thousand values, 40–90 ms of work on a busy machine.
 */
export const handlePerTurnMs = 4;

/** One TCP connection carrying TPKT/COTP; the handler may be replaced once the association stands. */
export class IsoLink {
  handler: LinkHandler;
  /** Negotiated TPDU size; 128 until the CC says otherwise (ISO 8073 default). */
  tpduSize = 128;
  /** When the last byte arrived (ms since 1970). */
  lastReceived = Date.now();
  readonly #socket: Socket;
  readonly #deframer = createTpktDeframer();
  readonly #reassembler;
  #closed = false;
  /** What was sent in this turn of the event loop and not written yet: one frame, or several. */
  #outgoing: Uint8Array | Uint8Array[] | undefined;
  /** Bytes received in this turn of the event loop (0 once a new turn began). */
  #turnBytes = 0;
  /** When this turn's time for handling frames is over (`performance.now()`). */
  #turnEnds = 0;
  /** Octets read and not handled yet, left for the next turn ({@link handlePerTurnMs}); the socket is paused meanwhile. */
  #rest: Uint8Array | undefined;
  /** Reading is held back ({@link holdReads}) until this ends it. */
  #held: (() => void) | undefined;
  /** The timer that ends a hold at the latest. */
  #holdTimer: NodeJS.Timeout | undefined;
  /**
   * The promise whose settling ends holds, watched once however many holds ask for it; `link` is let go
   * when the link closes, so a promise that settles late keeps no closed link alive.
   */
  #holdWatch: { until: Promise<unknown>; link: IsoLink | null } | undefined;

  constructor(socket: Socket, handler: LinkHandler, maxTsdu: number) {
    this.#socket = socket;
    this.handler = handler;
    this.#reassembler = createDtReassembler(maxTsdu);
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (e) => this.fail(new MmsConnectionError('socket_error', `socket error: ${e.message}`, e)));
    socket.on('close', () => this.fail(new MmsConnectionError('closed', 'connection closed by the peer')));
  }

  /** True once the link failed or was closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Sends whole frames. Frames sent in one turn of the event loop (the requests that answers arriving
   * together set off) leave in one write, not one system call each: they are gathered here until the
   * turn's ticks, then written as one buffer.
   */
  send(frames: Uint8Array[]): void {
    for (const frame of frames) this.sendFrame(frame);
  }

  /** Sends one whole frame (see {@link send}). */
  sendFrame(frame: Uint8Array): void {
    if (this.#closed) return;
    const waiting = this.#outgoing;
    if (waiting === undefined) {
      this.#outgoing = frame;
      nextTick(this.#flush);
    } else if (Array.isArray(waiting)) waiting.push(frame);
    else this.#outgoing = [waiting, frame];
  }

  /** Writes what this turn sent. */
  readonly #flush = (): void => {
    const waiting = this.#outgoing;
    this.#outgoing = undefined;
    if (waiting === undefined || this.#closed) return;
    this.#socket.write(Array.isArray(waiting) ? concat(...waiting) : waiting);
  };

  /** Sends one MMS PDU, cut into DTs of the negotiated TPDU size. */
  sendMms(pdu: Uint8Array): void {
    const frame = buildMmsDataFrame(pdu, this.tpduSize);
    if (frame) return this.sendFrame(frame);
    const tsdu = encodeDataSpdu(encodeUserData({ contextId: MMS_CONTEXT_ID, data: pdu }));
    this.send(segmentData(tsdu, this.tpduSize).map(encodeTpkt));
  }

  /** Sends `last` (if any), then closes the socket; reports `error` to the handler once. */
  fail(error: MmsConnectionError, last?: Uint8Array): void {
    if (this.#closed) return;
    // what this turn sent goes out before the last word
    if (last) this.#flush();
    this.#closed = true;
    this.#outgoing = undefined;
    clearTimeout(this.#holdTimer);
    this.#held = undefined;
    this.#rest = undefined;
    if (this.#holdWatch !== undefined) this.#holdWatch.link = null;
    if (last && !this.#socket.destroyed && this.#socket.writable) this.#socket.end(last);
    this.#socket.destroy();
    this.handler.failure(error);
  }

  #receive(chunk: Buffer): void {
    if (this.#closed) return;
    this.lastReceived = Date.now();
    if (this.#turnBytes === 0) this.#newTurn();
    this.#turnBytes += chunk.length;
    if (this.#turnBytes >= readPerTurnBytes) this.#socket.pause();
    this.#handle(chunk);
  }

  /** Begins a turn's counts, and schedules the next turn. */
  #newTurn(): void {
    this.#turnEnds = performance.now() + handlePerTurnMs;
    setImmediate(this.#nextTurn);
  }

  readonly #turnOver = (): boolean => performance.now() >= this.#turnEnds;

  /** Hands the whole frames of `octets` on while the turn's time lasts; the rest waits for the next turn. */
  #handle(octets: Uint8Array): void {
    try {
      const at = this.#deframer.some(octets, this.#onFrame, this.#turnOver);
      if (at < octets.length && !this.#closed) {
        this.#rest = octets.subarray(at);
        this.#socket.pause();
      }
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.fail(e instanceof MmsConnectionError ? e : new MmsConnectionError('protocol_error', `malformed data from the peer: ${why}`, e));
    }
  }

  /**
   * A new turn: what the last one left is handled first (a next turn is scheduled for what it leaves
   * again); then the socket reads again, unless reading is held back.
   */
  readonly #nextTurn = (): void => {
    this.#turnBytes = 0;
    if (this.#closed) return;
    const rest = this.#rest;
    if (rest !== undefined) {
      this.#rest = undefined;
      this.#newTurn();
      this.#turnBytes = rest.length;
      this.#handle(rest);
    }
    this.#readAgain();
  };

  /** Resumes a paused socket, unless reading is held back or octets read are still waiting to be handled. */
  #readAgain(): void {
    if (!this.#closed && this.#held === undefined && this.#rest === undefined && this.#socket.isPaused()) this.#socket.resume();
  }

  /**
   * Stops reading the socket until `until` settles or `maxMs` have passed, whichever is first: what the
   * peer sends meanwhile waits in TCP's window and its own buffer (a device's buffered report block keeps
   * its entries), not in this process. What was read already is still handled. Answers to requests wait
   * too, so a hold is short, and a request sent ends it ({@link endHold}); one asked for while another
   * lasts changes nothing.
   */
  holdReads(until: Promise<unknown>, maxMs: number): void {
    if (this.#closed || this.#held !== undefined) return;
    this.#socket.pause();
    const end = () => {
      if (this.#held !== end) return;
      clearTimeout(this.#holdTimer);
      this.#held = undefined;
      this.#readAgain();
    };
    this.#held = end;
    this.#holdTimer = setTimeout(end, maxMs);
    this.#holdTimer.unref?.();
    if (this.#holdWatch?.until === until) return;
    if (this.#holdWatch !== undefined) this.#holdWatch.link = null;
    const watch: { until: Promise<unknown>; link: IsoLink | null } = { until, link: this };
    this.#holdWatch = watch;
    const settled = () => {
      const link = watch.link;
      if (link === null) return;
      link.#holdWatch = undefined;
      link.endHold();
    };
    until.then(settled, settled);
  }

  /** Ends a hold ({@link holdReads}) at once: the socket reads again. */
  endHold(): void {
    this.#held?.();
  }

  /**
   * One whole TPKT frame of a received chunk. A DT that carries a whole TSDU is offered to the handler where
   * it lies; anything else, or a TSDU the handler does not take, is decoded layer by layer.
   */
  readonly #onFrame = (buf: Uint8Array, start: number, end: number): void => {
    if (this.#closed) return;
    // TPKT header, then COTP: length indicator 2 and DT, the class 0 DT every TSDU after the connect travels in
    if (buf[start + 4] === 2 && (buf[start + 5] & 0xf0) === 0xf0) {
      const eot = (buf[start + 6] & 0x80) !== 0;
      const tsduAt = this.handler.tsduAt;
      // a whole TSDU, nothing of an earlier DT waiting to be joined: offered where it lies
      if (eot && tsduAt !== undefined && this.#reassembler.buffered === 0 && tsduAt.call(this.handler, buf, start + 7, end)) return;
      // a plain view, as the layers expect (a view of a Node Buffer is a Buffer, whose `slice` does not copy)
      const tsdu = this.#reassembler.push({ eot, data: new Uint8Array(buf.buffer, buf.byteOffset + start + 7, end - start - 7) });
      if (tsdu !== undefined) this.handler.tsdu(peelTsdu(tsdu));
      return;
    }
    this.#frame(decodeCotp(decodeTpkt(new Uint8Array(buf.buffer, buf.byteOffset + start, end - start))));
  };

  #frame(tpdu: CotpTpdu): void {
    if (tpdu.kind === 'DR') throw new MmsConnectionError('cotp_refused', `transport disconnect: ${tpdu.reasonText}`);
    if (tpdu.kind === 'ER') throw new MmsConnectionError('protocol_error', `transport error: ${tpdu.causeText}`);
    if (tpdu.kind !== 'DT') return this.handler.cotp(tpdu);
    const tsdu = this.#reassembler.push(tpdu);
    if (tsdu !== undefined) this.handler.tsdu(peelTsdu(tsdu));
  }
}

/** ACSE user diagnostics (ISO 8650) about authentication, in the words the operator gets. */
const AUTHENTICATION_REFUSALS: Record<number, string> = {
  11: 'the password mechanism is not supported',
  12: 'an authentication mechanism is required',
  13: 'authentication failed',
  14: 'authentication required (the connection has no password)',
};

/** A refusing AARE's error: one about authentication says so first. */
function aareError(aare: Aare, refusal: string): MmsConnectionError {
  const auth = aare.diagnostic?.source === 'service-user' ? AUTHENTICATION_REFUSALS[aare.diagnostic.code] : undefined;
  return new MmsConnectionError('association_refused', auth ? `the device refused the association: ${auth} (${refusal})` : refusal);
}

/** The error of a TSDU that ends the connect phase without an association. */
function refusalOf(p: PeeledTsdu): MmsConnectionError | undefined {
  if (p.session.kind === 'refuse') {
    const acse = p.acse?.kind === 'AARE' ? aareRefusal(p.acse) : undefined;
    if (acse) return aareError(p.acse as Aare, acse);
    return new MmsConnectionError('session_refused', `session refused: ${p.session.reasonText}`);
  }
  if (p.session.kind === 'abort') {
    const why =
      p.presentation?.kind === 'ARP'
        ? p.presentation.reasonText
        : p.acse?.kind === 'ABRT'
          ? `ACSE abort by ${p.acse.sourceText}`
          : 'no reason given';
    return new MmsConnectionError('aborted', `association aborted by the peer: ${why}`);
  }
  if (p.session.kind !== 'accept') return new MmsConnectionError('protocol_error', `session ${p.session.kind} where ACCEPT was expected`);
  if (p.presentation?.kind === 'CPA' && p.presentation.results.some((r) => r.result !== 0)) {
    return new MmsConnectionError(
      'association_refused',
      `presentation context refused: ${p.presentation.results.map((r) => r.resultText).join(', ')}`,
    );
  }
  if (p.acse?.kind !== 'AARE') return new MmsConnectionError('protocol_error', 'session ACCEPT without an AARE');
  const refusal = aareRefusal(p.acse);
  if (refusal) return aareError(p.acse, refusal);
  if (p.mms?.pdu === 'initiate-error') {
    return new MmsConnectionError(
      'association_refused',
      `MMS initiate refused: ${p.mms.error.text}`,
      MmsError.fromServiceError(p.mms.error, 'initiate-error'),
    );
  }
  if (p.mms?.pdu !== 'initiate-response') return new MmsConnectionError('protocol_error', 'AARE without an MMS initiate response');
  return undefined;
}

function negotiatedOf(p: PeeledTsdu, o: LinkOptions, tpduSize: number): Negotiated {
  if (p.mms?.pdu !== 'initiate-response') throw new Error('unreachable: checked by refusalOf');
  const r = p.mms;
  const out: Negotiated = {
    tpduSize,
    maxPduSize: Math.min(r.localDetail ?? o.initiate.localDetail ?? 65000, o.initiate.localDetail ?? 65000),
    maxOutstanding: Math.max(1, Math.min(r.maxServOutstandingCalling, o.initiate.maxServOutstandingCalling)),
    servicesSupported: r.servicesSupported,
  };
  if (r.nestingLevel !== undefined) out.nestingLevel = r.nestingLevel;
  return out;
}

function associationRequest(o: LinkOptions): Uint8Array {
  const s = o.selectors;
  const acse = {
    calledApTitle: dotted(s.calledApTitle) ?? '1.1.1.999.1',
    calledAeQualifier: s.calledAeQualifier ?? 12,
    callingApTitle: dotted(s.callingApTitle) ?? '1.1.1.999',
    callingAeQualifier: s.callingAeQualifier ?? 12,
    ...(o.password === undefined ? {} : { password: o.password }),
  };
  return buildAssociationRequest({
    sessionSelectors: {
      calling: selectorBytes(s.callingSsel, Uint8Array.of(0, 1)),
      called: selectorBytes(s.calledSsel, Uint8Array.of(0, 1)),
    },
    presentationSelectors: {
      calling: selectorBytes(s.callingPsel, Uint8Array.of(0, 0, 0, 1)),
      called: selectorBytes(s.calledPsel, Uint8Array.of(0, 0, 0, 1)),
    },
    acse,
    initiate: o.initiate,
  });
}

/** Opens TCP, COTP and the association; rejects with an {@link MmsConnectionError} and leaves no socket behind. */
export function connectLink(o: LinkOptions): Promise<{ link: IsoLink; negotiated: Negotiated }> {
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) return reject(new MmsConnectionError('cancelled', 'connect cancelled before it started'));
    let request: { cr: Uint8Array; aarq: Uint8Array };
    try {
      request = {
        cr: buildConnectionRequest({
          callingTsap: selectorBytes(o.selectors.callingTsel, Uint8Array.of(0, 1)),
          calledTsap: selectorBytes(o.selectors.calledTsel, Uint8Array.of(0, 1)),
          tpduSize: o.tpduSize,
        }),
        aarq: associationRequest(o),
      };
    } catch (e) {
      return reject(
        e instanceof MmsConnectionError
          ? e
          : new MmsConnectionError('connect_failed', `bad connect options: ${e instanceof Error ? e.message : e}`, e),
      );
    }
    const { socket, ready } = openTransport(o.host, o.port, o.tls);
    socket.setNoDelay(true);
    let settled = false;
    let phase: 'transport' | 'cotp' | 'association' = 'transport';
    const where = `${o.host}:${o.port}`;
    const finish = (error?: MmsConnectionError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (error) {
        link.fail(error);
        return reject(error);
      }
      resolve({ link, negotiated: negotiatedOf(accepted!, o, link.tpduSize) });
    };
    let accepted: PeeledTsdu | undefined;
    const link = new IsoLink(
      socket,
      {
        cotp(t) {
          if (t.kind !== 'CC') return finish(new MmsConnectionError('protocol_error', `COTP ${t.kind} where CC was expected`));
          link.tpduSize = Math.min(t.tpduSize ?? 128, o.tpduSize);
          // the association request is one TSDU like any other: cut it to the TPDU size just settled
          const aarq = decodeCotp(decodeTpkt(request.aarq));
          if (aarq.kind === 'DT') link.send(segmentData(aarq.data, link.tpduSize).map(encodeTpkt));
          phase = 'association';
        },
        tsdu(p) {
          const refusal = refusalOf(p);
          if (refusal) return finish(refusal);
          accepted = p;
          finish();
        },
        failure(e) {
          finish(connectFailure(e, o, phase, where));
        },
      },
      (o.initiate.localDetail ?? 65000) + 4096,
    );
    socket.once(ready, () => {
      phase = 'cotp';
      link.send([request.cr]);
    });
    const timer = setTimeout(
      () => finish(new MmsConnectionError('connect_timeout', `no association with ${where} within ${o.connectTimeoutMs} ms`)),
      o.connectTimeoutMs,
    );
    const onAbort = () => finish(new MmsConnectionError('cancelled', `connect to ${where} cancelled`));
    o.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What a failure of the connect phase means. A device that closes the connection in answer to the
 * association request refuses it without saying why: libiec61850 servers do so when authentication fails
 * (a wrong password, or none where one is required), so the error names the password.
 */
function connectFailure(e: MmsConnectionError, o: LinkOptions, phase: 'transport' | 'cotp' | 'association', where: string) {
  const tlsPhase = phase === 'transport' ? 'handshake' : phase === 'cotp' ? 'after' : 'later';
  const tls = o.tls ? tlsFailure(e.code === 'closed' ? undefined : e.cause, o.tls, tlsPhase) : undefined;
  if (tls) return new MmsConnectionError('tls_failed', tls, e.cause);
  const reset =
    e.code === 'closed' || (e.code === 'socket_error' && ['ECONNRESET', 'EPIPE'].includes((e.cause as NodeJS.ErrnoException)?.code ?? ''));
  if (phase === 'cotp' && reset && !o.tls) {
    return new MmsConnectionError(
      'connect_failed',
      `the device closed the connection in answer to the transport connection request (a device that expects TLS does so: MMS over TLS listens on ${MMS_TLS_PORT})`,
      e,
    );
  }
  if (phase === 'association' && reset) {
    return new MmsConnectionError(
      'association_refused',
      o.password === undefined
        ? 'the device refused the association: it closed the connection in answer to the association request (libiec61850 devices do so when they require a password; the connection has none)'
        : 'the device refused the association: authentication failed (it closed the connection in answer to the association request with the password)',
      e,
    );
  }
  return e.code === 'socket_error' ? new MmsConnectionError('connect_failed', `cannot connect to ${where}: ${e.message}`, e) : e;
}

/** Initiate parameters proposing `maxOutstanding` requests and `maxPduSize` octets. */
export function initiateFor(maxOutstanding: number, maxPduSize: number): InitiateParameters {
  return {
    ...DEFAULT_INITIATE,
    maxServOutstandingCalling: maxOutstanding,
    maxServOutstandingCalled: maxOutstanding,
    localDetail: maxPduSize,
  };
}
