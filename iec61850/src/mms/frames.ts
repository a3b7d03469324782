/**
 * Whole frames: builds what the client sends (connection request, association request, MMS data, release,
 * abort) through every layer, and peels a received frame down to its MMS PDU, saying which layer a frame
 * that carries no MMS PDU belongs to (CC, DR, REFUSE, AARE, RLRE, ABRT...).
 */
import { Buffer } from 'node:buffer';
import { decodeAcse, encodeAarq, encodeAbrt, encodeRlrq, type AarqOptions, type AcseApdu } from './acse.ts';
import { attempt, CodecError, type Layer } from './codec_error.ts';
import { decodeCotp, encodeConnectionRequest, encodeData, segmentData, type ConnectionRequestOptions, type CotpTpdu } from './cotp.ts';
import { DEFAULT_INITIATE, decodeMmsPdu, encodeMmsPdu, type InitiateParameters, type MmsPdu } from './mms_pdu.ts';
import {
  ACSE_CONTEXT_ID,
  decodeAbortPresentation,
  decodeConnectAccept,
  decodeConnectPresentation,
  decodeConnectReject,
  decodeUserData,
  encodeAbortPresentation,
  encodeConnectPresentation,
  encodeUserData,
  MMS_CONTEXT_ID,
  type Pdv,
  type PresentationAbort,
  type PresentationAccept,
  type PresentationConnect,
  type PresentationReject,
} from './presentation.ts';
import { decodeSpdu, encodeAbort, encodeConnect, encodeDataSpdu, encodeFinish, type SessionSpdu } from './session.ts';
import { decodeTpkt, encodeTpkt, TPKT_MAX_LENGTH } from './tpkt.ts';

/** Addressing and parameters of an association; every field defaults to what the captured client sends. */
export type AssociationOptions = {
  sessionSelectors?: { calling?: Uint8Array; called?: Uint8Array };
  presentationSelectors?: { calling?: Uint8Array; called?: Uint8Array };
  acse?: Omit<AarqOptions, 'userInformation'>;
  initiate?: InitiateParameters;
};

/** A presentation PDU as the session SPDU around it decides its type. */
export type PresentationPdu =
  | PresentationConnect
  | PresentationAccept
  | PresentationReject
  | PresentationAbort
  | { kind: 'TD'; userData: Pdv[] };

/** A session data unit peeled layer by layer; `top` names the highest layer present. */
export type PeeledTsdu = { top: Layer; session: SessionSpdu; presentation?: PresentationPdu; acse?: AcseApdu; mms?: MmsPdu };

/** A frame peeled layer by layer. A DT without EOT stops at COTP: its TSDU needs the following DTs. */
export type PeeledFrame = {
  top: Layer;
  cotp: CotpTpdu;
  session?: SessionSpdu;
  presentation?: PresentationPdu;
  acse?: AcseApdu;
  mms?: MmsPdu;
};

/** The association request the captured client sends (AP titles 1.1.1.999.1 / 1.1.1.999, AE qualifiers 12). */
export const CAPTURED_ACSE: Omit<AarqOptions, 'userInformation'> = {
  calledApTitle: '1.1.1.999.1',
  calledAeQualifier: 12,
  callingApTitle: '1.1.1.999',
  callingAeQualifier: 12,
};

/** The TPKT frame of a COTP connection request (TSAP selectors 0001 by default, as captured). */
export function buildConnectionRequest(o: Partial<ConnectionRequestOptions> = {}): Uint8Array {
  return encodeTpkt(encodeConnectionRequest({ srcRef: 1, callingTsap: Uint8Array.of(0, 1), calledTsap: Uint8Array.of(0, 1), ...o }));
}

/** The TPKT frame opening the association: COTP DT, session CONNECT, presentation CP, ACSE AARQ, MMS initiate. */
export function buildAssociationRequest(o: AssociationOptions = {}): Uint8Array {
  const initiate = encodeMmsPdu({ pdu: 'initiate-request', ...(o.initiate ?? DEFAULT_INITIATE) });
  const aarq = encodeAarq({ ...(o.acse ?? CAPTURED_ACSE), userInformation: initiate });
  const cp = encodeConnectPresentation({
    callingSelector: o.presentationSelectors?.calling,
    calledSelector: o.presentationSelectors?.called,
    userData: aarq,
  });
  const spdu = encodeConnect({ callingSelector: o.sessionSelectors?.calling, calledSelector: o.sessionSelectors?.called, userData: cp });
  return encodeTpkt(encodeData(spdu));
}

