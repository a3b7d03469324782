/**
 * The responder side of an MMS association: COTP CC, reading the client's CONNECT/CP/AARQ/initiate, and
 * the answers: session ACCEPT with a CPA carrying the AARE and the MMS initiate response, session REFUSE
 * with a CPR carrying a rejecting AARE, and session DISCONNECT carrying the RLRE of a release. Frames and
 * field order follow the captured libiec61850 server.
 */
import {
  ACSE_ABSTRACT_SYNTAX,
  ACSE_CONTEXT_ID,
  BER_TRANSFER_SYNTAX,
  CodecError,
  concat,
  cons,
  encodeCotpData,
  encodeDataSpdu,
  encodeTpkt,
  encodeUserData,
  intTlv,
  MMS_ABSTRACT_SYNTAX,
  MMS_APPLICATION_CONTEXT,
  MMS_CONTEXT_ID,
  oidTlv,
  peelTsdu,
  prim,
  segmentData,
  type Aarq,
  type CotpConnect,
  type InitiateParameters,
  type MmsPdu,
  type PresentationConnect,
  type PresentationContext,
  type SessionConnect,
} from '@scada/iec61850/wire';
import { encodeServerPdu } from './server_pdus.ts';

/** What a server reads out of the frame that opens an association. */
export type AssociationRequest = {
  session: SessionConnect;
  presentation: PresentationConnect;
  aarq: Aarq;
  initiate: InitiateParameters;
};

/** What a server answers an association request with. */
export type AssociationAnswer = {
  request: AssociationRequest;
  /** The negotiated initiate response parameters (see {@link negotiateInitiate}). */
  initiate: InitiateParameters;
  /** Largest TPDU the CC settled, to cut the answer into DTs. */
  tpduSize: number;
};

const SI_ACCEPT = 14;
const SI_REFUSE = 12;
const SI_DISCONNECT = 10;
const EMPTY = new Uint8Array(0);

/** Services this responder supports, as ISO 9506 numbers the bits of ServiceSupportOptions. */
const SUPPORTED_SERVICES = [1, 2, 4, 5, 6, 12, 65, 72, 73, 74, 77, 79, 83];
/** Parameter CBB: str1, str2, vnam, valt, vlis (the ones IEC 61850 needs), as the captured server. */
const PARAMETER_CBB = { bitLength: 11, bytes: Uint8Array.of(0xf1, 0x00) };

function sessionLength(n: number): Uint8Array {
  if (n > 0xffff) throw new CodecError('session', 'bad_length', `a session length of ${n}`);
  return n < 255 ? Uint8Array.of(n) : Uint8Array.of(255, n >> 8, n & 0xff);
}

function unit(code: number, value: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(code), sessionLength(value.length), value);
}

function spdu(si: number, ...units: Uint8Array[]): Uint8Array {
  const body = concat(...units);
  return concat(Uint8Array.of(si), sessionLength(body.length), body);
}

/** The CC TPDU answering a CR: the client's reference echoed, the TPDU size and TSAPs it proposed. */
export function encodeConnectionConfirm(cr: CotpConnect, srcRef: number, tpduSize: number): Uint8Array {
  const params = concat(
    Uint8Array.of(0xc0, 1, Math.log2(tpduSize)),
    cr.calledTsap ? concat(Uint8Array.of(0xc2, cr.calledTsap.length), cr.calledTsap) : EMPTY,
    cr.callingTsap ? concat(Uint8Array.of(0xc1, cr.callingTsap.length), cr.callingTsap) : EMPTY,
  );
  const fixed = Uint8Array.of(0xd0, (cr.srcRef >> 8) & 0xff, cr.srcRef & 0xff, (srcRef >> 8) & 0xff, srcRef & 0xff, 0);
  return concat(Uint8Array.of(fixed.length + params.length), fixed, params);
}

/** The TPDU size a CC settles: the proposal, at most 8192; class 0 defaults to 128 without one. */
export function settleTpduSize(cr: CotpConnect): number {
  return Math.min(cr.tpduSize ?? 128, 8192);
}

/** Reads CONNECT → CP → AARQ → initiate request from a whole TSDU; a missing layer is a {@link CodecError}. */
export function decodeAssociationRequest(tsdu: Uint8Array): AssociationRequest {
  const peeled = peelTsdu(tsdu);
  const fail = (code: string, message: string) => new CodecError('acse', code, message);
  if (peeled.session.kind !== 'connect')
    throw new CodecError('session', 'unexpected_spdu', `${peeled.session.kind} where CONNECT is expected`);
  if (peeled.presentation?.kind !== 'CP') throw new CodecError('presentation', 'unexpected_ppdu', 'CONNECT without a CP PPDU');
  if (peeled.acse?.kind !== 'AARQ') throw fail('unexpected_apdu', 'CP without an AARQ');
  if (peeled.mms?.pdu !== 'initiate-request') throw fail('bad_user_information', 'AARQ without an MMS initiate request');
  const { pdu: _pdu, ...initiate } = peeled.mms;
  return { session: peeled.session, presentation: peeled.presentation, aarq: peeled.acse, initiate };
}

