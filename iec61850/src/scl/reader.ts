/**
 * The SCL reader: turns the element events of the XML layer into the model. It keeps a stack of frames,
 * one per element it knows; an element it does not know (vendor `Private` content, other namespaces, the
 * substation section, services) is skipped with everything inside it by counting depth alone.
 */
import { communicationOpeners } from './reader_communication.ts';
import { controlOpeners } from './reader_controls.ts';
import { enter, fatal, SCL_NS, type Frame, type Opener, type ReadContext, type Tag } from './reader_context.ts';
import { iedOpeners } from './reader_ied.ts';
import { templateOpeners } from './reader_templates.ts';
import type { XmlEvents } from './xml_stream.ts';

/** Handlers by the kind of the parent frame, then by the child's element name. */
const openers: Record<string, Record<string, Opener>> = {};
for (const table of [communicationOpeners, iedOpeners, controlOpeners, templateOpeners]) {
  for (const [parent, children] of Object.entries(table)) openers[parent] = { ...openers[parent], ...children };
}

const KNOWN_EDITIONS = new Set(['2003', '2007A', '2007B', '2007B4']);

function value(tag: Tag, name: string): string {
  return tag.attributes[name]?.value ?? '';
}

/** The identifying attribute of an element, for paths in the report (made from what the tag has). */
function keyOf(tag: Tag): string | undefined {
  const local = tag.local;
  let key: string | undefined;
  if (local === 'LN' || local === 'LN0') return undefined; // the opener sets the LN's name
  if (local === 'ConnectedAP') key = `${value(tag, 'iedName')}/${value(tag, 'apName')}`;
  else if (local === 'GSE' || local === 'SMV') key = `${value(tag, 'ldInst')}/${value(tag, 'cbName')}`;
  else if (local === 'P') key = value(tag, 'type');
  else key = (tag.attributes.name ?? tag.attributes.id ?? tag.attributes.inst)?.value;
  return key === undefined || key.length <= 64 ? key : `${key.slice(0, 64)}…`;
}

/** Reads the root: it must be `SCL` in the SCL namespace; its version attributes give the edition. */
function openRoot(ctx: ReadContext, tag: Tag, origin: Frame): Frame {
  if (tag.local !== 'SCL' || tag.uri !== SCL_NS) {
    const where = tag.uri ? `in namespace ${tag.uri}` : 'in no namespace';
    fatal(ctx, `not an SCL file: the root element is ${tag.local} ${where}, not SCL in ${SCL_NS}`, origin);
  }
  const version = tag.attributes.version?.value;
  const revision = tag.attributes.revision?.value ?? '';
  const release = tag.attributes.release?.value ?? '';
  const edition = version === undefined ? '2003' : `${version}${revision}${release}`;
  ctx.edition1 = version === undefined;
  if (!KNOWN_EDITIONS.has(edition)) ctx.reporter.warning(`unknown SCL version ${edition}; read as edition 2`, origin);
  ctx.model.edition = edition.slice(0, 32);
  ctx.reporter.edition = ctx.model.edition;
  ctx.reporter.place(ctx.model, origin);
  return enter(origin, 'SCL', ctx.model);
}

/** The element events that build `ctx.model`. */
export class SclReader implements XmlEvents {
  readonly #ctx: ReadContext;
  readonly #frames: Frame[] = [];
  /** Depth inside an element that is being skipped; 0 when reading. */
  #skipping = 0;
  /** The text of the current element when its frame collects text. */
  #text: string[] | undefined = undefined;
  #textLength = 0;

  constructor(ctx: ReadContext) {
    this.#ctx = ctx;
  }

  /** An element starts at `line`, `column`. */
  open(tag: Tag, line: number, column: number): void {
    if (this.#skipping > 0) {
      this.#skipping++;
      return;
    }
    const frames = this.#frames;
    const parent = frames.length === 0 ? undefined : frames[frames.length - 1];
    const opener = parent === undefined ? undefined : tag.uri === SCL_NS ? openers[parent.kind]?.[tag.local] : undefined;
    if (parent !== undefined && opener === undefined) {
      this.#skipping = 1;
      return;
    }
    const origin: Frame = {
      element: tag.local,
      key: keyOf(tag),
      line,
      column,
      parent,
      kind: '',
      node: undefined,
      text: false,
      close: undefined,
    };
    const opened = opener === undefined ? openRoot(this.#ctx, tag, origin) : opener(this.#ctx, tag, parent!.node, origin);
    if (opened === undefined) {
      this.#skipping = 1;
      return;
    }
    frames.push(opened);
    if (opened.text) {
      this.#text = [];
      this.#textLength = 0;
    }
  }

  /** The current element ends. */
  close(): void {
    if (this.#skipping > 0) {
      this.#skipping--;
      return;
    }
    const closed = this.#frames.pop();
    if (closed === undefined || closed.close === undefined) return;
    let collected = '';
    if (closed.text) {
      const text = this.#text;
      collected = text === undefined ? '' : text.length === 1 ? text[0] : text.join('');
      this.#text = undefined;
    }
    closed.close(this.#ctx, closed, collected);
  }

  /** Text inside the current element (whitespace between elements included). */
  text(piece: string): void {
    if (this.#text === undefined || this.#skipping > 0) return;
    this.#textLength += piece.length;
    if (this.#textLength > this.#ctx.maxValueLength) {
      const at = this.#frames[this.#frames.length - 1];
      fatal(this.#ctx, `the text of ${at.element} is longer than ${this.#ctx.maxValueLength} characters`, at);
    }
    this.#text.push(piece);
  }
}
