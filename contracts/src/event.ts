/**
 * Events are defined once, like operations: a name (its subject under `events.`), the service that
 * publishes it, who else follows it, and the schema of its body. Publishers encode through the
 * definition and followers decode through it (`encodeEvent`, `decodeEvent`), both checked against the
 * schema; no subject is written by hand outside the contracts.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ServiceName } from './operation.ts';
import { checkerOf, isoTime } from './validate.ts';

/** The subject every event lives under: `events.<name>[.<kind>]`. */
export const eventRoot = 'events';

/** Every event's subject. */
export const allEvents = `${eventRoot}.>`;

/** A defined event. `K` are the kinds its last subject token takes (`created`, …); `never` for an event of one subject. */
export type EventDefinition<S extends TSchema = TSchema, K extends string = string> = {
  /** Dotted, publisher first: `protocol.report`, `auth.user`. */
  readonly name: string;
  readonly publisher: ServiceName;
  /** Services that follow it on the bus besides the gateways (which follow every event). */
  readonly followers: readonly ServiceName[];
  readonly summary: string;
  /** The body, `at` (when it was published) included. */
  readonly schema: S;
  /** The kinds, in order; empty for an event of one subject. */
  readonly kinds: readonly K[];
  /** The subject of one kind (of the event itself when it has no kinds). */
  subject(kind?: K): string;
  /** Every subject it is published on: one per kind (the event's own when it has none). Followers subscribe to these. */
  readonly subjects: readonly string[];
  /**
   * The wildcard covering every kind of it, for permissions. It may cover another event's subject too
   * (`events.config.script.*` covers `events.config.script.ran`), so followers subscribe to `subjects`.
   */
  readonly pattern: string;
  /** A body as its followers receive it, `at` included: what the registry's tests publish of it. */
  readonly example: Static<S>;
};

/** The body of an event as its followers receive it. */
export type EventMessage<E extends EventDefinition> = Static<E['schema']>;

/** The body of an event as its publisher gives it: `at` (when it happened) is the time it is published unless given. */
export type EventBody<E extends EventDefinition> = Omit<Static<E['schema']>, 'at'> & { at?: string };

/** Defines an event. */
export function defineEvent<S extends TSchema, const K extends string = never>(def: {
  name: string;
  publisher: ServiceName;
  followers?: readonly ServiceName[];
  summary: string;
  schema: S;
  kinds?: readonly K[];
  example: Static<S>;
}): EventDefinition<S, K> {
  const base = `${eventRoot}.${def.name}`;
  const kinds = def.kinds ?? [];
  return {
    name: def.name,
    publisher: def.publisher,
    followers: def.followers ?? [],
    summary: def.summary,
    schema: def.schema,
    kinds,
    subject: (kind?: K) => {
      if (kinds.length === 0) return base;
      if (kind === undefined || !kinds.includes(kind)) throw new Error(`event ${def.name} has no kind ${String(kind)}`);
      return `${base}.${kind}`;
    },
    subjects: kinds.length === 0 ? [base] : kinds.map((k) => `${base}.${k}`),
    pattern: kinds.length === 0 ? base : `${base}.*`,
    example: def.example,
  };
}

