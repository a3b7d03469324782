/**
 * Bytes to text, piece by piece: picks the encoding from a byte-order mark or the XML declaration (UTF-8
 * when neither says), refuses bytes that are not valid in it, and never joins the input into one string.
 * Web-standard `TextDecoder` only, so Node and Deno decode alike.
 */

/** An SCL file as bytes, as text, or as chunks of either arriving over time (an upload being streamed). */
export type SclInput = Uint8Array | string | AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** Raised when the bytes cannot be read as text; `text` is what could be read before the bad bytes. */
export class DecodeError extends Error {
  readonly text: string;
  constructor(message: string, text: string) {
    super(message);
    this.text = text;
  }
}

/** Pieces a buffer is fed in, so no single string is as large as the file. */
const SLICE = 256 * 1024;
/** Bytes looked at to find the encoding. */
const SNIFF = 512;

async function* chunksOf(input: SclInput): AsyncGenerator<Uint8Array | string> {
  if (typeof input === 'string' || input instanceof Uint8Array) {
    for (let at = 0; at < input.length; at += SLICE) {
      yield typeof input === 'string' ? input.slice(at, at + SLICE) : input.subarray(at, at + SLICE);
    }
    return;
  }
  yield* input;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The encoding the first bytes show, and a warning when it is not UTF-8. */
function sniff(head: Uint8Array): { label: string; warning?: string } {
  const [a, b, c, d] = head;
  if (a === 0xef && b === 0xbb && c === 0xbf) return { label: 'utf-8' };
  if (a === 0xff && b === 0xfe) return { label: 'utf-16le', warning: 'the file is UTF-16 (little-endian); SCL files should be UTF-8' };
  if (a === 0xfe && b === 0xff) return { label: 'utf-16be', warning: 'the file is UTF-16 (big-endian); SCL files should be UTF-8' };
  if (a === 0x3c && b === 0 && c === 0x3f && d === 0) return { label: 'utf-16le', warning: 'the file is UTF-16 without a byte-order mark' };
  if (a === 0 && b === 0x3c && c === 0 && d === 0x3f) return { label: 'utf-16be', warning: 'the file is UTF-16 without a byte-order mark' };
  let ascii = '';
  for (const byte of head) ascii += byte < 0x80 ? String.fromCharCode(byte) : ' ';
  const declared = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(ascii)?.[1]?.toLowerCase();
  if (declared === undefined || declared === 'utf-8' || declared === 'utf8') return { label: 'utf-8' };
  if (declared.startsWith('utf-16'))
    return { label: 'utf-8', warning: `the file declares ${declared} but its bytes are not UTF-16; read as UTF-8` };
  return { label: declared, warning: `the file is encoded as ${declared}; SCL files should be UTF-8` };
}

function decoderFor(label: string): TextDecoder {
  try {
    return new TextDecoder(label, { fatal: true });
  } catch {
    throw new DecodeError(`unsupported character encoding "${label}"`, '');
  }
}

/** The text of bytes up to the first sequence the encoding does not allow. */
function readablePrefix(label: string, bytes: Uint8Array): string {
  const text = new TextDecoder(label).decode(bytes);
  const bad = text.indexOf('\uFFFD');
  return bad < 0 ? text : text.slice(0, bad);
}

/**
 * Decodes the input into text pieces. `warn` hears about an encoding other than UTF-8. Throws
 * `DecodeError` on bytes the encoding does not allow.
 */
export async function* decodeInput(input: SclInput, warn: (message: string) => void): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let label = 'utf-8';
  let head: Uint8Array = new Uint8Array(0);
  const decode = (bytes: Uint8Array, stream: boolean): string => {
    try {
      return decoder!.decode(bytes, { stream });
    } catch {
      throw new DecodeError(`the file is not valid ${label.toUpperCase()} text`, readablePrefix(label, bytes));
    }
  };
  const start = (bytes: Uint8Array) => {
    const found = sniff(bytes);
    label = found.label;
    decoder = decoderFor(label);
    if (found.warning) warn(found.warning);
    return decode(bytes, true);
  };
  for await (const chunk of chunksOf(input)) {
    if (typeof chunk === 'string') {
      if (decoder === undefined && head.length > 0) yield start(head);
      const first = decoder === undefined;
      decoder ??= decoderFor('utf-8');
      yield first && chunk.startsWith('\uFEFF') ? chunk.slice(1) : chunk;
      continue;
    }
    if (decoder !== undefined) {
      yield decode(chunk, true);
      continue;
    }
    head = head.length === 0 ? chunk : concat(head, chunk);
    if (head.length >= SNIFF) yield start(head);
  }
  if (decoder === undefined) {
    if (head.length === 0) return;
    yield start(head);
  }
  yield decode(new Uint8Array(0), false);
}