/** The initiate response: the smaller of each proposal and this server's limits, version 1. */
export function negotiateInitiate(
  req: InitiateParameters,
  limits: { maxPduSize: number; maxOutstanding: number; nesting: number },
): InitiateParameters {
  const bits = new Uint8Array(11);
  for (const n of SUPPORTED_SERVICES) bits[n >> 3] |= 0x80 >> (n & 7);
  return {
    localDetail: Math.min(req.localDetail ?? limits.maxPduSize, limits.maxPduSize),
    maxServOutstandingCalling: Math.min(req.maxServOutstandingCalling, limits.maxOutstanding),
    maxServOutstandingCalled: Math.min(req.maxServOutstandingCalled, limits.maxOutstanding),
    nestingLevel: Math.min(req.nestingLevel ?? limits.nesting, limits.nesting),
    version: 1,
    parameterCbb: PARAMETER_CBB,
    servicesSupported: { bitLength: 85, bytes: bits },
  };
}

function contextResult(c: PresentationContext): Uint8Array {
  const known = c.abstractSyntax === ACSE_ABSTRACT_SYNTAX || c.abstractSyntax === MMS_ABSTRACT_SYNTAX;
  const ber = c.transferSyntaxes.includes(BER_TRANSFER_SYNTAX);
  if (known && ber) return cons('universal', 16, intTlv('context', 0, 0), oidTlv('context', 1, BER_TRANSFER_SYNTAX));
  // provider rejection: abstract syntax (1) or transfer syntaxes (2) not supported
  return cons('universal', 16, intTlv('context', 0, 2), intTlv('context', 2, known ? 2 : 1));
}

/** An AARE; `initiate` is the encoded MMS initiate response, absent in a rejection. */
export function encodeAare(result: 0 | 1 | 2, diagnostic: number, initiate?: Uint8Array): Uint8Array {
  return cons(
    'application',
    1,
    cons('context', 1, oidTlv('universal', 6, MMS_APPLICATION_CONTEXT)),
    cons('context', 2, intTlv('universal', 2, result)),
    cons('context', 3, cons('context', 1, intTlv('universal', 2, diagnostic))),
    initiate === undefined
      ? EMPTY
      : cons('context', 30, cons('universal', 8, intTlv('universal', 2, MMS_CONTEXT_ID), cons('context', 0, initiate))),
  );
}

function acceptedSelectors(req: AssociationRequest): { session: Uint8Array; presentation: Uint8Array } {
  return {
    session: req.session.calledSelector ?? Uint8Array.of(0, 1),
    presentation: req.presentation.calledSelector ?? Uint8Array.of(0, 0, 0, 1),
  };
}

function frames(tsdu: Uint8Array, tpduSize: number): Uint8Array[] {
  return segmentData(tsdu, tpduSize).map(encodeTpkt);
}

/** The frames accepting an association: session ACCEPT, CPA, AARE (accepted), MMS initiate response. */
export function buildAssociationAccept(a: AssociationAnswer): Uint8Array[] {
  const initiate = encodeServerPdu({ pdu: 'initiate-response', ...a.initiate });
  const selectors = acceptedSelectors(a.request);
  const cpa = cons(
    'universal',
    17,
    cons('context', 0, intTlv('context', 0, 1)),
    cons(
      'context',
      2,
      prim('context', 3, selectors.presentation),
      cons('context', 5, ...a.request.presentation.contexts.map(contextResult)),
      encodeUserData({ contextId: ACSE_CONTEXT_ID, data: encodeAare(0, 0, initiate) }),
    ),
  );
  const item = concat(unit(19, Uint8Array.of(0)), unit(22, Uint8Array.of(2)));
  const accept = spdu(SI_ACCEPT, unit(5, item), unit(20, Uint8Array.of(0, 2)), unit(52, selectors.session), unit(193, cpa));
  return frames(accept, a.tpduSize);
}

/**
 * The frames refusing an association: session REFUSE (reason 2, with user data), CPR, AARE rejected
 * (permanent) with an ACSE service-user diagnostic: no reason given (1) by default, authentication failure
 * (13) or authentication required (14).
 */
export function buildAssociationRefusal(request: AssociationRequest, tpduSize: number, diagnostic = 1): Uint8Array[] {
  const selectors = acceptedSelectors(request);
  const cpr = cons(
    'universal',
    16,
    prim('context', 3, selectors.presentation),
    cons('context', 5, ...request.presentation.contexts.map(contextResult)),
    encodeUserData({ contextId: ACSE_CONTEXT_ID, data: encodeAare(1, diagnostic) }),
  );
  return frames(spdu(SI_REFUSE, unit(50, concat(Uint8Array.of(2), cpr))), tpduSize);
}

/** The frame answering a release: session DISCONNECT carrying an ACSE RLRE (normal). */
export function buildReleaseResponse(): Uint8Array {
  const rlre = cons('application', 3, intTlv('context', 0, 0));
  return encodeTpkt(encodeCotpData(spdu(SI_DISCONNECT, unit(193, encodeUserData({ contextId: ACSE_CONTEXT_ID, data: rlre })))));
}

/** The frames carrying one MMS PDU a server sends, cut into DTs of at most `tpduSize` octets. */
export function buildServerMmsFrames(pdu: MmsPdu, tpduSize: number): Uint8Array[] {
  return frames(encodeDataSpdu(encodeUserData({ contextId: MMS_CONTEXT_ID, data: encodeServerPdu(pdu) })), tpduSize);
}