/** The TPKT frames carrying one MMS PDU, cut into DTs of at most `tpduSize` octets (as negotiated in CC). */
export function buildMmsFrames(pdu: MmsPdu, tpduSize = 8192): Uint8Array[] {
  const tsdu = encodeDataSpdu(encodeUserData({ contextId: MMS_CONTEXT_ID, data: encodeMmsPdu(pdu) }));
  return segmentData(tsdu, tpduSize).map(encodeTpkt);
}

/** Octets of a BER definite length for `n` content octets. */
const lengthOctets = (n: number): number => (n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 4);

/** Writes a BER identifier below 31 and the length of `n` content octets at `at`; returns where content begins. */
function writeHeader(out: Uint8Array, at: number, identifier: number, n: number): number {
  out[at++] = identifier;
  const extra = lengthOctets(n) - 1;
  if (extra === 0) out[at++] = n;
  else {
    out[at++] = 0x80 | extra;
    for (let shift = 8 * (extra - 1); shift >= 0; shift -= 8) out[at++] = (n >>> shift) & 0xff;
  }
  return at;
}

/**
 * A TPKT frame for an MMS PDU of `pduLength` octets whose TSDU fits a single DT of `tpduSize`, every header
 * written and the PDU's octets left to write at its end; undefined when the TSDU needs several DTs.
 */
function dataFrameFor(pduLength: number, tpduSize: number): Uint8Array | undefined {
  const pdv = 3 + 1 + lengthOctets(pduLength) + pduLength; // context id, then [C0] around the PDU
  const list = 1 + lengthOctets(pdv) + pdv; // the PDV list (SEQUENCE)
  const ppdu = 1 + lengthOctets(list) + list; // fully-encoded user data ([A1])
  const tsdu = 4 + ppdu; // session GIVE-TOKENS and DATA TRANSFER, both empty
  const length = 4 + 3 + tsdu;
  if (tsdu + 3 > tpduSize || length > TPKT_MAX_LENGTH) return undefined;
  const out = Buffer.allocUnsafe(length);
  out.set([3, 0, length >> 8, length & 0xff, 2, 0xf0, 0x80, 1, 0, 1, 0]);
  let at = writeHeader(out, 11, 0x61, list);
  at = writeHeader(out, at, 0x30, pdv);
  out[at++] = 2;
  out[at++] = 1;
  out[at++] = MMS_CONTEXT_ID;
  writeHeader(out, at, 0xa0, pduLength);
  return out;
}

/**
 * The one TPKT frame carrying an MMS PDU whose TSDU fits a single DT of `tpduSize` (a request's usual
 * case), built in one allocation from a pooled buffer; the same octets as {@link buildMmsFrames} builds
 * layer by layer. Undefined when the TSDU needs several DTs. Every confirmed request goes through here,
 * so sparing the copies and short-lived arrays of the layered encoders is what keeps a read cheap.
 */
export function buildMmsDataFrame(pdu: Uint8Array, tpduSize: number): Uint8Array | undefined {
  const out = dataFrameFor(pdu.length, tpduSize);
  out?.set(pdu, out.length - pdu.length);
  return out;
}

/** Content octets of a non-negative invoke id as the shortest two's-complement INTEGER (as `encodeInteger` writes it). */
function invokeIdOctets(invokeId: number): number {
  let size = 1;
  while (size < 5 && invokeId >= 2 ** (8 * size - 1)) size++;
  return size;
}

/** Octets of the Confirmed-RequestPDU of `invokeId` around a service request of `serviceLength` octets. */
export function confirmedRequestLength(invokeId: number, serviceLength: number): number {
  const content = 2 + invokeIdOctets(invokeId) + serviceLength;
  return 1 + lengthOctets(content) + content;
}

