/**
 * What the element handlers of the SCL reader share: the frame they open, the context they read into,
 * and small readers for attributes that report what is missing or malformed.
 */
import type { SaxesTagNS } from 'saxes';
import type { SclModel } from './model.ts';
import type { Origin, Reporter } from './report.ts';
import { ParseStop } from './xml_stream.ts';

/** The SCL namespace of every edition. */
export const SCL_NS = 'http://www.iec.ch/61850/2003/SCL';

/** A start tag as saxes gives it in namespace mode. */
export type Tag = SaxesTagNS;

/** Runs at an element's end tag, with the element's text when its frame collects text. */
export type Closer = (ctx: ReadContext, frame: Frame, text: string) => void;

/**
 * An element being read: where it is (a frame is its own origin, so reading an element allocates one
 * object), what it is, the model object it fills, and what to do at its end tag. Closers are module-level
 * functions that find their data in `node`, so reading an element creates no closure.
 */
export type Frame = Origin & {
  kind: string;
  node: unknown;
  /** When true, the element's text is collected and handed to `close`. */
  text: boolean;
  close: Closer | undefined;
};

/** Fills in a frame the reader has opened for an element, and returns it. */
export function enter(frame: Frame, kind: string, node: unknown, close?: Closer, text = false): Frame {
  frame.kind = kind;
  frame.node = node;
  frame.close = close;
  frame.text = text;
  return frame;
}

/** The state the handlers read into. */
export type ReadContext = {
  model: SclModel;
  reporter: Reporter;
  /** True once the root says the file is edition 1 (no `version` attribute). */
  edition1: boolean;
  maxValueLength: number;
  /** The name of the IED being read (MMS domain names start with it). */
  iedName: string;
  /** One copy of each string the model keeps (see `intern`). */
  strings: Map<string, string>;
};

/**
 * The one copy of a string that the model keeps. Names, types and values repeat thousands of times in a
 * large file, and saxes hands out slices of its input chunks: keeping a slice would keep the whole chunk.
 * The first copy of a long string is made fresh (`' ' + s` then `slice(1)` flattens into new storage).
 */
export function intern(ctx: ReadContext, s: string): string {
  if (s.length === 0) return '';
  let kept = ctx.strings.get(s);
  if (kept === undefined) {
    kept = s.length < 13 ? s : (' ' + s).slice(1);
    ctx.strings.set(kept, kept);
  }
  return kept;
}

/**
 * Opens a child element in the frame the reader made for it (`origin`): returns the frame filled in by
 * `enter`, or undefined to skip the element and its content.
 */
export type Opener = (ctx: ReadContext, tag: Tag, parent: unknown, origin: Frame) => Frame | undefined;

/** An error that ends the read: the file is unusable past it. */
export function fatal(ctx: ReadContext, message: string, origin: Origin): never {
  ctx.reporter.error(message, origin);
  throw new ParseStop(message);
}

/** An unprefixed attribute's value, refusing values longer than the limit. */
export function attr(ctx: ReadContext, tag: Tag, name: string, origin: Origin): string | undefined {
  const found = tag.attributes[name];
  if (found === undefined) return undefined;
  if (found.value.length > ctx.maxValueLength) {
    fatal(ctx, `attribute ${name} is longer than ${ctx.maxValueLength} characters`, origin);
  }
  return intern(ctx, found.value);
}

/** A required attribute: an error when it is missing or empty (the element is still read, named ''). */
export function need(ctx: ReadContext, tag: Tag, name: string, origin: Origin): string {
  const value = attr(ctx, tag, name, origin);
  if (value === undefined || value === '') ctx.reporter.error(`${origin.element} without the required attribute ${name}`, origin);
  return value ?? '';
}

/**
 * A type id or a reference to one: an error when missing, but an empty value is read as the id '' (tools
 * in the field write such files; whether the empty id is referenced consistently is checked at the end).
 */
export function typeName(ctx: ReadContext, tag: Tag, name: string, origin: Origin): string {
  const value = attr(ctx, tag, name, origin);
  if (value === undefined) ctx.reporter.error(`${origin.element} without the required attribute ${name}`, origin);
  return value ?? '';
}

/** An `xs:boolean` attribute, with its schema default; a malformed value is a warning. */
export function flag(ctx: ReadContext, tag: Tag, name: string, fallback: boolean, origin: Origin): boolean {
  const value = attr(ctx, tag, name, origin);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  ctx.reporter.warning(`${origin.element}@${name}="${value}" is not a boolean; ${fallback} is assumed`, origin);
  return fallback;
}

/** An unsigned integer attribute; a malformed value is a warning and reads as absent. */
export function whole(ctx: ReadContext, tag: Tag, name: string, origin: Origin): number | undefined {
  const value = attr(ctx, tag, name, origin);
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,15}$/.test(trimmed)) return Number(trimmed);
  ctx.reporter.warning(`${origin.element}@${name}="${value}" is not an unsigned integer`, origin);
  return undefined;
}

/** Copies the optional attributes that are present onto the object. */
export function optional<T extends object>(ctx: ReadContext, tag: Tag, origin: Origin, target: T, names: readonly (keyof T & string)[]): T {
  for (const name of names) {
    const value = attr(ctx, tag, name, origin);
    if (value !== undefined) (target as Record<string, unknown>)[name] = value;
  }
  return target;
}

/** Warns (once per element and attribute) about edition-2 attributes in an edition-1 file. */
export function edition2Only(ctx: ReadContext, tag: Tag, origin: Origin, names: readonly string[]): void {
  if (!ctx.edition1) return;
  for (const name of names) {
    if (tag.attributes[name] === undefined) continue;
    ctx.reporter.warnOnce(
      `ed2:${origin.element}@${name}`,
      `${origin.element}@${name} is an edition-2 attribute in an edition-1 (2003) file`,
      origin,
    );
  }
}

/** A record without a prototype, so that no key of the file can reach `Object.prototype`. */
export function bareRecord<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
