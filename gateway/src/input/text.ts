import { ProblemError } from '@scada/contracts';
import { assertClean } from './clean.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes as UTF-8 text, a byte order mark kept; anything that is not UTF-8 answers 400 `malformed_body`. */
export function decodeUtf8(bytes: Uint8Array, detail = 'The body is not valid UTF-8'): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new ProblemError('malformed_body', detail);
  }
}

/**
 * JSON text (a body, or a JSON part of a form) as a value the services may see: a leading byte order
 * mark is skipped, text that is not JSON answers 400 `malformed_body`, and the value is checked by
 * {@link assertClean} under `root`.
 */
export function parseJsonText(text: string, root: string, what = 'The body'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new ProblemError('malformed_body', `${what} is not JSON`, { cause: err });
  }
  assertClean(value, root);
  return value;
}
