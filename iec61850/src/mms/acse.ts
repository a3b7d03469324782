/**
 * ISO 8650 ACSE as an MMS client uses it: AARQ (application context 1.0.9506.2.3, optional AP titles and AE
 * qualifiers, optional password authentication, the MMS initiate in user information), AARE with a clear
 * refusal reason, RLRQ/RLRE and ABRT. ACSE tags are explicit except where the module says IMPLICIT.
 */
import { childrenOf, concat, cons, isTag, onlyChildOf, prim, primitiveOf, readSingle, tagName, type Tlv } from './ber.ts';
import { intOf, intTlv, oidOf, oidTlv } from './ber_fields.ts';
import { CodecError } from './codec_error.ts';
import { MMS_CONTEXT_ID } from './presentation.ts';

/** The MMS application context (iso standard 9506 part 2 mms-annex-version1). */
export const MMS_APPLICATION_CONTEXT = '1.0.9506.2.3';
/** The password authentication mechanism IEC 61850 uses (2.2.3.1); sender-acse-requirements then has bit 0 (authentication) set. */
export const PASSWORD_MECHANISM = '2.2.3.1';

/** What the client puts in its AARQ. */
export type AarqOptions = {
  applicationContext?: string;
  calledApTitle?: string;
  calledAeQualifier?: number;
  callingApTitle?: string;
  callingAeQualifier?: number;
  /** Sent as a GraphicString with the password mechanism; omit for no authentication. */
  password?: string;
  /** The encoded MMS initiate request. */
  userInformation: Uint8Array;
  /** The presentation context of the user information; MMS (3) by default. */
  indirectReference?: number;
};

/** The source and meaning of an AARE diagnostic. */
export type AareDiagnostic = { source: 'service-user' | 'service-provider'; code: number; text: string };

/** An AARQ (decoded for checks and tests). */
export type Aarq = {
  kind: 'AARQ';
  applicationContext?: string;
  calledApTitle?: string;
  calledAeQualifier?: number;
  callingApTitle?: string;
  callingAeQualifier?: number;
  mechanism?: string;
  /** The calling authentication value when it is a charstring (the password of mechanism 2.2.3.1). */
  password?: string;
  userInformation?: Uint8Array;
};

/** An AARE: `result` 0 is accepted, 1 rejected (permanent), 2 rejected (transient). */
export type Aare = {
  kind: 'AARE';
  applicationContext?: string;
  result: number;
  resultText: string;
  diagnostic?: AareDiagnostic;
  respondingApTitle?: string;
  respondingAeQualifier?: number;
  userInformation?: Uint8Array;
};

/** Any APDU of the ACSE context. */
export type AcseApdu =
  | Aarq
  | Aare
  | { kind: 'RLRQ' | 'RLRE'; reason?: number; reasonText: string; userInformation?: Uint8Array }
  | { kind: 'ABRT'; source: number; sourceText: string; diagnostic?: number; diagnosticText?: string; userInformation?: Uint8Array };

const RESULTS = ['accepted', 'rejected (permanent)', 'rejected (transient)'];
const USER_DIAGNOSTICS = [
  'null',
  'no reason given',
  'application context name not supported',
  'calling AP title not recognized',
  'calling AP invocation identifier not recognized',
  'calling AE qualifier not recognized',
  'calling AE invocation identifier not recognized',
  'called AP title not recognized',
  'called AP invocation identifier not recognized',
  'called AE qualifier not recognized',
  'called AE invocation identifier not recognized',
  'authentication mechanism name not recognized',
  'authentication mechanism name required',
  'authentication failure',
  'authentication required',
];
const PROVIDER_DIAGNOSTICS = ['null', 'no reason given', 'no common ACSE version'];
const RELEASE_REQUEST_REASONS: Record<number, string> = { 0: 'normal', 1: 'urgent', 30: 'user defined' };
const RELEASE_RESPONSE_REASONS: Record<number, string> = { 0: 'normal', 1: 'not finished', 30: 'user defined' };
const ABORT_DIAGNOSTICS: Record<number, string> = {
  1: 'no reason given',
  2: 'protocol error',
  3: 'authentication mechanism name not recognized',
  4: 'authentication mechanism name required',
  5: 'authentication failure',
  6: 'authentication required',
};
const EMPTY = new Uint8Array(0);

