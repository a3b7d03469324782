/**
 * Test helpers for the MMS stack: hex in and out and the shared captures (from the testkit), and a check
 * that a decoder either answers or raises the stack's own CodecError.
 */
import { CodecError } from '../../src/mms/codec_error.ts';

export { CAPTURES, capturedFrames, fromHex, haveCaptures, toHex, type CapturedFrame } from '@scada/testkit/captures';

/** Runs `decode` and returns 'ok', or the CodecError's code; any other exception is rethrown (a bug). */
export function outcome(decode: () => unknown): string {
  try {
    decode();
    return 'ok';
  } catch (e) {
    if (e instanceof CodecError) return e.code;
    throw e;
  }
}

/** The CodecError a decoder raises; fails when it answers instead. */
export function codecError(decode: () => unknown): CodecError {
  try {
    decode();
  } catch (e) {
    if (e instanceof CodecError) return e;
    throw e;
  }
  throw new Error('the input was accepted');
}
