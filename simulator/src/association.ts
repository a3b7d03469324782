/**
 * One client connection of the simulator, layer by layer: TPKT deframing of partial and coalesced TCP
 * segments, COTP CR → CC and DT reassembly, the association (CONNECT/CP/AARQ → ACCEPT/CPA/AARE, or a
 * refusal), MMS requests answered in order, conclude, release (FINISH → DISCONNECT) and abort. Anything
 * malformed closes this association only.
 */
import type { Socket } from 'node:net';
import {
  CodecError,
  createDtReassembler,
  createTpktDeframer,
  decodeCotp,
  decodeMmsPdu,
  decodeSpdu,
  decodeTpkt,
  decodeUserData,
  encodeTpkt,
  MMS_CONTEXT_ID,
  type ConfirmedRequest,
  type MmsPdu,
} from '@scada/iec61850/wire';
import {
  buildAssociationAccept,
  buildAssociationRefusal,
  buildReleaseResponse,
  buildServerMmsFrames,
  decodeAssociationRequest,
  encodeConnectionConfirm,
  negotiateInitiate,
  settleTpduSize,
  type AssociationRequest,
} from './server_association.ts';
import { confirmedRequestInvokeId } from './server_pdus.ts';
import type { ReportSink } from './rcb_model.ts';
import { serve, type ServiceContext } from './services.ts';

/** Faults a simulator can be told to show. */
export type Faults = {
  /** Accept TCP connections and never answer. */
  silent?: boolean;
  /** Refuse every association (AARE rejected-permanent). */
  refuseAssociation?: boolean;
  /** Drop the connection halfway through the answer to the n-th confirmed request of an association. */
  closeAfterRequests?: number;
  /** Answer a request for an unknown service with a Reject PDU (else with a confirmed error). */
  rejectUnknownServices?: boolean;
  /** Refuse every control (AddCause blocked-by-process), with LastApplError. */
  refuseControls?: boolean;
  /** Refuse writes of these attributes (`LD/LN$FC$DO$DA`, an array element's `LD/LN$SP$DO$arr(2)$DA`) with this DataAccessError code (e.g. 11 object-value-invalid, 2 temporarily-unavailable). */
  refuseWrites?: Record<string, number>;
  /** Accept enhanced-security operates, then end them with a negative CommandTermination of this AddCause. */
  negativeTermination?: number;
  /** Answer every confirmed request this many milliseconds after it arrived, as a slow device does (default: at once). */
  answerDelayMs?: number;
  /** Send CommandTermination this many milliseconds after the operate (default: at once). */
  terminationDelayMs?: number;
  /** Entries a buffered block keeps while disabled (default 1000); past it the oldest go and the next report says BufOvfl. */
  bufferEntries?: number;
  /** Refuse writes of a report control block's RptID (object-access-denied), as devices with fixed RptIDs do. */
  fixedRptIds?: boolean;
  /** Refuse FileOpen of these files (`COMTRADE/DR_0001.CFG`) with this FileProblem code (6 file-access-denied, 2 file-busy). */
  refuseFiles?: Record<string, number>;
  /** Refuse FileDelete of these files with this FileProblem code (6 file-access-denied), as libiec61850's `server_example_files` refuses `IEDSERVER.BIN`. */
  refuseFileDeletes?: Record<string, number>;
  /** Keep FileRead answers back while true, as a device reading slowly from its flash; each leaves once it is false again. */
  holdFileReads?: boolean;
  /** Refuse every ReadJournal of a log that exists (access: object-access-denied). */
  refuseJournals?: boolean;
  /** A selection of a setting group for edit ends after this many ms (default: the SCL's `resvTms` seconds, else 300 s as libiec61850). */
  editReservationMs?: number;
};

/** What an association tells the simulator. */
export type AssociationEvents = {
  /** `refusal` says why an association was refused: `fault` (refuseAssociation) or `authentication`. */
  association: { id: number; accepted: boolean; refusal?: 'fault' | 'authentication' };
  request: { id: number; invokeId: number; request: ConfirmedRequest };
  protocolError: { id: number; message: string };
};

/**
 * ACSE password authentication: an association is accepted only with this password (mechanism 2.2.3.1).
 * Another password, or none, is refused with an AARE rejected-permanent whose diagnostic says authentication
 * failure (or authentication required), or, with `onFailure: 'close'`, by closing the connection without an
 * answer, as libiec61850 servers do.
 */
