/**
 * Server-side PDUs for the client tests: confirmed responses, errors, rejects and reports as BER, and the
 * TPKT frames around them. The codec only encodes what a client sends, so the answers are built here.
 */
import { childrenOf, concat, cons, encodeLength, encodeTag, prim, readSingle, type Tlv } from '../../src/mms/ber.ts';
import { boolTlv, intTlv, visibleTlv } from '../../src/mms/ber_fields.ts';
import { encodeData as encodeDt } from '../../src/mms/cotp.ts';
import { encodeObjectName, type ObjectName } from '../../src/mms/mms_access.ts';
import { encodeData, type MmsData } from '../../src/mms/mms_data.ts';
import { encodeMmsPdu } from '../../src/mms/mms_pdu.ts';
import { encodeType, type MmsType } from '../../src/mms/mms_types.ts';
import { encodeUserData, MMS_CONTEXT_ID } from '../../src/mms/presentation.ts';
import { encodeDataSpdu } from '../../src/mms/session.ts';
import { encodeTpkt } from '../../src/mms/tpkt.ts';

/** One TLV written back out. */
export function reencode(t: Tlv): Uint8Array {
  return concat(encodeTag(t.cls, t.constructed, t.tag), encodeLength(t.value.length), t.value);
}

/** The TPKT frame of one MMS PDU in a session DATA SPDU. */
export function mmsFrame(pdu: Uint8Array): Uint8Array {
  return encodeTpkt(encodeDt(encodeDataSpdu(encodeUserData({ contextId: MMS_CONTEXT_ID, data: pdu }))));
}

/** A confirmed-response PDU around a service response TLV. */
export function confirmed(invokeId: number, service: Uint8Array): Uint8Array {
  return cons('context', 1, intTlv('universal', 2, invokeId), service);
}

/** The same confirmed response with another invoke id. */
export function withInvokeId(pdu: Uint8Array, invokeId: number): Uint8Array {
  const [, service] = childrenOf(readSingle(pdu));
  return confirmed(invokeId, reencode(service));
}

/** A read response: data, or `{ error }` (a DataAccessError code). */
export function readResponse(invokeId: number, results: (MmsData | { error: number })[]): Uint8Array {
  const items = results.map((r) => ('error' in r ? intTlv('context', 0, r.error) : encodeData(r)));
  return confirmed(invokeId, cons('context', 4, cons('context', 1, ...items)));
}

/** A write response: `true` for success, a number for a DataAccessError. */
export function writeResponse(invokeId: number, results: (true | number)[]): Uint8Array {
  return confirmed(
    invokeId,
    cons('context', 5, ...results.map((r) => (r === true ? prim('context', 1, new Uint8Array(0)) : intTlv('context', 0, r)))),
  );
}

/** A GetNameList response. */
export function nameListResponse(invokeId: number, names: string[], moreFollows: boolean): Uint8Array {
  return confirmed(
    invokeId,
    cons('context', 1, cons('context', 0, ...names.map((n) => visibleTlv('universal', 26, n))), boolTlv('context', 1, moreFollows)),
  );
}

/** An Identify response. */
export function identifyResponse(invokeId: number, vendor = 'acme', model = 'fake', revision = '1.0'): Uint8Array {
  return confirmed(
    invokeId,
    cons('context', 2, visibleTlv('context', 0, vendor), visibleTlv('context', 1, model), visibleTlv('context', 2, revision)),
  );
}

/** A GetVariableAccessAttributes response. */
export function typeResponse(invokeId: number, type: MmsType): Uint8Array {
  return confirmed(invokeId, cons('context', 6, boolTlv('context', 0, false), cons('context', 2, encodeType(type))));
}

/** A GetNamedVariableListAttributes response. */
export function listAttributesResponse(invokeId: number, names: ObjectName[]): Uint8Array {
  const entries = names.map((n) => cons('universal', 16, cons('context', 0, encodeObjectName(n))));
  return confirmed(invokeId, cons('context', 12, boolTlv('context', 0, false), cons('context', 1, ...entries)));
}

/** A confirmed-error PDU: error class index (7 = access) and code. */
export function confirmedError(invokeId: number, errorClass: number, code: number): Uint8Array {
  return cons('context', 2, intTlv('context', 0, invokeId), cons('context', 2, cons('context', 0, intTlv('context', errorClass, code))));
}

/** A reject of a confirmed request. */
export function rejectPdu(invokeId: number | undefined, code = 1): Uint8Array {
  return encodeMmsPdu(
    invokeId === undefined
      ? { pdu: 'reject', reason: { pduType: 'confirmed-request', code, text: '' } }
      : { pdu: 'reject', invokeId, reason: { pduType: 'confirmed-request', code, text: '' } },
  );
}

/** An InformationReport of a named variable list (`RPT` for IEC 61850 reports). */
export function reportPdu(listName: ObjectName, values: MmsData[]): Uint8Array {
  return encodeMmsPdu({
    pdu: 'information-report',
    report: { variables: { kind: 'list', name: listName }, results: values.map((data) => ({ ok: true, data })) },
  });
}

/** An InformationReport of named variables (CommandTermination, LastApplError). */
export function variablesReportPdu(names: ObjectName[], values: MmsData[]): Uint8Array {
  return encodeMmsPdu({
    pdu: 'information-report',
    report: { variables: { kind: 'variables', names }, results: values.map((data) => ({ ok: true, data })) },
  });
}

/** A COTP CC frame confirming `tpduSize`. */
export function ccFrame(tpduSize = 8192): Uint8Array {
  return encodeTpkt(Uint8Array.of(9, 0xd0, 0, 1, 0, 1, 0, 0xc0, 1, Math.log2(tpduSize)));
}

/** A COTP DR frame (reason 0x80 normal, 3 address unknown...). */
export function drFrame(reason = 3): Uint8Array {
  return encodeTpkt(Uint8Array.of(6, 0x80, 0, 1, 0, 1, reason));
}
