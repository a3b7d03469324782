/**
 * The MMS PDU envelope (ISO 9506-2 MMSpdu): initiate, confirmed request/response/error with the invoke id,
 * unconfirmed information reports, reject, cancel and conclude. Encodes what a client sends, decodes what a
 * server answers (and the client's own PDUs, to check captures).
 */
import { childrenOf, cons, expectTag, isTag, onlyChildOf, prim, primitiveOf, readSingle, tagName, type Tlv } from './ber.ts';
import { bitStringOf, intOf, intTlv, nullTlv, visibleOf } from './ber_fields.ts';
import { decodeUnsigned, encodeBitString, type BitString } from './ber_values.ts';
import { CodecError } from './codec_error.ts';
import {
  decodeAccessResult,
  decodeVariableAccess,
  encodeAccessResult,
  encodeVariableAccess,
  type AccessResult,
  type VariableAccess,
} from './mms_access.ts';
import {
  decodeConfirmedRequest,
  decodeConfirmedResponse,
  encodeConfirmedRequest,
  type ConfirmedRequest,
  type ConfirmedResponse,
} from './mms_services.ts';

/** The parameters an initiate request proposes and its response settles. */
export type InitiateParameters = {
  localDetail?: number;
  maxServOutstandingCalling: number;
  maxServOutstandingCalled: number;
  nestingLevel?: number;
  version: number;
  parameterCbb: BitString;
  servicesSupported: BitString;
};

/** A ServiceError: its class, the code within the class, and what the server added. */
export type ServiceError = { errorClass: string; code: number; text: string; additionalCode?: number; additionalDescription?: string };

/** An unconfirmed InformationReport (IEC 61850 reports arrive as these, named `RPT`). */
export type InformationReport = { variables: VariableAccess; results: AccessResult[] };

/** Why a peer rejected a PDU. */
export type RejectReason = { pduType: string; code: number; text: string };

/** Any MMS PDU this stack reads or writes. */
export type MmsPdu =
  | ({ pdu: 'initiate-request' | 'initiate-response' } & InitiateParameters)
  | { pdu: 'initiate-error' | 'conclude-error'; error: ServiceError }
  | { pdu: 'confirmed-request'; invokeId: number; request: ConfirmedRequest }
  | { pdu: 'confirmed-response'; invokeId: number; response: ConfirmedResponse }
  | { pdu: 'confirmed-error'; invokeId: number; modifierPosition?: number; error: ServiceError }
  | { pdu: 'information-report'; report: InformationReport }
  | { pdu: 'reject'; invokeId?: number; reason: RejectReason }
  | { pdu: 'cancel-request' | 'cancel-response'; invokeId: number }
  | { pdu: 'conclude-request' | 'conclude-response' };

/** What libiec61850's client proposes, as captured: 65000-octet PDUs, 5 outstanding, nesting 10, version 1. */
export const DEFAULT_INITIATE: InitiateParameters = {
  localDetail: 65000,
  maxServOutstandingCalling: 5,
  maxServOutstandingCalled: 5,
  nestingLevel: 10,
  version: 1,
  parameterCbb: { bitLength: 11, bytes: Uint8Array.of(0xf1, 0x00) },
  servicesSupported: { bitLength: 85, bytes: Uint8Array.of(0xee, 0x1c, 0x00, 0x00, 0x04, 0x08, 0x00, 0x00, 0x79, 0xef, 0x18) },
};

/** ServiceError classes in the order of their CHOICE tags (ISO 9506-2 ServiceError.errorClass). */
export const ERROR_CLASSES = [
  'vmd-state',
  'application-reference',
  'definition',
  'resource',
  'service',
  'service-preempt',
  'time-resolution',
  'access',
  'initiate',
  'conclude',
  'cancel',
  'file',
  'others',
] as const;

/** A ServiceError class name. */
export type ErrorClass = (typeof ERROR_CLASSES)[number];
const ERROR_CODES: Record<string, string[]> = {
  definition: [
    'other',
    'object-undefined',
    'invalid-address',
    'type-unsupported',
    'type-inconsistent',
    'object-exists',
    'object-attribute-inconsistent',
  ],
  service: [
    'other',
    'primitives-out-of-sequence',
    'object-state-conflict',
    'pdu-size',
    'continuation-invalid',
    'object-constraint-conflict',
  ],
  access: ['other', 'object-access-unsupported', 'object-non-existent', 'object-access-denied', 'object-invalidated'],
  initiate: [
    'other',
    'version-incompatible',
    'max-segment-insufficient',
    'max-services-outstanding-calling-insufficient',
    'max-services-outstanding-called-insufficient',
    'service-CBB-insufficient',
    'parameter-CBB-insufficient',
    'nesting-level-insufficient',
  ],
  file: [
    'other',
    'filename-ambiguous',
    'file-busy',
    'filename-syntax-error',
    'content-type-invalid',
    'position-invalid',
    'file-access-denied',
    'file-non-existent',
    'duplicate-filename',
    'insufficient-space-in-filestore',
  ],
};
const REJECT_TYPES = [
  '',
  'confirmed-request',
  'confirmed-response',
  'confirmed-error',
  'unconfirmed',
  'pdu-error',
  'cancel-request',
  'cancel-response',
  'cancel-error',
  'conclude-request',
  'conclude-response',
  'conclude-error',
];
const REJECT_CODES: Record<string, string[]> = {
  'confirmed-request': [
    'other',
    'unrecognized-service',
    'unrecognized-modifier',
    'invalid-invokeID',
    'invalid-argument',
    'invalid-modifier',
    'max-serv-outstanding-exceeded',
    '',
    'max-recursion-exceeded',
    'value-out-of-range',
  ],
  'confirmed-response': [
    'other',
    'unrecognized-service',
    'invalid-invokeID',
    'invalid-result',
    '',
    'max-recursion-exceeded',
    'value-out-of-range',
  ],
  'pdu-error': ['unknown-pdu-type', 'invalid-pdu', 'illegal-acse-mapping'],
};