export type Authentication = { password: string; onFailure?: 'refuse' | 'close' };

/** ACSE service-user diagnostics of a refused authentication. */
const AUTHENTICATION_FAILURE = 13;
const AUTHENTICATION_REQUIRED = 14;

/** What an association needs from its simulator. */
export type AssociationContext = {
  services: ServiceContext;
  faults: Faults;
  authentication?: Authentication;
  limits: { maxPduSize: number; maxOutstanding: number; nesting: number };
  emit<K extends keyof AssociationEvents>(event: K, payload: AssociationEvents[K]): void;
};

type State = 'transport' | 'session' | 'open' | 'closed';

/** One connection from a client; also the sink its reports and control terminations go to. */
export class Association implements ReportSink {
  readonly id: number;
  readonly #socket: Socket;
  readonly #ctx: AssociationContext;
  readonly #deframer = createTpktDeframer();
  readonly #reassembler = createDtReassembler();
  #state: State = 'transport';
  #tpduSize = 8192;
  #pduSize: number;
  #requests = 0;

  constructor(id: number, socket: Socket, ctx: AssociationContext) {
    this.id = id;
    this.#socket = socket;
    this.#ctx = ctx;
    this.#pduSize = ctx.limits.maxPduSize;
    socket.on('error', () => undefined);
    // as devices answer: an answer cut into several TPDUs leaves at once, not after the client's delayed ACK
    socket.setNoDelay(true);
    socket.on('close', () => {
      this.#state = 'closed';
    });
    if (!ctx.faults.silent) socket.on('data', (chunk: Buffer) => this.#receive(chunk));
  }

  /** The largest MMS PDU of this association: the smaller of the client's proposal and the device's limit. */
  get pduSize(): number {
    return this.#pduSize;
  }

  /** True once the association is accepted and not closed. */
  get open(): boolean {
    return this.#state === 'open';
  }

  /** Sends one MMS PDU (reports, terminations); dropped once the connection is closed. */
  send(pdu: MmsPdu): void {
    if (this.#state !== 'open' || this.#socket.destroyed) return;
    for (const frame of buildServerMmsFrames(pdu, this.#tpduSize)) this.#socket.write(frame);
  }

  /** Closes the TCP connection at once. */
  close(): void {
    this.#state = 'closed';
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    if (this.#state === 'closed') return;
    try {
      for (const frame of this.#deframer.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))) {
        // an earlier frame of the same segment may have closed the association
        if (!this.#socket.writable) return;
        this.#frame(frame);
      }
    } catch (e) {
      // a malformed or unexpected frame ends this association, never the simulator
      this.#ctx.emit('protocolError', { id: this.id, message: e instanceof Error ? e.message : String(e) });
      this.close();
    }
  }

  #frame(frame: Uint8Array): void {
    const tpdu = decodeCotp(decodeTpkt(frame));
    if (tpdu.kind === 'CR' && this.#state === 'transport') {
      this.#tpduSize = settleTpduSize(tpdu);
      this.#socket.write(encodeTpkt(encodeConnectionConfirm(tpdu, 1, this.#tpduSize)));
      this.#state = 'session';
      return;
    }
    if (tpdu.kind === 'DR') return this.close();
    if (tpdu.kind !== 'DT' || this.#state === 'transport')
      throw new CodecError('cotp', 'unexpected_tpdu', `${tpdu.kind} in state ${this.#state}`);
    const tsdu = this.#reassembler.push(tpdu);
    if (tsdu === undefined) return;
    if (this.#state === 'session') this.#associate(tsdu);
    else this.#session(tsdu);
  }

  #associate(tsdu: Uint8Array): void {
    const request = decodeAssociationRequest(tsdu);
    if (this.#ctx.faults.refuseAssociation) return this.#refuse(request, 1, 'fault');
    const auth = this.#ctx.authentication;
    if (auth && request.aarq.password !== auth.password) {
      if (auth.onFailure === 'close') {
        this.#ctx.emit('association', { id: this.id, accepted: false, refusal: 'authentication' });
        this.#state = 'closed';
        this.#socket.end();
        return;
      }
      return this.#refuse(
        request,
        request.aarq.password === undefined ? AUTHENTICATION_REQUIRED : AUTHENTICATION_FAILURE,
        'authentication',
      );
    }
    const initiate = negotiateInitiate(request.initiate, this.#ctx.limits);
    this.#pduSize = initiate.localDetail ?? this.#pduSize;
    for (const frame of buildAssociationAccept({ request, initiate, tpduSize: this.#tpduSize })) this.#socket.write(frame);
    this.#state = 'open';
    this.#ctx.emit('association', { id: this.id, accepted: true });
  }

  #refuse(request: AssociationRequest, diagnostic: number, refusal: 'fault' | 'authentication'): void {
    this.#ctx.emit('association', { id: this.id, accepted: false, refusal });
    for (const frame of buildAssociationRefusal(request, this.#tpduSize, diagnostic)) this.#socket.write(frame);
    this.#state = 'closed';
    this.#socket.end();
  }

  #session(tsdu: Uint8Array): void {
    const spdu = decodeSpdu(tsdu);
    if (spdu.kind === 'finish') {
      this.#socket.write(buildReleaseResponse());
      this.#state = 'closed';
      this.#socket.end();
      return;
    }
    if (spdu.kind === 'abort') return this.close();
    if (spdu.kind !== 'data') throw new CodecError('session', 'unexpected_spdu', `${spdu.kind} on an open association`);
    const pdv = decodeUserData(spdu.userData).find((p) => p.contextId === MMS_CONTEXT_ID);
    if (!pdv) throw new CodecError('presentation', 'unknown_context', 'data outside the MMS presentation context');
    this.#mms(pdv.data);
  }

  #mms(bytes: Uint8Array): void {
    let pdu: MmsPdu;
    try {
      pdu = decodeMmsPdu(bytes);
    } catch (e) {
      const invokeId = confirmedRequestInvokeId(bytes);
      const unknown = e instanceof CodecError && (e.code === 'unsupported_service' || e.code === 'unknown_tag');
      if (invokeId === undefined || !unknown) throw e;
      if (this.#cut()) return;
      if (this.#ctx.faults.rejectUnknownServices)
        this.send({ pdu: 'reject', invokeId, reason: { pduType: 'confirmed-request', code: 1, text: 'unrecognized-service' } });
      else this.send({ pdu: 'confirmed-error', invokeId, error: { errorClass: 'service', code: 0, text: 'service not supported' } });
      return;
    }
    switch (pdu.pdu) {
      case 'confirmed-request': {
        this.#ctx.emit('request', { id: this.id, invokeId: pdu.invokeId, request: pdu.request });
        const outcome = serve(this.#ctx.services, this, pdu.request);
        const answer: MmsPdu = outcome.ok
          ? { pdu: 'confirmed-response', invokeId: pdu.invokeId, response: outcome.response }
          : { pdu: 'confirmed-error', invokeId: pdu.invokeId, error: { ...outcome.error, text: '' } };
        if (this.#cut(answer)) return;
        const delay = this.#ctx.faults.answerDelayMs ?? 0;
        if (delay > 0) setTimeout(() => this.send(answer), delay);
        else if (pdu.request.service === 'fileRead') this.#sendUnheld(answer);
        else this.send(answer);
        return;
      }
      case 'conclude-request':
        this.send({ pdu: 'conclude-response' });
        return;
      case 'cancel-request':
        this.send({ pdu: 'cancel-response', invokeId: pdu.invokeId });
        return;
      default:
        this.send({ pdu: 'reject', reason: { pduType: 'pdu-error', code: 1, text: 'invalid-pdu' } });
    }
  }

  /** Sends a FileRead's answer once `holdFileReads` is off (looked at every 10 ms while it is on). */
  #sendUnheld(answer: MmsPdu): void {
    if (this.#state === 'closed') return;
    if (this.#ctx.faults.holdFileReads) setTimeout(() => this.#sendUnheld(answer), 10);
    else this.send(answer);
  }

  /** Counts a confirmed request; on the n-th of `closeAfterRequests`, sends half its answer and drops the connection. */
  #cut(answer?: MmsPdu): boolean {
    this.#requests++;
    if (this.#ctx.faults.closeAfterRequests === undefined || this.#requests < this.#ctx.faults.closeAfterRequests) return false;
    const frame = answer ? buildServerMmsFrames(answer, this.#tpduSize)[0] : undefined;
    this.#state = 'closed';
    if (frame) this.#socket.end(frame.subarray(0, Math.max(1, frame.length >> 1)));
    else this.#socket.destroy();
    return true;
  }
}
