/**
 * ISO 8327 session, kernel and duplex functional units, as an MMS client needs it: CONNECT with the
 * parameters libiec61850 peers exchange, ACCEPT, DATA (GIVE TOKENS + DATA TRANSFER), FINISH, DISCONNECT,
 * ABORT and REFUSE. An SPDU is SI, LI, then parameter units (PI or PGI, LI, value).
 */
import { concat } from './ber.ts';
import { CodecError } from './codec_error.ts';

/** One parameter unit; `children` holds the PIs of a parameter group (PGI). */
export type SessionParameter = { code: number; value: Uint8Array; children?: SessionParameter[] };

/** The SPDUs a client sends or receives. `userData` is the presentation PDU inside. */
export type SessionSpdu =
  | SessionConnect
  | { kind: 'data'; userData: Uint8Array }
  | SessionRefuse
  | { kind: 'finish' | 'disconnect' | 'not-finished' | 'abort'; parameters: SessionParameter[]; userData?: Uint8Array }
  | { kind: 'abort-accept'; parameters: SessionParameter[] };

/** CONNECT or ACCEPT; in an ACCEPT `calledSelector` is the responding selector. */
export type SessionConnect = {
  kind: 'connect' | 'accept';
  parameters: SessionParameter[];
  version?: number;
  userRequirements?: number;
  callingSelector?: Uint8Array;
  calledSelector?: Uint8Array;
  userData?: Uint8Array;
};

/** REFUSE: the reason code and its meaning; user data only with reason 2. */
export type SessionRefuse = { kind: 'refuse'; parameters: SessionParameter[]; reason?: number; reasonText: string; userData?: Uint8Array };

/** What a CONNECT carries; the selectors default to 0001 as in the capture. */
export type ConnectOptions = { callingSelector?: Uint8Array; calledSelector?: Uint8Array; userData: Uint8Array };

const SI = {
  DATA: 1,
  NOT_FINISHED: 8,
  FINISH: 9,
  DISCONNECT: 10,
  REFUSE: 12,
  CONNECT: 13,
  ACCEPT: 14,
  ABORT: 25,
  ABORT_ACCEPT: 26,
} as const;
const PGI_CONNECT_ACCEPT = 5;
const PI_PROTOCOL_OPTIONS = 19;
const PI_VERSION = 22;
const PI_TRANSPORT_DISCONNECT = 17;
const PI_USER_REQUIREMENTS = 20;
const PI_CALLING_SELECTOR = 51;
const PI_CALLED_SELECTOR = 52;
const PI_REASON = 50;
const PI_USER_DATA = 193;
const PI_EXTENDED_USER_DATA = 194;
/** Version 2 only, no extended concatenation, duplex functional unit: what libiec61850 peers agree on. */
const VERSION_2 = 0x02;
const DUPLEX = 0x0002;
/** User data of a CONNECT beyond this goes in Extended User Data (ISO 8327 §8.3.1.19). */
const CONNECT_USER_DATA_MAX = 512;

const REFUSE_REASONS: Record<number, string> = {
  0: 'rejected by the called session user',
  1: 'rejected by the called session user: temporary congestion',
  2: 'rejected by the called session user (with user data)',
  129: 'session selector unknown',
  130: 'session user not attached to the session access point',
  131: 'session protocol machine congestion at connect time',
  132: 'proposed protocol versions not supported',
  133: 'rejected by the session protocol machine, no reason given',
  134: 'rejected by the session protocol machine: implementation restriction',
};

function sessionError(code: string, message: string): CodecError {
  return new CodecError('session', code, message);
}

function encodeLength(n: number): Uint8Array {
  if (n > 0xffff) throw sessionError('bad_length', `a session length of ${n}`);
  return n < 255 ? Uint8Array.of(n) : Uint8Array.of(255, n >> 8, n & 0xff);
}

function unit(code: number, value: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(code), encodeLength(value.length), value);
}

function spdu(si: number, ...units: Uint8Array[]): Uint8Array {
  const body = concat(...units);
  return concat(Uint8Array.of(si), encodeLength(body.length), body);
}

/** CONNECT with protocol options 0, version 2, duplex, the selectors and the user data (a CP PPDU). */
export function encodeConnect(o: ConnectOptions): Uint8Array {
  const item = concat(unit(PI_PROTOCOL_OPTIONS, Uint8Array.of(0)), unit(PI_VERSION, Uint8Array.of(VERSION_2)));
  return spdu(
    SI.CONNECT,
    unit(PGI_CONNECT_ACCEPT, item),
    unit(PI_USER_REQUIREMENTS, Uint8Array.of(DUPLEX >> 8, DUPLEX & 0xff)),
    unit(PI_CALLING_SELECTOR, o.callingSelector ?? Uint8Array.of(0, 1)),
    unit(PI_CALLED_SELECTOR, o.calledSelector ?? Uint8Array.of(0, 1)),
    unit(o.userData.length > CONNECT_USER_DATA_MAX ? PI_EXTENDED_USER_DATA : PI_USER_DATA, o.userData),
  );
}

/** GIVE TOKENS + DATA TRANSFER (`01 00 01 00`) before the user data. */
export function encodeDataSpdu(userData: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(SI.DATA, 0, SI.DATA, 0), userData);
}

/** FINISH carrying the user data (a presentation PDU holding an ACSE RLRQ). */
export function encodeFinish(userData: Uint8Array): Uint8Array {
  return spdu(SI.FINISH, unit(PI_USER_DATA, userData));
}

/** ABORT: transport connection released, user abort, with optional user data (an ACSE ABRT). */
export function encodeAbort(userData?: Uint8Array): Uint8Array {
  return spdu(SI.ABORT, unit(PI_TRANSPORT_DISCONNECT, Uint8Array.of(0x03)), userData ? unit(PI_USER_DATA, userData) : new Uint8Array(0));
}

