/**
 * ISO 8823 presentation, normal mode, BER transfer syntax only: the CP PPDU that opens the association
 * (ACSE as context 1, MMS as context 3), CPA and CPR answers, fully-encoded user data (PDV lists) and the
 * ARU/ARP aborts.
 */
import { childrenOf, cons, expectTag, isTag, onlyChildOf, prim, primitiveOf, readSingle, tagName, type Tlv } from './ber.ts';
import { intOf, intTlv, oidOf, oidTlv } from './ber_fields.ts';
import { CodecError } from './codec_error.ts';

/** Context id the client gives ACSE. */
export const ACSE_CONTEXT_ID = 1;
/** Context id the client gives MMS. */
export const MMS_CONTEXT_ID = 3;
/** ACSE abstract syntax (joint-iso-itu-t association-control abstract-syntax). */
export const ACSE_ABSTRACT_SYNTAX = '2.2.1.0.1';
/** MMS abstract syntax (iso standard 9506 part 2 mms-abstract-syntax-version1). */
export const MMS_ABSTRACT_SYNTAX = '1.0.9506.2.1';
/** The basic encoding rules transfer syntax. */
export const BER_TRANSFER_SYNTAX = '2.1.1';

/** A proposed presentation context. */
export type PresentationContext = { id: number; abstractSyntax: string; transferSyntaxes: string[] };

/** One presentation data value: the context it belongs to and the encoded value (a whole TLV for single-ASN1-type). */
export type Pdv = { contextId: number; transferSyntax?: string; data: Uint8Array };

/** The responder's verdict on one proposed context, in proposal order. */
export type ContextResult = { result: number; resultText: string; transferSyntax?: string; providerReason?: number };

/** A CP PPDU (what the client sends; decoded for checks and tests). */
export type PresentationConnect = {
  kind: 'CP';
  callingSelector?: Uint8Array;
  calledSelector?: Uint8Array;
  contexts: PresentationContext[];
  userData: Pdv[];
};

/** A CPA PPDU. */
export type PresentationAccept = { kind: 'CPA'; respondingSelector?: Uint8Array; results: ContextResult[]; userData: Pdv[] };

/** A CPR PPDU. */
export type PresentationReject = {
  kind: 'CPR';
  respondingSelector?: Uint8Array;
  results: ContextResult[];
  providerReason?: number;
  reasonText: string;
  userData: Pdv[];
};

/** An abort: from the peer user (ARU, normally carrying an ACSE ABRT) or from the peer provider (ARP). */
export type PresentationAbort = { kind: 'ARU'; userData: Pdv[] } | { kind: 'ARP'; reason?: number; reasonText: string; eventId?: number };

/** What the client puts in a CP. */
export type ConnectPresentationOptions = {
  callingSelector?: Uint8Array;
  calledSelector?: Uint8Array;
  /** Defaults to ACSE (1) and MMS (3), both in BER. */
  contexts?: PresentationContext[];
  /** The encoded ACSE AARQ, sent in context {@link ACSE_CONTEXT_ID}. */
  userData: Uint8Array;
};

/** The contexts an MMS client proposes. */
export const DEFAULT_CONTEXTS: readonly PresentationContext[] = [
  { id: ACSE_CONTEXT_ID, abstractSyntax: ACSE_ABSTRACT_SYNTAX, transferSyntaxes: [BER_TRANSFER_SYNTAX] },
  { id: MMS_CONTEXT_ID, abstractSyntax: MMS_ABSTRACT_SYNTAX, transferSyntaxes: [BER_TRANSFER_SYNTAX] },
];

const RESULTS = ['acceptance', 'user-rejection', 'provider-rejection'];
const PROVIDER_REASONS = [
  'reason not specified',
  'temporary congestion',
  'local limit exceeded',
  'called presentation address unknown',
  'protocol version not supported',
  'default context not supported',
  'user data not readable',
  'no PSAP available',
];
const ABORT_REASONS = [
  'reason not specified',
  'unrecognized PPDU',
  'unexpected PPDU',
  'unexpected session service primitive',
  'unrecognized PPDU parameter',
  'unexpected PPDU parameter',
  'invalid PPDU parameter value',
];
const NORMAL_MODE = 1;

function presentationError(code: string, message: string): CodecError {
  return new CodecError('presentation', code, message);
}

