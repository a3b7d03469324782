/**
 * The confirmed services an IEC 61850 client uses: Identify, GetNameList, GetVariableAccessAttributes,
 * Read, Write and GetNamedVariableListAttributes here; the file services (`mms_files.ts`) and ReadJournal
 * (`mms_journal.ts`) in files of their own. Requests are encoded as the client sends them (and decoded, to
 * check captures); responses are decoded as servers answer. Tags follow ISO 9506-2.
 */
import { childrenOf, cons, expectTag, isTag, onlyChildOf, tagName, type Tlv } from './ber.ts';
import { boolOf, boolTlv, intTlv, nullTlv, intOf, visibleOf, visibleTlv } from './ber_fields.ts';
import { CodecError } from './codec_error.ts';
import {
  dataAccessErrorText,
  decodeAccessResult,
  decodeNamedVariables,
  decodeObjectName,
  decodeVariableAccess,
  encodeObjectName,
  encodeVariableAccess,
  type AccessResult,
  type NamedVariable,
  type ObjectName,
  type VariableAccess,
} from './mms_access.ts';
import { decodeData, encodeData, type MmsData } from './mms_data.ts';
import {
  decodeFileRequest,
  decodeFileResponse,
  encodeFileRequest,
  FILE_SERVICE_TAGS,
  type FileRequest,
  type FileResponse,
} from './mms_files.ts';
import {
  decodeReadJournalRequest,
  decodeReadJournalResponse,
  encodeReadJournalRequest,
  READ_JOURNAL_TAG,
  type ReadJournalRequest,
  type ReadJournalResponse,
} from './mms_journal.ts';
import { decodeType, type MmsType } from './mms_types.ts';

/** The MMS object classes GetNameList can list, in the order of their codes (0..11). */
export const OBJECT_CLASSES = [
  'namedVariable',
  'scatteredAccess',
  'namedVariableList',
  'namedType',
  'semaphore',
  'eventCondition',
  'eventAction',
  'eventEnrollment',
  'journal',
  'domain',
  'programInvocation',
  'operatorStation',
] as const;

/** An MMS object class. */
export type ObjectClass = (typeof OBJECT_CLASSES)[number];

/** Where GetNameList looks. */
export type NameScope = { scope: 'vmd' } | { scope: 'domain'; domain: string } | { scope: 'aa' };

/** A confirmed service request. */
export type ConfirmedRequest =
  | { service: 'identify' }
  | { service: 'getNameList'; objectClass: ObjectClass; scope: NameScope; continueAfter?: string }
  | { service: 'getVariableAccessAttributes'; name: ObjectName }
  | { service: 'read'; specificationWithResult: boolean; variables: VariableAccess }
  | { service: 'write'; variables: VariableAccess; data: MmsData[] }
  | { service: 'getNamedVariableListAttributes'; name: ObjectName }
  | FileRequest
  | ReadJournalRequest;

/** The outcome of writing one variable. */
export type WriteResult = { ok: true } | { ok: false; error: number; errorText: string };

/** A confirmed service response. */
export type ConfirmedResponse =
  | { service: 'identify'; vendor: string; model: string; revision: string }
  | { service: 'getNameList'; identifiers: string[]; moreFollows: boolean }
  | { service: 'getVariableAccessAttributes'; deletable: boolean; type: MmsType }
  | { service: 'read'; variables?: VariableAccess; results: AccessResult[] }
  | { service: 'write'; results: WriteResult[] }
  | { service: 'getNamedVariableListAttributes'; deletable: boolean; variables: NamedVariable[] }
  | FileResponse
  | ReadJournalResponse;

const SERVICE_TAG = {
  identify: 2,
  getNameList: 1,
  read: 4,
  write: 5,
  getVariableAccessAttributes: 6,
  getNamedVariableListAttributes: 12,
} as const;
const SERVICE_NAMES: Record<number, string> = {
  0: 'status',
  3: 'rename',
  7: 'defineNamedVariable',
  11: 'defineNamedVariableList',
  13: 'deleteNamedVariableList',
  75: 'fileRename',
  76: 'fileDelete',
};
const FILE_TAGS = new Set<number>(Object.values(FILE_SERVICE_TAGS));

function mmsError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