function acseError(code: string, message: string): CodecError {
  return new CodecError('acse', code, message);
}

/** User information: one EXTERNAL with the indirect reference and the value as a single ASN.1 type. */
function userInformation(data: Uint8Array, contextId: number): Uint8Array {
  return cons('context', 30, cons('universal', 8, intTlv('universal', 2, contextId), cons('context', 0, data)));
}

/** The AARQ APDU, fields in the order of the capture. */
export function encodeAarq(o: AarqOptions): Uint8Array {
  const optional = (present: boolean, make: () => Uint8Array) => (present ? make() : EMPTY);
  const auth =
    o.password === undefined
      ? EMPTY
      : concat(
          prim('context', 10, Uint8Array.of(0x07, 0x80)),
          oidTlv('context', 11, PASSWORD_MECHANISM),
          cons('context', 12, prim('context', 0, new TextEncoder().encode(o.password))),
        );
  return cons(
    'application',
    0,
    cons('context', 1, oidTlv('universal', 6, o.applicationContext ?? MMS_APPLICATION_CONTEXT)),
    optional(o.calledApTitle !== undefined, () => cons('context', 2, oidTlv('universal', 6, o.calledApTitle!))),
    optional(o.calledAeQualifier !== undefined, () => cons('context', 3, intTlv('universal', 2, o.calledAeQualifier!))),
    optional(o.callingApTitle !== undefined, () => cons('context', 6, oidTlv('universal', 6, o.callingApTitle!))),
    optional(o.callingAeQualifier !== undefined, () => cons('context', 7, intTlv('universal', 2, o.callingAeQualifier!))),
    auth,
    userInformation(o.userInformation, o.indirectReference ?? MMS_CONTEXT_ID),
  );
}

/** The RLRQ APDU (reason 0: normal). */
export function encodeRlrq(reason = 0): Uint8Array {
  return cons('application', 2, intTlv('context', 0, reason));
}

/** The ABRT APDU from the service user. */
export function encodeAbrt(): Uint8Array {
  return cons('application', 4, intTlv('context', 0, 0));
}

/** The value of the first EXTERNAL of a user-information field. */
function externalData(t: Tlv): Uint8Array | undefined {
  const first = childrenOf(t)[0];
  if (first === undefined) return undefined;
  if (!isTag(first, 'universal', 8)) throw acseError('bad_user_information', `${tagName(first)} where an EXTERNAL is expected`);
  for (const f of childrenOf(first)) {
    if (isTag(f, 'context', 0)) {
      onlyChildOf(f);
      return f.value;
    }
    if (isTag(f, 'context', 1)) return primitiveOf(f);
  }
  throw acseError('bad_user_information', 'an EXTERNAL without an encoding');
}

/** The OID of an AP title in form 2 (form 1, a directory name, is left undecoded). */
function apTitle(t: Tlv): string | undefined {
  const inner = onlyChildOf(t);
  return isTag(inner, 'universal', 6) ? oidOf(inner) : undefined;
}

function aeQualifier(t: Tlv): number | undefined {
  const inner = onlyChildOf(t);
  return isTag(inner, 'universal', 2) ? intOf(inner) : undefined;
}

function decodeAarq(fields: Tlv[]): Aarq {
  const out: Aarq = { kind: 'AARQ' };
  for (const f of fields) {
    if (f.cls !== 'context') continue;
    if (f.tag === 1) out.applicationContext = oidOf(onlyChildOf(f));
    else if (f.tag === 2) out.calledApTitle = apTitle(f);
    else if (f.tag === 3) out.calledAeQualifier = aeQualifier(f);
    else if (f.tag === 6) out.callingApTitle = apTitle(f);
    else if (f.tag === 7) out.callingAeQualifier = aeQualifier(f);
    else if (f.tag === 11) out.mechanism = oidOf(f);
    else if (f.tag === 12) {
      const value = onlyChildOf(f);
      if (isTag(value, 'context', 0)) out.password = new TextDecoder().decode(primitiveOf(value));
    } else if (f.tag === 30) out.userInformation = externalData(f);
  }
  return out;
}