function mmsError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

function encodeInitiate(tag: 8 | 9, p: InitiateParameters): Uint8Array {
  const optional = (n: number | undefined, t: number) => (n === undefined ? new Uint8Array(0) : intTlv('context', t, n));
  return cons(
    'context',
    tag,
    optional(p.localDetail, 0),
    intTlv('context', 1, p.maxServOutstandingCalling),
    intTlv('context', 2, p.maxServOutstandingCalled),
    optional(p.nestingLevel, 3),
    cons(
      'context',
      4,
      intTlv('context', 0, p.version),
      prim('context', 1, encodeBitString(p.parameterCbb)),
      prim('context', 2, encodeBitString(p.servicesSupported)),
    ),
  );
}

function decodeInitiate(t: Tlv): InitiateParameters {
  const fields = childrenOf(t);
  const field = (n: number) => fields.find((f) => isTag(f, 'context', n));
  const detail = field(4);
  const calling = field(1);
  const called = field(2);
  if (!detail || !calling || !called) throw mmsError('bad_initiate', 'initiate PDU lacks a mandatory field');
  const inner = childrenOf(detail);
  const sub = (n: number) => {
    const f = inner.find((c) => isTag(c, 'context', n));
    if (!f) throw mmsError('bad_initiate', `initiate detail lacks field [${n}]`);
    return f;
  };
  const out: InitiateParameters = {
    maxServOutstandingCalling: intOf(calling),
    maxServOutstandingCalled: intOf(called),
    version: intOf(sub(0)),
    parameterCbb: bitStringOf(sub(1)),
    servicesSupported: bitStringOf(sub(2)),
  };
  const local = field(0);
  const nesting = field(3);
  if (local) out.localDetail = intOf(local);
  if (nesting) out.nestingLevel = intOf(nesting);
  return out;
}

/** A ServiceError from its SEQUENCE (the content of an error PDU's field). */
function decodeServiceError(t: Tlv): ServiceError {
  const fields = childrenOf(t);
  const cls = fields.find((f) => isTag(f, 'context', 0));
  if (!cls) throw mmsError('bad_error', 'service error without error class');
  const choice = onlyChildOf(cls);
  const errorClass: string = ERROR_CLASSES[choice.tag] ?? `class ${choice.tag}`;
  const code = intOf(choice);
  const out: ServiceError = { errorClass, code, text: `${errorClass}: ${ERROR_CODES[errorClass]?.[code] ?? `code ${code}`}` };
  const additional = fields.find((f) => isTag(f, 'context', 1));
  const description = fields.find((f) => isTag(f, 'context', 2));
  if (additional) out.additionalCode = intOf(additional);
  if (description) out.additionalDescription = visibleOf(description);
  return out;
}

function invokeIdOf(t: Tlv | undefined): number {
  if (t === undefined) throw mmsError('bad_pdu', 'PDU without invoke id');
  const n = decodeUnsigned(primitiveOf(expectTag(t, 'universal', 2, 'invoke id')));
  if (n > 0xffffffffn) throw mmsError('bad_pdu', `invoke id ${n} exceeds 32 bits`);
  return Number(n);
}

function decodeReject(t: Tlv): MmsPdu {
  let invokeId: number | undefined;
  let reason: RejectReason | undefined;
  for (const f of childrenOf(t)) {
    if (isTag(f, 'context', 0)) invokeId = intOf(f);
    else if (f.cls === 'context' && f.tag >= 1 && f.tag <= 11) {
      const pduType = REJECT_TYPES[f.tag];
      const code = intOf(f);
      reason = { pduType, code, text: `${pduType}: ${REJECT_CODES[pduType]?.[code] || `code ${code}`}` };
    }
  }
  if (!reason) throw mmsError('bad_reject', 'reject PDU without reason');
  return invokeId === undefined ? { pdu: 'reject', reason } : { pdu: 'reject', invokeId, reason };
}