/** An event body that does not match its definition's schema. */
export class EventShapeError extends Error {
  override readonly name = 'EventShapeError';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Small messages share blocks of this size instead of each holding a buffer of its own (an object, its
 * memory outside the heap and what the garbage collector does for each), as Node's own `Buffer` pool
 * does; a message larger than `smallBytes` gets its own. A block lives while any message in it does, so
 * a message kept for long keeps at most this much.
 */
const sharedBlockBytes = 16 * 1024;
const smallBytes = 2048;
let sharedBlock = new Uint8Array(0);
let sharedUsed = 0;

/** Room for `size` bytes in the shared block (a new block when the rest of this one is too small). */
function sharedRoom(size: number): void {
  if (sharedUsed + size > sharedBlock.length) {
    sharedBlock = new Uint8Array(sharedBlockBytes);
    sharedUsed = 0;
  }
}

/** A copy of `data` that nobody else writes into: in a shared block when small, else a buffer of its own. */
export function copyBytes(data: Uint8Array): Uint8Array {
  const size = data.byteLength;
  if (size > smallBytes) return new Uint8Array(data);
  sharedRoom(size);
  const start = sharedUsed;
  sharedBlock.set(data, start);
  sharedUsed += size;
  return sharedBlock.subarray(start, sharedUsed);
}

/** `text` in UTF-8: in a shared block when small (at most three bytes a UTF-16 unit), else a buffer of its own. */
function utf8(text: string): Uint8Array {
  const most = text.length * 3;
  if (most > smallBytes) return encoder.encode(text);
  sharedRoom(most);
  const start = sharedUsed;
  const { written } = encoder.encodeInto(text, sharedBlock.subarray(start));
  sharedUsed += written;
  return sharedBlock.subarray(start, sharedUsed);
}

/**
 * Bodies already read and checked, by the bytes they were read from: an event's publisher reads its own
 * message back to check it (`encodeEvent`), and followers in the same process (the in-process bus hands
 * them one copy of the bytes, `carryDecoded`) take that body instead of parsing and checking the bytes
 * again, each of them; a value event heard by the history and the live channel is read once. The body is
 * frozen, since every follower shares it. A body is kept for one to two seconds (two generations, the
 * older dropped each second), whatever holds its bytes longer (the live channel's event log holds them
 * for minutes): a follower later than that reads the bytes itself.
 */
const decodedGenerationMs = 1000;
type Decoded = {
  schema: TSchema;
  body: unknown;
  /** Where each item of the body's listed array lies in the bytes (start and end, in turn), when they were encoded one by one. */
  items?: readonly number[];
};
let decodedNow = new WeakMap<Uint8Array, Decoded>();
let decodedBefore = new WeakMap<Uint8Array, Decoded>();
let decodedSince = 0;

function decodedOf(data: Uint8Array): Decoded | undefined {
  return decodedNow.get(data) ?? decodedBefore.get(data);
}

function keepDecoded(data: Uint8Array, known: Decoded): void {
  const now = Date.now();
  if (now - decodedSince >= decodedGenerationMs) {
    decodedBefore = now - decodedSince >= 2 * decodedGenerationMs ? new WeakMap() : decodedNow;
    decodedNow = new WeakMap();
    decodedSince = now;
  }
  decodedNow.set(data, known);
}

/** Freezes a body read from JSON, every object and array in it. */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  Object.freeze(value);
  if (Array.isArray(value)) for (const item of value) deepFreeze(item);
  else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
}

/**
 * The bytes `to` are a copy of `from` (the in-process bus's copy of a message it carries): a body read
 * and checked from `from` serves `to` as well.
 */
export function carryDecoded(from: Uint8Array, to: Uint8Array): void {
  const known = decodedOf(from);
  if (known !== undefined) keepDecoded(to, known);
}

/**
 * An event's message: its body (with `at` set to now unless given), checked against the definition as its
 * followers will read it, after JSON: a body the schema takes only before (a required value that is
 * `undefined`, a `Date` where a string belongs) would be refused by every follower, so it is the
 * publisher's error.
 */
export function encodeEvent<E extends EventDefinition>(event: E, body: EventBody<E>): Uint8Array {
  const json = JSON.stringify({ at: isoTime(Date.now()), ...body });
  const sent: unknown = JSON.parse(json);
  const check = checkerOf(event.schema);
  if (!check.Check(sent)) {
    const first = check.Errors(sent).First();
    throw new EventShapeError(`${event.name}: ${first ? `${first.path} ${first.message}` : 'does not match its schema'}`);
  }
  const bytes = utf8(json);
  deepFreeze(sent);
  keepDecoded(bytes, { schema: event.schema, body: sent });
  return bytes;
}