/**
 * The one TPKT frame of a Confirmed-RequestPDU: `invokeId` and a service request already encoded (a read
 * kept for polling), written straight into the frame, in one allocation; the same octets as
 * `buildMmsDataFrame(encodeConfirmedRequestPdu(invokeId, service), tpduSize)`. Undefined when the TSDU needs
 * several DTs.
 */
export function buildConfirmedRequestFrame(invokeId: number, service: Uint8Array, tpduSize: number): Uint8Array | undefined {
  const idOctets = invokeIdOctets(invokeId);
  const content = 2 + idOctets + service.length;
  const pduLength = 1 + lengthOctets(content) + content;
  const out = dataFrameFor(pduLength, tpduSize);
  if (out === undefined) return undefined;
  let at = writeHeader(out, out.length - pduLength, 0xa0, content);
  out[at++] = 2;
  out[at++] = idOctets;
  for (let i = idOctets - 1, n = invokeId; i >= 0; i--, n = Math.floor(n / 256)) out[at + i] = n % 256;
  at += idOctets;
  if (service.length > 32) out.set(service, at);
  else for (let i = 0; i < service.length; i++) out[at + i] = service[i];
  return out;
}

/** The TPKT frame releasing the association: session FINISH carrying an ACSE RLRQ (normal). */
export function buildReleaseRequest(): Uint8Array {
  return encodeTpkt(encodeData(encodeFinish(encodeUserData({ contextId: ACSE_CONTEXT_ID, data: encodeRlrq() }))));
}

/** The TPKT frame aborting the association: session ABORT, presentation ARU, ACSE ABRT. */
export function buildAbort(): Uint8Array {
  return encodeTpkt(encodeData(encodeAbort(encodeAbortPresentation(encodeAbrt()))));
}

/** The ACSE or MMS PDU of the first presentation data value. */
function upper(pdvs: Pdv[]): { acse?: AcseApdu; mms?: MmsPdu } {
  const pdv = pdvs[0];
  if (pdv === undefined) return {};
  if (pdv.contextId === MMS_CONTEXT_ID) return { mms: decodeMmsPdu(pdv.data) };
  if (pdv.contextId !== ACSE_CONTEXT_ID)
    throw new CodecError('presentation', 'unknown_context', `presentation context ${pdv.contextId} was not proposed`);
  const acse = decodeAcse(pdv.data);
  const info = acse.userInformation;
  return info === undefined ? { acse } : { acse, mms: decodeMmsPdu(info) };
}

function presentationOf(session: SessionSpdu): PresentationPdu | undefined {
  if (!('userData' in session) || session.userData === undefined) return undefined;
  switch (session.kind) {
    case 'connect':
      return decodeConnectPresentation(session.userData);
    case 'accept':
      return decodeConnectAccept(session.userData);
    case 'refuse':
      return decodeConnectReject(session.userData);
    case 'abort':
      return decodeAbortPresentation(session.userData);
    default:
      return { kind: 'TD', userData: decodeUserData(session.userData) };
  }
}

/** Peels a whole TSDU (after DT reassembly); throws {@link CodecError} when a layer refuses it. */
export function peelTsdu(tsdu: Uint8Array): PeeledTsdu {
  const session = decodeSpdu(tsdu);
  const presentation = presentationOf(session);
  if (presentation === undefined) return { top: 'session', session };
  const pdvs = 'userData' in presentation ? presentation.userData : [];
  const { acse, mms } = upper(pdvs);
  const top: Layer = mms ? 'mms' : acse ? 'acse' : 'presentation';
  const out: PeeledTsdu = { top, session, presentation };
  if (acse) out.acse = acse;
  if (mms) out.mms = mms;
  return out;
}

/**
 * Peels one whole TPKT frame; a refusal at any layer comes back as the error, never thrown. A TSDU sent in
 * several DTs is not joined here: feed the DTs to a `createDtReassembler()` and the TSDU to {@link peelTsdu}.
 */
export function peelFrame(frame: Uint8Array): { ok: true; value: PeeledFrame } | { ok: false; error: CodecError } {
  return attempt(() => {
    const cotp = decodeCotp(decodeTpkt(frame));
    if (cotp.kind !== 'DT' || !cotp.eot) return { top: 'cotp', cotp };
    return { ...peelTsdu(cotp.data), cotp };
  });
}
