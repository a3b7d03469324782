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
  /**
   * The same as `push`, each frame handed to `onFrame` as it is found, as the buffer holding it and where it
   * begins and ends: a frame whole in `chunk` is `chunk` itself with its bounds, not a view of it (a view of a
   * Node Buffer is an object of its own, and a read's answer is one frame of a few dozen octets).
   */
  each(chunk: Uint8Array, onFrame: (buf: Uint8Array, start: number, end: number) => void): void;
  /**
   * The same as `each`, asking `enough` before each whole frame of `chunk` after the first: once it answers
   * true the rest is left alone, and the offset where it begins is answered (`chunk.length` when every octet
   * was taken). The caller hands the rest to `each` or `some` later, before any newer octets.
   */
  some(chunk: Uint8Array, onFrame: (buf: Uint8Array, start: number, end: number) => void, enough: () => boolean): number;
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

/**
 * A deframer for one TCP connection. A frame that lies whole in one pushed chunk is a view of it, not a
 * copy: a socket hands every read a buffer of its own, which nothing writes again. A frame that spans
 * chunks is gathered into a buffer of its length as its octets arrive, copied once.
 */
export function createTpktDeframer(): TpktDeframer {
  const header = new Uint8Array(TPKT_HEADER_LENGTH);
  /** The frame being gathered across chunks, once its header is whole. */
  let gathering: Uint8Array | undefined;
  /** Octets of the header, then of the frame, gathered so far. */
  let filled = 0;
  let failure: CodecError | undefined;

  /** The length of the frame at `at` once its header is whole; a bad header fails this deframer for good. */
  const lengthAt = (buf: Uint8Array, at: number): number | undefined => {
    try {
      return headerLength(buf, at);
    } catch (e) {
      // a stream with a bad header cannot be resynchronised: refuse everything from now on
      if (e instanceof CodecError) failure = e;
      throw e;
    }
  };

  /** Adds octets of `chunk` from `at` to the frame being gathered; answers where the rest begins. */
  const gather = (chunk: Uint8Array, at: number, onFrame: (buf: Uint8Array, start: number, end: number) => void): number => {
    if (gathering === undefined) {
      const n = Math.min(TPKT_HEADER_LENGTH - filled, chunk.length - at);
      header.set(chunk.subarray(at, at + n), filled);
      filled += n;
      at += n;
      const length = lengthAt(header.subarray(0, filled), 0);
      if (length === undefined) return at;
      gathering = new Uint8Array(length);
      gathering.set(header);
    }
    const n = Math.min(gathering.length - filled, chunk.length - at);
    gathering.set(chunk.subarray(at, at + n), filled);
    filled += n;
    if (filled === gathering.length) {
      const whole = gathering;
      gathering = undefined;
      filled = 0;
      onFrame(whole, 0, whole.length);
    }
    return at + n;
  };

  /**
   * Whole frames of `chunk` (after the one being gathered, if any) to `onFrame`, in order, until `enough`
   * says so before one; answers where what was left alone begins.
   */
  const some = (chunk: Uint8Array, onFrame: (buf: Uint8Array, start: number, end: number) => void, enough?: () => boolean): number => {
    if (failure) throw failure;
    let at = filled > 0 ? gather(chunk, 0, onFrame) : 0;
    if (filled > 0) return chunk.length;
    // one frame at least is handed on each call: the one just gathered, else the first whole one here
    let first = at === 0;
    for (;;) {
      const length = lengthAt(chunk, at);
      if (length === undefined || chunk.length < at + length) break;
      if (!first && enough?.()) return at;
      first = false;
      onFrame(chunk, at, at + length);
      at += length;
    }
    return at < chunk.length ? gather(chunk, at, onFrame) : at;
  };
  const each = (chunk: Uint8Array, onFrame: (buf: Uint8Array, start: number, end: number) => void): void => void some(chunk, onFrame);

  return {
    get buffered() {
      return filled;
    },
    push(input) {
      // a plain view: the views taken of a Node Buffer are Buffers, each made by a constructor of its own
      const chunk = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
      const frames: Uint8Array[] = [];
      each(chunk, (buf, start, end) => frames.push(start === 0 && end === buf.length && buf !== chunk ? buf : buf.subarray(start, end)));
      return frames;
    },
    each,
    some: (chunk, onFrame, enough) => some(chunk, onFrame, enough),
  };
}
