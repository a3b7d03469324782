/**
 * The MMS PDUs a server sends that the client codec only decodes: confirmed responses of the six services
 * an IEC 61850 client uses (and of the file and journal services, whose codecs encode both ways), confirmed
 * errors, and (through `encodeMmsPdu`) initiate responses, information reports, rejects and conclude
 * responses. Also reads the invoke id of a confirmed request whose service this stack does not know, so a
 * server can still answer it. Tags follow ISO 9506-2.
 */
import {
  boolTlv,
  childrenOf,
  cons,
  decodeUnsigned,
  encodeAccessResult,
  encodeFileResponse,
  encodeInteger,
  encodeMmsPdu,
  encodeReadJournalResponse,
  encodeNamedVariable,
  encodeType,
  encodeVariableAccess,
  expectTag,
  intTlv,
  prim,
  primitiveOf,
  readSingle,
  visibleTlv,
  type ConfirmedResponse,
  type MmsPdu,
  type ServiceError,
  type WriteResult,
  ERROR_CLASSES,
  type ErrorClass,
} from '@scada/iec61850/wire';

/** What a server puts in a confirmed error: the class and the code within it. */
export type ServerError = { errorClass: ErrorClass; code: number; description?: string };

const SERVICE_TAG = {
  identify: 2,
  getNameList: 1,
  read: 4,
  write: 5,
  getVariableAccessAttributes: 6,
  getNamedVariableListAttributes: 12,
} as const;

function encodeWriteResult(r: WriteResult): Uint8Array {
  return r.ok ? prim('context', 1, new Uint8Array(0)) : prim('context', 0, encodeInteger(r.error));
}

/** The ConfirmedServiceResponse CHOICE as a TLV. */
export function encodeConfirmedResponse(r: ConfirmedResponse): Uint8Array {
  switch (r.service) {
    case 'fileDirectory':
    case 'fileOpen':
    case 'fileRead':
    case 'fileClose':
    case 'fileDelete':
      return encodeFileResponse(r);
    case 'readJournal':
      return encodeReadJournalResponse(r);
    case 'identify':
      return cons(
        'context',
        SERVICE_TAG.identify,
        visibleTlv('context', 0, r.vendor),
        visibleTlv('context', 1, r.model),
        visibleTlv('context', 2, r.revision),
      );
    case 'getNameList':
      return cons(
        'context',
        SERVICE_TAG.getNameList,
        cons('context', 0, ...r.identifiers.map((id) => visibleTlv('universal', 26, id))),
        boolTlv('context', 1, r.moreFollows),
      );
    case 'getVariableAccessAttributes':
      return cons(
        'context',
        SERVICE_TAG.getVariableAccessAttributes,
        boolTlv('context', 0, r.deletable),
        cons('context', 2, encodeType(r.type)),
      );
    case 'read':
      return cons(
        'context',
        SERVICE_TAG.read,
        r.variables === undefined ? new Uint8Array(0) : cons('context', 0, encodeVariableAccess(r.variables)),
        cons('context', 1, ...r.results.map(encodeAccessResult)),
      );
    case 'write':
      return cons('context', SERVICE_TAG.write, ...r.results.map(encodeWriteResult));
    case 'getNamedVariableListAttributes':
      return cons(
        'context',
        SERVICE_TAG.getNamedVariableListAttributes,
        boolTlv('context', 0, r.deletable),
        cons('context', 1, ...r.variables.map(encodeNamedVariable)),
      );
  }
}

/** A ServiceError SEQUENCE under the given context tag. */
function encodeServiceError(tag: number, e: ServerError | ServiceError): Uint8Array {
  const index = ERROR_CLASSES.indexOf(e.errorClass as ErrorClass);
  const classTag = index < 0 ? ERROR_CLASSES.indexOf('others') : index;
  const description = 'description' in e ? e.description : 'additionalDescription' in e ? e.additionalDescription : undefined;
  return cons(
    'context',
    tag,
    cons('context', 0, intTlv('context', classTag, e.code)),
    description === undefined ? new Uint8Array(0) : visibleTlv('context', 2, description),
  );
}

/** Any MMS PDU a server sends: confirmed responses and errors here, the rest through `encodeMmsPdu`. */
export function encodeServerPdu(p: MmsPdu): Uint8Array {
  switch (p.pdu) {
    case 'confirmed-response':
      return cons('context', 1, intTlv('universal', 2, p.invokeId), encodeConfirmedResponse(p.response));
    case 'confirmed-error':
      return cons('context', 2, intTlv('context', 0, p.invokeId), encodeServiceError(2, p.error));
    case 'initiate-error':
      return encodeServiceError(10, p.error);
    default:
      return encodeMmsPdu(p);
  }
}

/**
 * The invoke id of a confirmed request, read without decoding its service (so a request for a service this
 * stack does not know can still be rejected by id); undefined when the bytes are no confirmed request.
 */
export function confirmedRequestInvokeId(bytes: Uint8Array): number | undefined {
  try {
    const top = readSingle(bytes);
    if (top.cls !== 'context' || top.tag !== 0 || !top.constructed) return undefined;
    const id = childrenOf(top)[0];
    if (id === undefined) return undefined;
    const n = decodeUnsigned(primitiveOf(expectTag(id, 'universal', 2, 'invoke id')));
    return n <= 0xffffffffn ? Number(n) : undefined;
  } catch {
    return undefined;
  }
}
