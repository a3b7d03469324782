/**
 * ISO 8073 transport, class 0, as RFC 1006 runs it over TCP: CR/CC to connect (TSAP selectors, TPDU size),
 * DT to carry session bytes (EOT marks the last TPDU of a TSDU), DR and ER from a peer that refuses.
 */
import { concat } from './ber.ts';
import { CodecError } from './codec_error.ts';

/** A variable-part parameter of a TPDU header. */
export type CotpParameter = { code: number; value: Uint8Array };

/** A connection request or confirm. `tpduSize` is in octets (128..8192). */
export type CotpConnect = {
  kind: 'CR' | 'CC';
  dstRef: number;
  srcRef: number;
  classOption: number;
  tpduSize?: number;
  callingTsap?: Uint8Array;
  calledTsap?: Uint8Array;
  parameters: CotpParameter[];
};

/** Any class 0 TPDU a client sends or receives. */
export type CotpTpdu =
  | CotpConnect
  | { kind: 'DT'; eot: boolean; number: number; data: Uint8Array }
  | { kind: 'DR'; dstRef: number; srcRef: number; reason: number; reasonText: string; parameters: CotpParameter[] }
  | { kind: 'ER'; dstRef: number; cause: number; causeText: string; parameters: CotpParameter[] };

/** What the client puts in its CR. */
export type ConnectionRequestOptions = {
  srcRef: number;
  callingTsap?: Uint8Array;
  calledTsap?: Uint8Array;
  /** Largest TPDU proposed, a power of two from 128 to 8192; 8192 (code 0x0d) as in the capture. */
  tpduSize?: number;
};

/** Reassembles the DT TPDUs of one TSDU. */
export type DtReassembler = {
  /** Adds one DT; returns the whole TSDU when it carried EOT, else undefined. */
  push(dt: { eot: boolean; data: Uint8Array }): Uint8Array | undefined;
  /** Octets of DTs pushed without EOT so far (0: the next DT starts a TSDU). */
  readonly buffered: number;
};

const CR = 0xe0;
const CC = 0xd0;
const DR = 0x80;
const DT = 0xf0;
const ER = 0x70;
const PARAM_TPDU_SIZE = 0xc0;
const PARAM_CALLING_TSAP = 0xc1;
const PARAM_CALLED_TSAP = 0xc2;
/** Default ceiling of a reassembled TSDU: far above any MMS PDU size an IED negotiates. */
const DEFAULT_MAX_TSDU = 1 << 20;

const DISCONNECT_REASONS: Record<number, string> = {
  0: 'reason not specified',
  1: 'congestion at TSAP',
  2: 'session entity not attached to TSAP',
  3: 'address unknown',
  128: 'normal disconnect initiated by session entity',
  129: 'remote transport entity congestion at connect request time',
  130: 'connection negotiation failed',
  131: 'duplicate source reference',
  132: 'mismatched references',
  133: 'protocol error',
  135: 'reference overflow',
  136: 'connection request refused on this network connection',
  138: 'header or parameter length invalid',
};
const REJECT_CAUSES: Record<number, string> = {
  0: 'reason not specified',
  1: 'invalid parameter code',
  2: 'invalid TPDU type',
  3: 'invalid parameter value',
};

function cotpError(code: string, message: string): CodecError {
  return new CodecError('cotp', code, message);
}

function param(code: number, value: Uint8Array): Uint8Array {
  return concat(Uint8Array.of(code, value.length), value);
}

/** The CR TPDU: class 0, no options, TPDU size then called and calling TSAP, in the order the capture shows. */
export function encodeConnectionRequest(o: ConnectionRequestOptions): Uint8Array {
  const size = o.tpduSize ?? 8192;
  const sizeCode = Math.log2(size);
  if (!Number.isInteger(sizeCode) || sizeCode < 7 || sizeCode > 13)
    throw cotpError('bad_tpdu_size', `TPDU size ${size} is not a power of two from 128 to 8192`);
  const params = concat(
    param(PARAM_TPDU_SIZE, Uint8Array.of(sizeCode)),
    o.calledTsap ? param(PARAM_CALLED_TSAP, o.calledTsap) : new Uint8Array(0),
    o.callingTsap ? param(PARAM_CALLING_TSAP, o.callingTsap) : new Uint8Array(0),
  );
  const fixed = Uint8Array.of(CR, 0, 0, (o.srcRef >> 8) & 0xff, o.srcRef & 0xff, 0);
  return concat(Uint8Array.of(fixed.length + params.length), fixed, params);
}

/** A DT TPDU carrying `data`; `eot` marks the last TPDU of the TSDU. */
export function encodeData(data: Uint8Array, eot = true): Uint8Array {
  return concat(Uint8Array.of(2, DT, eot ? 0x80 : 0x00), data);
}