function unknownService(t: Tlv): CodecError {
  const name = SERVICE_NAMES[t.tag];
  return mmsError(name ? 'unsupported_service' : 'unknown_tag', `service ${tagName(t)}${name ? ` (${name})` : ''} is not supported`);
}

function encodeScope(s: NameScope): Uint8Array {
  if (s.scope === 'domain') return visibleTlv('context', 1, s.domain);
  return nullTlv('context', s.scope === 'vmd' ? 0 : 2);
}

/** The ConfirmedServiceRequest CHOICE as a TLV. */
export function encodeConfirmedRequest(r: ConfirmedRequest): Uint8Array {
  switch (r.service) {
    case 'identify':
      return nullTlv('context', SERVICE_TAG.identify);
    case 'getNameList':
      return cons(
        'context',
        SERVICE_TAG.getNameList,
        cons('context', 0, intTlv('context', 0, OBJECT_CLASSES.indexOf(r.objectClass))),
        cons('context', 1, encodeScope(r.scope)),
        r.continueAfter === undefined ? new Uint8Array(0) : visibleTlv('context', 2, r.continueAfter),
      );
    case 'getVariableAccessAttributes':
      return cons('context', SERVICE_TAG.getVariableAccessAttributes, cons('context', 0, encodeObjectName(r.name)));
    case 'read':
      return cons(
        'context',
        SERVICE_TAG.read,
        r.specificationWithResult ? boolTlv('context', 0, true) : new Uint8Array(0),
        cons('context', 1, encodeVariableAccess(r.variables)),
      );
    case 'write':
      return cons('context', SERVICE_TAG.write, encodeVariableAccess(r.variables), cons('context', 0, ...r.data.map((d) => encodeData(d))));
    case 'getNamedVariableListAttributes':
      return cons('context', SERVICE_TAG.getNamedVariableListAttributes, encodeObjectName(r.name));
    case 'readJournal':
      return encodeReadJournalRequest(r);
    default:
      return encodeFileRequest(r);
  }
}

function decodeGetNameListRequest(t: Tlv): ConfirmedRequest {
  const fields = childrenOf(t);
  const classField = fields.find((f) => isTag(f, 'context', 0));
  const scopeField = fields.find((f) => isTag(f, 'context', 1));
  if (!classField || !scopeField) throw mmsError('bad_request', 'GetNameList without object class or scope');
  const code = intOf(expectTag(onlyChildOf(classField), 'context', 0, 'basic object class'));
  const objectClass = OBJECT_CLASSES[code];
  if (objectClass === undefined) throw mmsError('bad_request', `object class ${code} is unknown`);
  const s = onlyChildOf(scopeField);
  const scope: NameScope = isTag(s, 'context', 1)
    ? { scope: 'domain', domain: visibleOf(s) }
    : isTag(s, 'context', 2)
      ? { scope: 'aa' }
      : { scope: 'vmd' };
  const after = fields.find((f) => isTag(f, 'context', 2));
  return after
    ? { service: 'getNameList', objectClass, scope, continueAfter: visibleOf(after) }
    : { service: 'getNameList', objectClass, scope };
}

/** A ConfirmedServiceRequest from its CHOICE TLV. */
export function decodeConfirmedRequest(t: Tlv): ConfirmedRequest {
  if (t.cls !== 'context') throw unknownService(t);
  switch (t.tag) {
    case SERVICE_TAG.identify:
      return { service: 'identify' };
    case SERVICE_TAG.getNameList:
      return decodeGetNameListRequest(t);
    case SERVICE_TAG.getVariableAccessAttributes:
      return {
        service: 'getVariableAccessAttributes',
        name: decodeObjectName(onlyChildOf(expectTag(onlyChildOf(t), 'context', 0, 'name'))),
      };
    case SERVICE_TAG.read: {
      const fields = childrenOf(t);
      const withResult = fields.find((f) => isTag(f, 'context', 0));
      const spec = fields.find((f) => isTag(f, 'context', 1));
      if (!spec) throw mmsError('bad_request', 'Read without variable access specification');
      return {
        service: 'read',
        specificationWithResult: withResult ? boolOf(withResult) : false,
        variables: decodeVariableAccess(onlyChildOf(spec)),
      };
    }
    case SERVICE_TAG.write: {
      const [spec, data] = childrenOf(t);
      if (!data) throw mmsError('bad_request', 'Write without data');
      return {
        service: 'write',
        variables: decodeVariableAccess(spec),
        data: childrenOf(expectTag(data, 'context', 0, 'list of data')).map((d) => decodeData(d)),
      };
    }
    case SERVICE_TAG.getNamedVariableListAttributes:
      return { service: 'getNamedVariableListAttributes', name: decodeObjectName(onlyChildOf(t)) };
    case READ_JOURNAL_TAG:
      return decodeReadJournalRequest(t);
    default:
      if (FILE_TAGS.has(t.tag)) return decodeFileRequest(t);
      throw unknownService(t);
  }
}