function diagnosticOf(t: Tlv): AareDiagnostic {
  const choice = onlyChildOf(t);
  const code = intOf(onlyChildOf(choice));
  if (isTag(choice, 'context', 1)) return { source: 'service-user', code, text: USER_DIAGNOSTICS[code] ?? `diagnostic ${code}` };
  if (isTag(choice, 'context', 2)) return { source: 'service-provider', code, text: PROVIDER_DIAGNOSTICS[code] ?? `diagnostic ${code}` };
  throw acseError('unknown_tag', `${tagName(choice)} as result source`);
}

function decodeAare(fields: Tlv[]): Aare {
  let result: number | undefined;
  const out: Omit<Aare, 'result' | 'resultText'> = { kind: 'AARE' };
  for (const f of fields) {
    if (f.cls !== 'context') continue;
    if (f.tag === 1) out.applicationContext = oidOf(onlyChildOf(f));
    else if (f.tag === 2) result = intOf(onlyChildOf(f));
    else if (f.tag === 3) out.diagnostic = diagnosticOf(f);
    else if (f.tag === 4) out.respondingApTitle = apTitle(f);
    else if (f.tag === 5) out.respondingAeQualifier = aeQualifier(f);
    else if (f.tag === 30) out.userInformation = externalData(f);
  }
  if (result === undefined) throw acseError('bad_aare', 'an AARE without a result');
  return { ...out, result, resultText: RESULTS[result] ?? `result ${result}` };
}

function decodeRelease(kind: 'RLRQ' | 'RLRE', fields: Tlv[]): AcseApdu {
  const reasons = kind === 'RLRQ' ? RELEASE_REQUEST_REASONS : RELEASE_RESPONSE_REASONS;
  const out: { kind: 'RLRQ' | 'RLRE'; reason?: number; reasonText: string; userInformation?: Uint8Array } = {
    kind,
    reasonText: 'no reason given',
  };
  for (const f of fields) {
    if (isTag(f, 'context', 0)) {
      out.reason = intOf(f);
      out.reasonText = reasons[out.reason] ?? `reason ${out.reason}`;
    } else if (isTag(f, 'context', 30)) out.userInformation = externalData(f);
  }
  return out;
}

function decodeAbrt(fields: Tlv[]): AcseApdu {
  const source = fields.find((f) => isTag(f, 'context', 0));
  if (source === undefined) throw acseError('bad_abrt', 'an ABRT without abort source');
  const code = intOf(source);
  const out: AcseApdu = {
    kind: 'ABRT',
    source: code,
    sourceText: code === 0 ? 'service user' : code === 1 ? 'service provider' : `source ${code}`,
  };
  const diagnostic = fields.find((f) => isTag(f, 'context', 1));
  if (diagnostic) {
    out.diagnostic = intOf(diagnostic);
    out.diagnosticText = ABORT_DIAGNOSTICS[out.diagnostic] ?? `diagnostic ${out.diagnostic}`;
  }
  const info = fields.find((f) => isTag(f, 'context', 30));
  if (info) out.userInformation = externalData(info);
  return out;
}

/** One ACSE APDU. */
export function decodeAcse(bytes: Uint8Array): AcseApdu {
  const top = readSingle(bytes);
  if (top.cls !== 'application') throw acseError('unknown_tag', `${tagName(top)} is not an ACSE APDU`);
  const fields = childrenOf(top);
  switch (top.tag) {
    case 0:
      return decodeAarq(fields);
    case 1:
      return decodeAare(fields);
    case 2:
      return decodeRelease('RLRQ', fields);
    case 3:
      return decodeRelease('RLRE', fields);
    case 4:
      return decodeAbrt(fields);
    default:
      throw acseError('unknown_tag', `${tagName(top)} is not an ACSE APDU`);
  }
}

/** Why an AARE refuses the association, in words, or undefined when it accepts it. */
export function aareRefusal(aare: Aare): string | undefined {
  if (aare.result === 0) return undefined;
  const why = aare.diagnostic
    ? `: ${aare.diagnostic.text} (${aare.diagnostic.source === 'service-user' ? 'peer application' : 'peer ACSE'})`
    : '';
  return `association ${aare.resultText}${why}`;
}
