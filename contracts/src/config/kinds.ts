import { FormatRegistry, Kind, Type, TypeRegistry, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { GetErrorFunction, SetErrorFunction, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

/*
 * Two schema kinds of our own, registered with TypeBox so that the gateway and the service check them the
 * same way, and written as plain JSON Schema so that the OpenAPI document shows them as they are:
 *
 * - UnicodeText: a string whose lengths count Unicode characters (code points), as JSON Schema defines
 *   `minLength` and `maxLength`. TypeBox's own string type counts UTF-16 units, so a 100-character name
 *   made of emoji (200 units) would be refused.
 * - OneOf: one of a few strings, as `{type: string, enum}`; a union of literals would fail as "Expected
 *   union value" instead of naming the values.
 * - NullOr: a value or null. A TypeBox union would report a wrong type only as "Expected union value";
 *   this kind reports the failure of the value's own schema.
 */
const textKind = 'UnicodeText';
const nullableKind = 'NullableValue';
const enumKind = 'StringEnum';

/** Code points of a string; a lone surrogate counts as one. */
export function unicodeLength(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** True when a string holds no lone surrogate, so that it has a UTF-8 form. */
export function isWellFormedText(value: string): boolean {
  // The runtime's own check where it has one (Node 20, Deno): its regular expression cost 0.2 s on a 2 MiB SVG,
  // which a create checks four times (gateway, service, reply).
  const native = (value as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(value) : !/\p{Cs}/u.test(value);
}

/** The constraints a text schema can carry; all of them appear in the OpenAPI document as written. */
export type TextOptions = {
  minLength?: number;
  maxLength: number;
  /** A format of the FormatRegistry (`color`, `http-url`, `date-time`). */
  format?: string;
  /** A regular expression, matched with the `u` flag. */
  pattern?: string;
  description?: string;
};

type TextSchema = TextOptions & { type: 'string' };

const patterns = new Map<string, RegExp>();

/** Why a value fails a text schema, or null when it passes. */
export function textProblem(schema: TextSchema, value: unknown): string | null {
  if (typeof value !== 'string') return 'Expected string';
  if (!isWellFormedText(value)) return 'Expected well-formed Unicode text (no lone surrogates)';
  const length = unicodeLength(value);
  if (schema.minLength !== undefined && length < schema.minLength) {
    return `Expected at least ${schema.minLength} characters, got ${length}`;
  }
  if (length > schema.maxLength) return `Expected at most ${schema.maxLength} characters (Unicode code points), got ${length}`;
  if (schema.format !== undefined) {
    const check = FormatRegistry.Get(schema.format);
    if (!check?.(value)) return `Expected string to match '${schema.format}' format`;
  }
  // The commonest pattern, as a plain search: its regular expression cost half a second on an SVG of 2 MiB.
  if (schema.pattern === noNulPattern) return value.includes('\u0000') ? `Expected string to match '${schema.pattern}'` : null;
  if (schema.pattern !== undefined) {
    let re = patterns.get(schema.pattern);
    if (!re) patterns.set(schema.pattern, (re = new RegExp(schema.pattern, 'u')));
    if (!re.test(value)) return `Expected string to match '${schema.pattern}'`;
  }
  return null;
}

type NullableSchema = { anyOf: [TSchema, { type: 'null' }] };
type EnumSchema = { type: 'string'; enum: readonly string[] };

registerKinds();

/** Registers both kinds with TypeBox once, and gives their failures a message that says what is wrong. */
function registerKinds(): void {
  if (TypeRegistry.Has(textKind)) return;
  TypeRegistry.Set<TextSchema>(textKind, (schema, value) => textProblem(schema, value) === null);
  TypeRegistry.Set<NullableSchema>(nullableKind, (schema, value) => value === null || Value.Check(schema.anyOf[0], value));
  TypeRegistry.Set<EnumSchema>(enumKind, (schema, value) => typeof value === 'string' && schema.enum.includes(value));
  const base = GetErrorFunction();
  SetErrorFunction((error) => {
    if (error.errorType === ValueErrorType.Kind && error.schema[Kind] === textKind) {
      return textProblem(error.schema as unknown as TextSchema, error.value) ?? base(error);
    }
    if (error.errorType === ValueErrorType.Kind && error.schema[Kind] === nullableKind) {
      const inner = (error.schema as unknown as NullableSchema).anyOf[0];
      return Value.Errors(inner, error.value).First()?.message ?? base(error);
    }
    if (error.errorType === ValueErrorType.Kind && error.schema[Kind] === enumKind) {
      return `Expected one of ${(error.schema as unknown as EnumSchema).enum.join(', ')}`;
    }
    return base(error);
  });
}

/** One of the given strings. */
export function OneOf<const T extends readonly string[]>(values: T, options: { description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ [Kind]: enumKind, type: 'string', enum: [...values], ...options });
}

/** A value of `schema`, or null; in the OpenAPI document `anyOf: [schema, {type: null}]`. */
export function NullOr<S extends TSchema>(schema: S): TUnsafe<Static<S> | null> {
  return Type.Unsafe<Static<S> | null>({ [Kind]: nullableKind, anyOf: [schema, { type: 'null' }] });
}

/** A string schema whose length limits count Unicode characters. */
export function UnicodeText(options: TextOptions): TUnsafe<string> {
  return Type.Unsafe<string>({ [Kind]: textKind, type: 'string', ...options });
}

/** Text the store can hold in a `text` column: no NUL character. */
export const noNulPattern = '^[^\\u0000]*$';

/** A name: 1 to 100 characters, no NUL. */
export function EntityName(description: string): TUnsafe<string> {
  return UnicodeText({ minLength: 1, maxLength: 100, pattern: noNulPattern, description });
}