/** Reads an LI at `at`: one octet, or 0xff and two more. */
function readLength(buf: Uint8Array, at: number): { length: number; next: number } {
  if (at >= buf.length) throw sessionError('truncated', `length expected at offset ${at}`);
  if (buf[at] !== 255) return { length: buf[at], next: at + 1 };
  if (at + 3 > buf.length) throw sessionError('truncated', `long length at offset ${at} runs past the end`);
  return { length: (buf[at + 1] << 8) | buf[at + 2], next: at + 3 };
}

function readUnits(buf: Uint8Array, groups: boolean): SessionParameter[] {
  const out: SessionParameter[] = [];
  for (let at = 0; at < buf.length; ) {
    const code = buf[at];
    const { length, next } = readLength(buf, at + 1);
    if (next + length > buf.length)
      throw sessionError('length_past_end', `parameter ${code} declares ${length} octets, ${buf.length - next} remain`);
    const value = buf.subarray(next, next + length);
    // PGI 1 and 5 group PIs; user data (193) is opaque
    out.push(groups && (code === 1 || code === PGI_CONNECT_ACCEPT) ? { code, value, children: readUnits(value, false) } : { code, value });
    at = next + length;
  }
  return out;
}

/** SI, and the parameter area of the SPDU at `at`. */
function readSpdu(buf: Uint8Array, at: number): { si: number; parameters: SessionParameter[]; next: number } {
  if (at >= buf.length) throw sessionError('truncated', `SPDU expected at offset ${at}`);
  const { length, next } = readLength(buf, at + 1);
  if (next + length > buf.length)
    throw sessionError('length_past_end', `SPDU ${buf[at]} declares ${length} octets, ${buf.length - next} remain`);
  return { si: buf[at], parameters: readUnits(buf.subarray(next, next + length), true), next: next + length };
}

function find(parameters: SessionParameter[], code: number): Uint8Array | undefined {
  return parameters.find((p) => p.code === code)?.value;
}

function userDataOf(parameters: SessionParameter[]): Uint8Array | undefined {
  return find(parameters, PI_USER_DATA) ?? find(parameters, PI_EXTENDED_USER_DATA);
}

function decodeConnectAccept(kind: 'connect' | 'accept', parameters: SessionParameter[]): SessionConnect {
  const out: SessionConnect = { kind, parameters };
  const item = parameters.find((p) => p.code === PGI_CONNECT_ACCEPT)?.children ?? [];
  const version = find(item, PI_VERSION);
  const requirements = find(parameters, PI_USER_REQUIREMENTS);
  const calling = find(parameters, PI_CALLING_SELECTOR);
  const called = find(parameters, PI_CALLED_SELECTOR);
  const userData = userDataOf(parameters);
  if (version?.length === 1) out.version = version[0];
  if (requirements?.length === 2) out.userRequirements = (requirements[0] << 8) | requirements[1];
  if (calling) out.callingSelector = calling;
  if (called) out.calledSelector = called;
  if (userData) out.userData = userData;
  return out;
}

function decodeRefuse(parameters: SessionParameter[]): SessionRefuse {
  const reason = find(parameters, PI_REASON);
  if (reason === undefined || reason.length === 0) return { kind: 'refuse', parameters, reasonText: 'no reason code' };
  const code = reason[0];
  const out: SessionRefuse = { kind: 'refuse', parameters, reason: code, reasonText: REFUSE_REASONS[code] ?? `reason code ${code}` };
  if (reason.length > 1) out.userData = reason.subarray(1);
  return out;
}

function withUserData<K extends 'finish' | 'disconnect' | 'not-finished' | 'abort'>(kind: K, parameters: SessionParameter[]): SessionSpdu {
  const userData = userDataOf(parameters);
  return userData ? { kind, parameters, userData } : { kind, parameters };
}

/** One SPDU, or GIVE TOKENS + DATA TRANSFER with its user information, from a whole TSDU. */
export function decodeSpdu(tsdu: Uint8Array): SessionSpdu {
  const first = readSpdu(tsdu, 0);
  if (first.si === SI.DATA) {
    // category 0 GIVE TOKENS comes first; the DATA TRANSFER after it owns the rest as user information
    if (first.next >= tsdu.length) throw sessionError('truncated', 'GIVE TOKENS without the DATA TRANSFER that must follow');
    const second = readSpdu(tsdu, first.next);
    if (second.si !== SI.DATA) throw sessionError('unexpected_spdu', `SPDU ${second.si} after GIVE TOKENS (DATA TRANSFER expected)`);
    return { kind: 'data', userData: tsdu.subarray(second.next) };
  }
  if (first.next !== tsdu.length) throw sessionError('trailing_bytes', `${tsdu.length - first.next} octets follow SPDU ${first.si}`);
  switch (first.si) {
    case SI.CONNECT:
      return decodeConnectAccept('connect', first.parameters);
    case SI.ACCEPT:
      return decodeConnectAccept('accept', first.parameters);
    case SI.REFUSE:
      return decodeRefuse(first.parameters);
    case SI.FINISH:
      return withUserData('finish', first.parameters);
    case SI.DISCONNECT:
      return withUserData('disconnect', first.parameters);
    case SI.NOT_FINISHED:
      return withUserData('not-finished', first.parameters);
    case SI.ABORT:
      return withUserData('abort', first.parameters);
    case SI.ABORT_ACCEPT:
      return { kind: 'abort-accept', parameters: first.parameters };
    default:
      throw sessionError('unknown_spdu', `SPDU identifier ${first.si} is not supported`);
  }
}