function decodeReadResponse(t: Tlv): ConfirmedResponse {
  const fields = childrenOf(t);
  const spec = fields.find((f) => isTag(f, 'context', 0));
  const list = fields.find((f) => isTag(f, 'context', 1));
  if (!list) throw mmsError('bad_response', 'Read response without list of access results');
  const results = childrenOf(list).map(decodeAccessResult);
  return spec ? { service: 'read', variables: decodeVariableAccess(onlyChildOf(spec)), results } : { service: 'read', results };
}

function decodeWriteResult(t: Tlv): WriteResult {
  if (isTag(t, 'context', 1)) return { ok: true };
  const error = intOf(expectTag(t, 'context', 0, 'write failure'));
  return { ok: false, error, errorText: dataAccessErrorText(error) };
}

function decodeIdentifyResponse(t: Tlv): ConfirmedResponse {
  const text = (n: number) => {
    const f = childrenOf(t).find((c) => isTag(c, 'context', n));
    if (!f) throw mmsError('bad_response', `Identify response without field [${n}]`);
    return visibleOf(f);
  };
  return { service: 'identify', vendor: text(0), model: text(1), revision: text(2) };
}

function decodeAttributesResponse(t: Tlv): ConfirmedResponse {
  const fields = childrenOf(t);
  const deletable = fields.find((f) => isTag(f, 'context', 0));
  const type = fields.find((f) => isTag(f, 'context', 2));
  if (!type) throw mmsError('bad_response', 'GetVariableAccessAttributes response without type');
  return { service: 'getVariableAccessAttributes', deletable: deletable ? boolOf(deletable) : false, type: decodeType(onlyChildOf(type)) };
}

/** A ConfirmedServiceResponse from its CHOICE TLV. */
export function decodeConfirmedResponse(t: Tlv): ConfirmedResponse {
  if (t.cls !== 'context') throw unknownService(t);
  switch (t.tag) {
    case SERVICE_TAG.identify:
      return decodeIdentifyResponse(t);
    case SERVICE_TAG.getNameList: {
      const fields = childrenOf(t);
      const list = fields.find((f) => isTag(f, 'context', 0));
      const more = fields.find((f) => isTag(f, 'context', 1));
      if (!list) throw mmsError('bad_response', 'GetNameList response without identifiers');
      return { service: 'getNameList', identifiers: childrenOf(list).map(visibleOf), moreFollows: more ? boolOf(more) : true };
    }
    case SERVICE_TAG.getVariableAccessAttributes:
      return decodeAttributesResponse(t);
    case SERVICE_TAG.read:
      return decodeReadResponse(t);
    case SERVICE_TAG.write:
      return { service: 'write', results: childrenOf(t).map(decodeWriteResult) };
    case SERVICE_TAG.getNamedVariableListAttributes: {
      const fields = childrenOf(t);
      const deletable = fields.find((f) => isTag(f, 'context', 0));
      const list = fields.find((f) => isTag(f, 'context', 1));
      if (!list) throw mmsError('bad_response', 'GetNamedVariableListAttributes response without variables');
      return {
        service: 'getNamedVariableListAttributes',
        deletable: deletable ? boolOf(deletable) : false,
        variables: decodeNamedVariables(list),
      };
    }
    case READ_JOURNAL_TAG:
      return decodeReadJournalResponse(t);
    default:
      if (FILE_TAGS.has(t.tag)) return decodeFileResponse(t);
      throw unknownService(t);
  }
}
