/**
 * A large reply checked against its schema and made into JSON a piece at a time, the event loop free
 * between pieces: a trend of 10,000 points checked and written in one go held the main thread for 50–300 ms,
 * and every other request, the store's answers and the lease renewals with it. The JSON is the very text
 * `JSON.stringify` makes of the whole value, so nothing on the wire changes.
 */
import { setImmediate } from 'node:timers';
import { checkerOf, type Operation } from '@scada/contracts';

/** A schema of the contract (an operation's response, or a part of one). */
type TSchema = Operation['response'];

/**
 * An array of more than this many items makes the reply one of pieces: checked and written 100 items at a
 * time, a turn of the event loop whenever a slice's time is over ({@link slices}; until 2026-11-30 a fixed
 * 1,000 items a turn, some 8 ms of work each on a busy machine).
 */
export const itemsAPiece = 1000;

/** A turn of the event loop for whatever waits: timers, I/O, other requests' work. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The most time a long piece of work on the main thread runs before it gives the event loop a turn ({@link slices}). */
export const sliceMs = 4;

/**
 * Time slices for a long loop on the main thread: `due()` says once the slice's time is over, and
 * `next()` gives the event loop a turn and starts the next slice.
 *
 *     const slice = slices();
 *     for (const item of items) { work(item); if (slice.due()) await slice.next(); }
 */
export function slices(ms = sliceMs): { due(): boolean; next(): Promise<void> } {
  let ends = performance.now() + ms;
  return {
    due: () => performance.now() >= ends,
    next: async () => {
      await nextTurn();
      ends = performance.now() + ms;
    },
  };
}

/** Items of a large array handled between two looks at the clock ({@link slices}). */
const itemsAStep = 100;

/**
 * `map` of a large array in time slices ({@link slices}), a turn of the event loop between them: for
 * rows a handler makes into its answer's items.
 */
export async function mapInPieces<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  const out: U[] = new Array(items.length);
  const slice = slices();
  for (let start = 0; start < items.length; start += itemsAStep) {
    if (start > 0 && slice.due()) await slice.next();
    const end = Math.min(items.length, start + itemsAStep);
    for (let i = start; i < end; i++) out[i] = fn(items[i] as T);
  }
  return out;
}

/** Keywords of an array schema that speak of the array as a whole, which a check of its items apart would miss. */
const wholeArrayKeywords = ['minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains', 'prefixItems'];

/** The schema of an array whose items may be checked one piece at a time: a plain `Type.Array` of a schema. */
function itemsSchemaOf(schema: unknown): TSchema | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as Record<string, unknown>;
  if (s.type !== 'array' || typeof s.items !== 'object' || s.items === null || Array.isArray(s.items)) return undefined;
  if (wholeArrayKeywords.some((k) => k in s)) return undefined;
  return s.items as TSchema;
}

/** A value whose JSON is its own fields' (no `toJSON` of its own): an array, or a plain object. */
function plain(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** The large array of a reply, if it has one: the reply itself, or one of its top-level fields. */
function largeArrayOf(schema: TSchema, body: unknown): { key: string | null; items: unknown[]; itemsSchema: TSchema } | undefined {
  if (!plain(body)) return undefined;
  if (Array.isArray(body)) {
    const itemsSchema = itemsSchemaOf(schema);
    return itemsSchema && body.length > itemsAPiece ? { key: null, items: body, itemsSchema } : undefined;
  }
  const properties = (schema as { type?: unknown; properties?: Record<string, unknown> }).properties;
  if ((schema as { type?: unknown }).type !== 'object' || typeof properties !== 'object' || properties === null) return undefined;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (!Array.isArray(value) || value.length <= itemsAPiece || !Object.hasOwn(properties, key)) continue;
    const itemsSchema = itemsSchemaOf(properties[key]);
    if (itemsSchema) return { key, items: value, itemsSchema };
  }
  return undefined;
}

/**
 * The JSON of a reply with a large array, checked against `schema`, a turn of the event loop between its
 * pieces; `undefined` for any other reply (checked and written in one go by the caller), and `false` when
 * a piece does not match (the caller then checks the whole for its errors). The reply's other fields are
 * checked with the array taken as empty, then the array's items piece by piece.
 */
export async function checkedJsonInPieces(schema: TSchema, body: unknown): Promise<string | false | undefined> {
  const large = largeArrayOf(schema, body);
  if (!large) return undefined;
  const { key, items, itemsSchema } = large;
  let check: ReturnType<typeof checkerOf>;
  try {
    check = checkerOf(itemsSchema);
  } catch {
    // An items schema that does not compile alone (one that refers to others): the whole is checked at once.
    return undefined;
  }
  if (key !== null && !checkerOf(schema).Check({ ...(body as Record<string, unknown>), [key]: [] })) return false;
  const pieces: string[] = [];
  const slice = slices();
  for (let start = 0; start < items.length; start += itemsAStep) {
    if (start > 0 && slice.due()) await slice.next();
    const piece = items.slice(start, start + itemsAStep);
    for (const item of piece) if (!check.Check(item)) return false;
    // `[a,b]` without its brackets; the pieces joined by commas make the whole array's `[a,b,c,d]`. (An
    // item's `toJSON` is handed its index within the piece, not the array: replies hold plain rows, whose only
    // `toJSON` is a Date's, which ignores it.)
    pieces.push(JSON.stringify(piece).slice(1, -1));
  }
  const array = `[${pieces.join(',')}]`;
  if (key === null) return array;
  // The object's fields in `JSON.stringify`'s order (its own enumerable keys), those it leaves out left out.
  const fields: string[] = [];
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    const json = name === key ? array : (JSON.stringify(value) as string | undefined);
    if (json !== undefined) fields.push(`${JSON.stringify(name)}:${json}`);
  }
  return `{${fields.join(',')}}`;
}