/** Pieces of text in UTF-8, one after the other, in a shared block when small; with where each ends in the bytes. */
function utf8Pieces(pieces: readonly string[]): { bytes: Uint8Array; ends: number[] } {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const ends: number[] = [];
  if (length * 3 > smallBytes) {
    const bytes = new Uint8Array(length * 3);
    let used = 0;
    for (const piece of pieces) {
      used += encoder.encodeInto(piece, bytes.subarray(used)).written;
      ends.push(used);
    }
    return { bytes: bytes.slice(0, used), ends };
  }
  sharedRoom(length * 3);
  const start = sharedUsed;
  for (const piece of pieces) {
    sharedUsed += encoder.encodeInto(piece, sharedBlock.subarray(sharedUsed)).written;
    ends.push(sharedUsed - start);
  }
  return { bytes: sharedBlock.subarray(start, sharedUsed), ends };
}

/**
 * An event's message from the service that defines it, whose code alone shapes the body (a session's
 * reports): made once, not read back nor checked against the schema (`encodeEvent` does both, for
 * bodies made from what came from outside; the tests check what each publisher sends). The body must be
 * what its JSON reads back as (no `undefined`, no `Date`, no class instances): it is frozen and given as
 * it is to the followers in this process (`decodeEvent`), as a checked body is; followers elsewhere read
 * and check the bytes.
 *
 * `listed` names an array of the body (its last key) whose items are encoded one by one, each then found
 * by `listedItems` in the bytes: the live channel writes a report's values as they are in the event.
 */
export function encodeOwnEvent<E extends EventDefinition>(event: E, body: EventBody<E>, listed?: string): Uint8Array {
  const sent = { at: isoTime(Date.now()), ...body } as Record<string, unknown>;
  const list = listed === undefined ? undefined : sent[listed];
  if (listed === undefined || !Array.isArray(list)) {
    const bytes = utf8(JSON.stringify(sent));
    deepFreeze(sent);
    keepDecoded(bytes, { schema: event.schema, body: sent });
    return bytes;
  }
  const { [listed]: _list, ...rest } = sent;
  const head = JSON.stringify(rest);
  const pieces = [`${head.length > 2 ? `${head.slice(0, -1)},` : '{'}${JSON.stringify(listed)}:[`];
  for (let i = 0; i < list.length; i++) {
    if (i > 0) pieces.push(',');
    pieces.push(JSON.stringify(list[i]));
  }
  pieces.push(']}');
  const { bytes, ends } = utf8Pieces(pieces);
  const items: number[] = [];
  for (let i = 0; i < list.length; i++) {
    // The item's piece is the 1st, 3rd, 5th… after the head (commas between them).
    const piece = 1 + 2 * i;
    items.push(ends[piece - 1]!, ends[piece]!);
  }
  deepFreeze(sent);
  keepDecoded(bytes, { schema: event.schema, body: sent, items });
  return bytes;
}

/**
 * The bytes of each item of an event's listed array, as its publisher encoded them (`encodeOwnEvent`),
 * views into `data`; undefined when this process does not know them (the bytes came from elsewhere, or
 * long ago): the caller then encodes the items from the decoded body.
 */
export function listedItems(data: Uint8Array): Uint8Array[] | undefined {
  const items = decodedOf(data)?.items;
  if (items === undefined) return undefined;
  const out: Uint8Array[] = [];
  for (let i = 0; i < items.length; i += 2) out.push(data.subarray(items[i]!, items[i + 1]!));
  return out;
}

/** A received event's body, checked against its definition; null when it is not JSON or not of that shape. */
export function decodeEvent<E extends EventDefinition>(event: E, data: Uint8Array): EventMessage<E> | null {
  const known = decodedOf(data);
  if (known !== undefined && known.schema === event.schema) return known.body as EventMessage<E>;
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  return checkerOf(event.schema).Check(body) ? (body as EventMessage<E>) : null;
}

/** The kind a subject of `event` names; undefined for an event without kinds, null when the subject is not the event's. */
export function kindOf<K extends string>(event: EventDefinition<TSchema, K>, subject: string): K | undefined | null {
  const base = `${eventRoot}.${event.name}`;
  if (event.kinds.length === 0) return subject === base ? undefined : null;
  if (!subject.startsWith(`${base}.`)) return null;
  const kind = subject.slice(base.length + 1) as K;
  return event.kinds.includes(kind) ? kind : null;
}