/** Fully-encoded user data: one PDV list per value, each value as a single ASN.1 type. */
export function encodeUserData(...pdvs: readonly Pdv[]): Uint8Array {
  const lists = pdvs.map((p) => cons('universal', 16, intTlv('universal', 2, p.contextId), cons('context', 0, p.data)));
  return cons('application', 1, ...lists);
}

/** The CP PPDU in normal mode, with the capture's order of fields. */
export function encodeConnectPresentation(o: ConnectPresentationOptions): Uint8Array {
  const contexts = (o.contexts ?? DEFAULT_CONTEXTS).map((c) =>
    cons(
      'universal',
      16,
      intTlv('universal', 2, c.id),
      oidTlv('universal', 6, c.abstractSyntax),
      cons('universal', 16, ...c.transferSyntaxes.map((s) => oidTlv('universal', 6, s))),
    ),
  );
  return cons(
    'universal',
    17,
    cons('context', 0, intTlv('context', 0, NORMAL_MODE)),
    cons(
      'context',
      2,
      prim('context', 1, o.callingSelector ?? Uint8Array.of(0, 0, 0, 1)),
      prim('context', 2, o.calledSelector ?? Uint8Array.of(0, 0, 0, 1)),
      cons('context', 4, ...contexts),
      encodeUserData({ contextId: ACSE_CONTEXT_ID, data: o.userData }),
    ),
  );
}

function decodePdv(list: Tlv): Pdv {
  expectTag(list, 'universal', 16, 'PDV-list');
  const pdv: Partial<Pdv> = {};
  for (const item of childrenOf(list)) {
    if (isTag(item, 'universal', 6)) pdv.transferSyntax = oidOf(item);
    else if (isTag(item, 'universal', 2)) pdv.contextId = intOf(item);
    else if (isTag(item, 'context', 0)) pdv.data = primitiveOrOnly(item);
    else if (isTag(item, 'context', 1)) pdv.data = primitiveOf(item);
    else throw presentationError('unknown_tag', `${tagName(item)} in a PDV-list`);
  }
  if (pdv.contextId === undefined || pdv.data === undefined)
    throw presentationError('bad_user_data', 'a PDV-list without context id or value');
  return pdv.transferSyntax === undefined
    ? { contextId: pdv.contextId, data: pdv.data }
    : { contextId: pdv.contextId, transferSyntax: pdv.transferSyntax, data: pdv.data };
}

/** The bytes of the single ASN.1 value inside an explicit tag (the inner TLV, header included). */
function primitiveOrOnly(t: Tlv): Uint8Array {
  onlyChildOf(t);
  return t.value;
}

/** The PDVs of a User-data TLV (fully-encoded only; simply-encoded data is never used with ACSE). */
function userDataOf(t: Tlv): Pdv[] {
  if (isTag(t, 'application', 0)) throw presentationError('unsupported', 'simply-encoded user data is not supported');
  expectTag(t, 'application', 1, 'fully-encoded user data');
  return childrenOf(t).map(decodePdv);
}

/** Presentation user data as carried by session DATA, FINISH and DISCONNECT. */
export function decodeUserData(bytes: Uint8Array): Pdv[] {
  return userDataOf(readSingle(bytes));
}

function resultsOf(t: Tlv): ContextResult[] {
  return childrenOf(t).map((item) => {
    const r: Partial<ContextResult> = {};
    for (const f of childrenOf(expectTag(item, 'universal', 16, 'context result'))) {
      if (isTag(f, 'context', 0)) r.result = intOf(f);
      else if (isTag(f, 'context', 1)) r.transferSyntax = oidOf(f);
      else if (isTag(f, 'context', 2)) r.providerReason = intOf(f);
    }
    if (r.result === undefined) throw presentationError('bad_context_result', 'a context result without its result');
    return { ...r, result: r.result, resultText: RESULTS[r.result] ?? `result ${r.result}` };
  });
}

/** The normal-mode parameters of a CP or CPA SET, after checking its mode selector. */
function normalModeOf(bytes: Uint8Array, what: string): Tlv[] {
  const set = expectTag(readSingle(bytes), 'universal', 17, what);
  const fields = childrenOf(set);
  const mode = fields.find((f) => isTag(f, 'context', 0));
  if (mode === undefined) throw presentationError('bad_mode', `${what} without mode selector`);
  const value = intOf(expectTag(onlyChildOf(mode), 'context', 0, 'mode value'));
  if (value !== NORMAL_MODE) throw presentationError('unsupported_mode', `${what} in mode ${value} (only normal mode is supported)`);
  const normal = fields.find((f) => isTag(f, 'context', 2));
  if (normal === undefined) throw presentationError('bad_structure', `${what} without normal-mode parameters`);
  return childrenOf(normal);
}

