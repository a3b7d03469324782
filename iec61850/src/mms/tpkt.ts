/**
 * RFC 1006 framing of ISO transport over TCP: a 4-octet header (version 3, reserved, 16-bit length that
 * counts the header) before each TPDU, and a deframer that turns TCP segments of any size back into frames.
 */
import { concat } from './ber.ts';
import { CodecError } from './codec_error.ts';

/** Octets of the TPKT header. */
export const TPKT_HEADER_LENGTH = 4;
/** The smallest frame RFC 1006 allows: header plus the shortest TPDU. */
export const TPKT_MIN_LENGTH = 7;
/** The largest frame the 16-bit length can describe. */
export const TPKT_MAX_LENGTH = 65535;

/** Turns TCP bytes into whole TPKT frames; `push` throws a {@link CodecError} on a bad header, and every push after. */
export type TpktDeframer = {
  /** Adds received bytes; returns the frames they complete (header included), in order. */
  push(chunk: Uint8Array): Uint8Array[];
  /** Octets received but not yet part of a whole frame. */
  readonly buffered: number;
};

/** A frame around one TPDU. */
export function encodeTpkt(tpdu: Uint8Array): Uint8Array {
  const length = tpdu.length + TPKT_HEADER_LENGTH;
  if (length < TPKT_MIN_LENGTH || length > TPKT_MAX_LENGTH) {
    throw new CodecError(
      'tpkt',
      'bad_length',
      `a TPDU of ${tpdu.length} octets cannot be framed (frame ${TPKT_MIN_LENGTH}..${TPKT_MAX_LENGTH})`,
    );
  }
  return concat(Uint8Array.of(3, 0, length >> 8, length & 0xff), tpdu);
}

/** Checks the header octets present at `at`; returns the frame length once all four are there. */
function headerLength(buf: Uint8Array, at: number): number | undefined {
  if (buf.length > at && buf[at] !== 3) throw new CodecError('tpkt', 'bad_version', `version ${buf[at]} (3 expected)`);
  if (buf.length < at + TPKT_HEADER_LENGTH) return undefined;
  const length = (buf[at + 2] << 8) | buf[at + 3];
  if (length < TPKT_MIN_LENGTH) throw new CodecError('tpkt', 'bad_length', `frame length ${length} is below ${TPKT_MIN_LENGTH}`);
  return length;
}

/** The frame starting at `at`: its TPDU and where the next frame begins, or undefined when more bytes are needed. */
export function readTpkt(buf: Uint8Array, at = 0): { tpdu: Uint8Array; next: number } | undefined {
  const length = headerLength(buf, at);
  if (length === undefined || buf.length < at + length) return undefined;
  return { tpdu: buf.subarray(at + TPKT_HEADER_LENGTH, at + length), next: at + length };
}

/** The TPDU of a buffer that must be exactly one whole frame. */
export function decodeTpkt(frame: Uint8Array): Uint8Array {
  const read = readTpkt(frame);
  if (read === undefined) {
    const declared = frame.length >= TPKT_HEADER_LENGTH ? `${(frame[2] << 8) | frame[3]}` : 'an unknown number of';
    throw new CodecError('tpkt', 'truncated', `frame of ${frame.length} octets, header declares ${declared} octets`);
  }
  if (read.next !== frame.length) throw new CodecError('tpkt', 'trailing_bytes', `${frame.length - read.next} octets follow the frame`);
  return read.tpdu;
}

/** A deframer for one TCP connection. */
export function createTpktDeframer(): TpktDeframer {
  let pending: Uint8Array = new Uint8Array(0);
  let failure: CodecError | undefined;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk) {
      if (failure) throw failure;
      pending = pending.length === 0 ? chunk.slice() : concat(pending, chunk);
      const frames: Uint8Array[] = [];
      let at = 0;
      try {
        for (let read = readTpkt(pending, at); read; read = readTpkt(pending, at)) {
          frames.push(pending.slice(at, read.next));
          at = read.next;
        }
      } catch (e) {
        // a stream with a bad header cannot be resynchronised: refuse everything from now on
        if (e instanceof CodecError) failure = e;
        throw e;
      }
      pending = pending.slice(at);
      return frames;
    },
  };
}