function decodeInformationReport(t: Tlv): MmsPdu {
  const service = childrenOf(t)[0];
  if (service === undefined) throw mmsError('bad_pdu', 'an empty unconfirmed PDU');
  if (!isTag(service, 'context', 0)) throw mmsError('unsupported_service', `unconfirmed service ${tagName(service)} is not supported`);
  const [spec, list] = childrenOf(service);
  if (list === undefined) throw mmsError('bad_pdu', 'InformationReport without access results');
  const results = childrenOf(expectTag(list, 'context', 0, 'list of access results')).map(decodeAccessResult);
  return { pdu: 'information-report', report: { variables: decodeVariableAccess(spec), results } };
}

/** One MMS PDU (the presentation data value of the MMS context). */
export function decodeMmsPdu(bytes: Uint8Array): MmsPdu {
  const t = readSingle(bytes);
  if (t.cls !== 'context') throw mmsError('unknown_tag', `${tagName(t)} is not an MMS PDU`);
  switch (t.tag) {
    case 0: {
      const [id, second, third] = childrenOf(t);
      // an optional listOfModifier (SEQUENCE) may sit between the invoke id and the service
      const service = second !== undefined && isTag(second, 'universal', 16) ? third : second;
      if (service === undefined) throw mmsError('bad_pdu', 'confirmed request without service');
      return { pdu: 'confirmed-request', invokeId: invokeIdOf(id), request: decodeConfirmedRequest(service) };
    }
    case 1: {
      const [id, service] = childrenOf(t);
      if (service === undefined) throw mmsError('bad_pdu', 'confirmed response without service');
      return { pdu: 'confirmed-response', invokeId: invokeIdOf(id), response: decodeConfirmedResponse(service) };
    }
    case 2: {
      const fields = childrenOf(t);
      const id = fields.find((f) => isTag(f, 'context', 0));
      const error = fields.find((f) => isTag(f, 'context', 2));
      if (!id || !error) throw mmsError('bad_pdu', 'confirmed error without invoke id or service error');
      const position = fields.find((f) => isTag(f, 'context', 1));
      const out: MmsPdu = { pdu: 'confirmed-error', invokeId: intOf(id), error: decodeServiceError(error) };
      if (position) out.modifierPosition = intOf(position);
      return out;
    }
    case 3:
      return decodeInformationReport(t);
    case 4:
      return decodeReject(t);
    case 5:
    case 6:
      return { pdu: t.tag === 5 ? 'cancel-request' : 'cancel-response', invokeId: intOf(t) };
    case 8:
    case 9:
      return { pdu: t.tag === 8 ? 'initiate-request' : 'initiate-response', ...decodeInitiate(t) };
    case 10:
    case 13:
      return { pdu: t.tag === 10 ? 'initiate-error' : 'conclude-error', error: decodeServiceError(t) };
    case 11:
    case 12:
      primitiveOf(t);
      return { pdu: t.tag === 11 ? 'conclude-request' : 'conclude-response' };
    default:
      throw mmsError('unknown_tag', `${tagName(t)} is not an MMS PDU this client reads`);
  }
}

/** A Confirmed-RequestPDU around a service request already encoded (`encodeConfirmedRequest`). */
export function encodeConfirmedRequestPdu(invokeId: number, service: Uint8Array): Uint8Array {
  return cons('context', 0, intTlv('universal', 2, invokeId), service);
}

/** Encodes the PDUs a client sends (and reports and rejects, for tests); confirmed responses and errors are read-only here. */
export function encodeMmsPdu(p: MmsPdu): Uint8Array {
  switch (p.pdu) {
    case 'initiate-request':
      return encodeInitiate(8, p);
    case 'initiate-response':
      return encodeInitiate(9, p);
    case 'confirmed-request':
      return encodeConfirmedRequestPdu(p.invokeId, encodeConfirmedRequest(p.request));
    case 'information-report':
      return cons(
        'context',
        3,
        cons('context', 0, encodeVariableAccess(p.report.variables), cons('context', 0, ...p.report.results.map(encodeAccessResult))),
      );
    case 'reject': {
      const code = REJECT_TYPES.indexOf(p.reason.pduType);
      if (code < 1) throw mmsError('bad_reject', `reject of PDU type ${p.reason.pduType}`);
      return cons(
        'context',
        4,
        p.invokeId === undefined ? new Uint8Array(0) : intTlv('context', 0, p.invokeId),
        intTlv('context', code, p.reason.code),
      );
    }
    case 'cancel-request':
    case 'cancel-response':
      return intTlv('context', p.pdu === 'cancel-request' ? 5 : 6, p.invokeId);
    case 'conclude-request':
    case 'conclude-response':
      return nullTlv('context', p.pdu === 'conclude-request' ? 11 : 12);
    default:
      throw mmsError('unsupported_pdu', `encoding ${p.pdu} PDUs is not supported`);
  }
}