/** A CP PPDU. */
export function decodeConnectPresentation(bytes: Uint8Array): PresentationConnect {
  const out: PresentationConnect = { kind: 'CP', contexts: [], userData: [] };
  for (const f of normalModeOf(bytes, 'CP-type')) {
    if (isTag(f, 'context', 1)) out.callingSelector = primitiveOf(f);
    else if (isTag(f, 'context', 2)) out.calledSelector = primitiveOf(f);
    else if (isTag(f, 'context', 4)) out.contexts = childrenOf(f).map(contextOf);
    else if (isTag(f, 'application', 1) || isTag(f, 'application', 0)) out.userData = userDataOf(f);
  }
  return out;
}

function contextOf(t: Tlv): PresentationContext {
  const [id, abstract, transfers] = childrenOf(expectTag(t, 'universal', 16, 'context definition'));
  if (transfers === undefined) throw presentationError('bad_structure', 'a context definition lacks fields');
  return {
    id: intOf(expectTag(id, 'universal', 2, 'context id')),
    abstractSyntax: oidOf(expectTag(abstract, 'universal', 6, 'abstract syntax')),
    transferSyntaxes: childrenOf(expectTag(transfers, 'universal', 16, 'transfer syntaxes')).map(oidOf),
  };
}

/** A CPA PPDU (the user data of a session ACCEPT). */
export function decodeConnectAccept(bytes: Uint8Array): PresentationAccept {
  const out: PresentationAccept = { kind: 'CPA', results: [], userData: [] };
  for (const f of normalModeOf(bytes, 'CPA-PPDU')) {
    if (isTag(f, 'context', 3)) out.respondingSelector = primitiveOf(f);
    else if (isTag(f, 'context', 5)) out.results = resultsOf(f);
    else if (isTag(f, 'application', 1) || isTag(f, 'application', 0)) out.userData = userDataOf(f);
  }
  return out;
}

/** A CPR PPDU (the user data of a session REFUSE), normal mode. */
export function decodeConnectReject(bytes: Uint8Array): PresentationReject {
  const seq = expectTag(readSingle(bytes), 'universal', 16, 'CPR-PPDU');
  const out: PresentationReject = { kind: 'CPR', results: [], reasonText: 'no provider reason', userData: [] };
  for (const f of childrenOf(seq)) {
    if (isTag(f, 'context', 3)) out.respondingSelector = primitiveOf(f);
    else if (isTag(f, 'context', 5)) out.results = resultsOf(f);
    else if (isTag(f, 'context', 10)) {
      out.providerReason = intOf(f);
      out.reasonText = PROVIDER_REASONS[out.providerReason] ?? `provider reason ${out.providerReason}`;
    } else if (isTag(f, 'application', 1) || isTag(f, 'application', 0)) out.userData = userDataOf(f);
  }
  return out;
}

/** An ARU (normal mode, `[0]`) or ARP (SEQUENCE) PPDU, the user data of a session ABORT. */
export function decodeAbortPresentation(bytes: Uint8Array): PresentationAbort {
  const top = readSingle(bytes);
  if (isTag(top, 'context', 0)) {
    const data = childrenOf(top).find((f) => isTag(f, 'application', 1) || isTag(f, 'application', 0));
    return { kind: 'ARU', userData: data ? userDataOf(data) : [] };
  }
  expectTag(top, 'universal', 16, 'ARP-PPDU');
  const out: PresentationAbort = { kind: 'ARP', reasonText: 'no reason given' };
  for (const f of childrenOf(top)) {
    if (isTag(f, 'context', 0)) {
      out.reason = intOf(f);
      out.reasonText = ABORT_REASONS[out.reason] ?? `abort reason ${out.reason}`;
    } else if (isTag(f, 'context', 1)) out.eventId = intOf(f);
  }
  return out;
}

/** An ARU PPDU carrying one value (an ACSE ABRT) in the ACSE context. */
export function encodeAbortPresentation(abrt: Uint8Array): Uint8Array {
  return cons('context', 0, encodeUserData({ contextId: ACSE_CONTEXT_ID, data: abrt }));
}
