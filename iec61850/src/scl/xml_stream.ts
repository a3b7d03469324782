/**
 * The XML layer: feeds decoded text to saxes (a well-formedness-checking streaming parser that never
 * expands entities) and hands elements and text on. It refuses what an SCL file has no use for and an
 * attacker has: a DOCTYPE (so no DTD, no entity declaration, no external entity) and any entity
 * reference beyond the five XML predefines. A DOCTYPE is caught as its first bytes arrive, before saxes
 * would collect its internal subset. Every fatal finding stops the read at once.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { DecodeError, decodeInput, type SclInput } from './decode.ts';
import type { Position, Reporter } from './report.ts';

/** Thrown (by this layer or by an element handler) to stop reading after a fatal error was reported. */
export class ParseStop extends Error {}

/** What the element layer hears. Handlers may throw `ParseStop`. */
export type XmlEvents = {
  /** `line` and `column` are where the start tag begins. */
  open(tag: SaxesTagNS, line: number, column: number): void;
  close(tag: SaxesTagNS): void;
  text(text: string): void;
};

/** Bounds on what one document may do. */
export type XmlLimits = { maxDepth: number };

const DOCTYPE = '<!DOCTYPE';
const ENTITY_MESSAGE =
  'entity reference refused: SCL files may use only the predefined entities &amp; &lt; &gt; &quot; &apos; and character references';

/** Length of the longest end of `text` that could begin `mark` (so a mark split over two chunks is seen). */
function heldBack(text: string, mark: string): number {
  for (let n = Math.min(mark.length - 1, text.length); n > 0; n--) {
    if (mark.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

function saxesMessage(message: string): string {
  const bare = message.replace(/^\d+:\d+: /, '').replace(/\.$/, '');
  return bare === 'undefined entity' ? ENTITY_MESSAGE : `malformed XML: ${bare}`;
}

/**
 * Reads the input to its end or to the first fatal error, which goes into the reporter with its line and
 * column. Returns true when the document was read to its end without one.
 */
export async function readXml(input: SclInput, events: XmlEvents, reporter: Reporter, limits: XmlLimits): Promise<boolean> {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const here = (): Position => ({ line: parser.line, column: Math.max(1, parser.column) });
  const stop = (message: string, at: Position): never => {
    reporter.error(message, at);
    throw new ParseStop(message);
  };
  let depth = 0;
  let rootSeen = false;
  let startLine = 1;
  let startColumn = 1;
  // Six handlers, no more: saxes adds each as a property of the parser, and a seventh tips the parser
  // object into V8's slow dictionary mode, which makes tokenising three to four times slower. A DOCTYPE
  // needs none: the prolog is searched for one below, and saxes itself refuses one anywhere else.
  parser.on('error', (err) => stop(saxesMessage(err.message), here()));
  parser.on('opentagstart', (tag) => {
    rootSeen = true;
    startLine = parser.line;
    startColumn = Math.max(1, parser.column - tag.name.length - 1);
    if (++depth > limits.maxDepth)
      stop(`elements are nested deeper than ${limits.maxDepth} levels`, { line: startLine, column: startColumn });
  });
  parser.on('opentag', (tag) => events.open(tag, startLine, startColumn));
  parser.on('closetag', (tag) => {
    depth--;
    events.close(tag);
  });
  parser.on('text', (text) => events.text(text));
  parser.on('cdata', (text) => events.text(text));

  // Before the root element a DOCTYPE may come; look for it in the raw text, holding back a possible
  // split mark, so that saxes never starts on one.
  let held = '';
  const feed = (piece: string) => {
    if (rootSeen && held === '') return void parser.write(piece);
    const text = held + piece;
    held = '';
    if (rootSeen) return void parser.write(text);
    const at = text.indexOf(DOCTYPE);
    if (at < 0) {
      const keep = heldBack(text, DOCTYPE);
      held = text.slice(text.length - keep);
      return void parser.write(text.slice(0, text.length - keep));
    }
    parser.write(text.slice(0, at));
    if (!rootSeen)
      stop('a DOCTYPE is not allowed in an SCL file (no DTD, no entity declarations)', { line: parser.line, column: parser.column + 1 });
    parser.write(text.slice(at));
  };

  try {
    for await (const piece of decodeInput(input, (message) => reporter.warning(message, { line: 1, column: 1 }))) feed(piece);
    if (held) parser.write(held);
    parser.close();
    return true;
  } catch (err) {
    if (err instanceof ParseStop) return false;
    if (!(err instanceof DecodeError)) throw err;
    try {
      feed(err.text);
    } catch (inner) {
      if (inner instanceof ParseStop) return false;
      throw inner;
    }
    reporter.error(err.message, { line: parser.line, column: parser.column + 1 });
    return false;
  }
}
