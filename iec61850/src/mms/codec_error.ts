/**
 * The one error every decoder and encoder of the MMS client stack raises: which layer refused the bytes,
 * a stable snake_case code to branch on, and a message for people. Anything else escaping a decoder is a bug.
 */

/** The layers of the stack, bottom up. */
export type Layer = 'ber' | 'tpkt' | 'cotp' | 'session' | 'presentation' | 'acse' | 'mms';

/** Raised when bytes cannot be read (or a value cannot be written) at one layer. */
export class CodecError extends Error {
  override readonly name = 'CodecError';
  readonly layer: Layer;
  /** Stable code, e.g. `length_past_end`, `unknown_tag`, `bad_version`. */
  readonly code: string;

  constructor(layer: Layer, code: string, message: string) {
    super(`${layer}: ${message}`);
    this.layer = layer;
    this.code = code;
  }
}

/** Runs a decoder and turns its refusal into a value; other exceptions still propagate (they are bugs). */
export function attempt<T>(decode: () => T): { ok: true; value: T } | { ok: false; error: CodecError } {
  try {
    return { ok: true, value: decode() };
  } catch (e) {
    if (e instanceof CodecError) return { ok: false, error: e };
    throw e;
  }
}