/** A TSDU cut into DT TPDUs of at most `tpduSize` octets each (header included), EOT on the last. */
export function segmentData(data: Uint8Array, tpduSize: number): Uint8Array[] {
  const room = tpduSize - 3;
  if (!Number.isInteger(room) || room < 1) throw cotpError('bad_tpdu_size', `TPDU size ${tpduSize} leaves no room for data`);
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length || out.length === 0; at += room) {
    out.push(encodeData(data.subarray(at, at + room), at + room >= data.length));
  }
  return out;
}

function readParameters(buf: Uint8Array, at: number, end: number): CotpParameter[] {
  const out: CotpParameter[] = [];
  while (at < end) {
    if (at + 2 > end) throw cotpError('bad_parameter', `parameter at offset ${at} has no length`);
    const length = buf[at + 1];
    if (at + 2 + length > end) throw cotpError('bad_parameter', `parameter 0x${buf[at].toString(16)} runs past the header`);
    out.push({ code: buf[at], value: buf.subarray(at + 2, at + 2 + length) });
    at += 2 + length;
  }
  return out;
}

function u16(buf: Uint8Array, at: number): number {
  return (buf[at] << 8) | buf[at + 1];
}

function decodeConnect(kind: 'CR' | 'CC', tpdu: Uint8Array, end: number): CotpConnect {
  if (end < 7) throw cotpError('bad_length', `${kind} header of ${end} octets`);
  const parameters = readParameters(tpdu, 7, end);
  const find = (code: number) => parameters.find((p) => p.code === code)?.value;
  const size = find(PARAM_TPDU_SIZE);
  if (size !== undefined && (size.length !== 1 || size[0] < 7 || size[0] > 13))
    throw cotpError('bad_tpdu_size', 'TPDU size parameter is invalid');
  const result: CotpConnect = { kind, dstRef: u16(tpdu, 2), srcRef: u16(tpdu, 4), classOption: tpdu[6], parameters };
  if (size !== undefined) result.tpduSize = 1 << size[0];
  const calling = find(PARAM_CALLING_TSAP);
  const called = find(PARAM_CALLED_TSAP);
  if (calling) result.callingTsap = calling;
  if (called) result.calledTsap = called;
  return result;
}

/** One TPDU (the payload of a TPKT frame). */
export function decodeCotp(tpdu: Uint8Array): CotpTpdu {
  if (tpdu.length < 2) throw cotpError('truncated', `a TPDU of ${tpdu.length} octets`);
  const end = tpdu[0] + 1;
  if (tpdu[0] === 255 || end > tpdu.length)
    throw cotpError('bad_length', `length indicator ${tpdu[0]} exceeds the TPDU of ${tpdu.length} octets`);
  const code = tpdu[1];
  switch (code & 0xf0) {
    case CR:
      return decodeConnect('CR', tpdu, end);
    case CC:
      return decodeConnect('CC', tpdu, end);
    case DT:
      if (end < 3) throw cotpError('bad_length', `DT header of ${end} octets`);
      return { kind: 'DT', eot: (tpdu[2] & 0x80) !== 0, number: tpdu[2] & 0x7f, data: tpdu.subarray(end) };
    case DR: {
      if (end < 7) throw cotpError('bad_length', `DR header of ${end} octets`);
      const reason = tpdu[6];
      const reasonText = DISCONNECT_REASONS[reason] ?? `reason ${reason}`;
      return { kind: 'DR', dstRef: u16(tpdu, 2), srcRef: u16(tpdu, 4), reason, reasonText, parameters: readParameters(tpdu, 7, end) };
    }
    case ER: {
      if (end < 5) throw cotpError('bad_length', `ER header of ${end} octets`);
      const cause = tpdu[4];
      return {
        kind: 'ER',
        dstRef: u16(tpdu, 2),
        cause,
        causeText: REJECT_CAUSES[cause] ?? `cause ${cause}`,
        parameters: readParameters(tpdu, 5, end),
      };
    }
    default:
      throw cotpError('unknown_tpdu', `TPDU code 0x${code.toString(16).padStart(2, '0')} is not used in class 0`);
  }
}

/** A reassembler that refuses a TSDU growing past `maxSize` octets. */
export function createDtReassembler(maxSize = DEFAULT_MAX_TSDU): DtReassembler {
  const parts: Uint8Array[] = [];
  let size = 0;
  return {
    get buffered() {
      return size;
    },
    push(dt) {
      size += dt.data.length;
      if (size > maxSize) {
        parts.length = 0;
        size = 0;
        throw cotpError('tsdu_too_large', `a TSDU grows past ${maxSize} octets`);
      }
      parts.push(dt.data);
      if (!dt.eot) return undefined;
      const whole = parts.length === 1 ? parts[0] : concat(...parts);
      parts.length = 0;
      size = 0;
      return whole;
    },
  };
}
