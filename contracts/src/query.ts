import { Type, type TArray, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** How list parameters travel, said once for the descriptions. */
export const listParameterRule =
  'Repeat the parameter (`ids=a&ids=b`) or send it once, comma separated (`ids=a,b`); a repeated value counts once.';

/**
 * A list in the query string, as the reference's server reads one: the parameter repeated, or given once
 * with its values comma separated. The gateway gathers the values (and drops repeats) before the schema
 * checks them, so `uniqueItems` never refuses a list a client repeated a value in.
 */
export function QueryList<S extends TSchema>(item: S, options: { maxItems: number; description: string }): TArray<S> {
  return Type.Array(item, {
    minItems: 1,
    maxItems: options.maxItems,
    uniqueItems: true,
    description: `${options.description} ${listParameterRule}`,
  });
}

/** Decimal digits, and the same with a leading minus sign. */
const digits = /^\d+$/;
const signedDigits = /^-?\d+$/;

/** The integer schema a parameter takes (itself, a member of its union, or its list's items), if any. */
function integerOf(schema: TSchema | undefined): TSchema | undefined {
  if (schema === undefined) return undefined;
  if (schema.type === 'integer') return schema;
  if (schema.type === 'array') return integerOf(schema.items as TSchema | undefined);
  for (const member of (schema.anyOf ?? []) as TSchema[]) {
    const found = integerOf(member);
    if (found) return found;
  }
  return undefined;
}

/** Whether a text spells an integer the schema takes: decimal digits, a leading `-` only where negatives are allowed. */
function spellsInteger(schema: TSchema, text: string): boolean {
  const nonNegative =
    (typeof schema.minimum === 'number' && schema.minimum >= 0) ||
    (typeof schema.exclusiveMinimum === 'number' && schema.exclusiveMinimum >= -1);
  return (nonNegative ? digits : signedDigits).test(text);
}

/**
 * The path or query parameters of a request as their schema reads them: texts become the numbers and
 * booleans the parameters declare (TypeBox's `Value.Convert`), except that an integer parameter takes
 * decimal digits only, with a leading `-` where the schema allows negatives. `2.5`, `1e1`, `1.0`, `0x10`,
 * ` 1`, `+1` or the empty text (which `Value.Convert` would read as 2, 1, 1, 16, 1, 1) stay text, which
 * the schema then refuses: a 400 naming the parameter.
 */
export function convertParameters(schema: TObject, values: Record<string, string | string[]>): Record<string, unknown> {
  const misspelled: Record<string, string | string[]> = {};
  for (const [name, text] of Object.entries(values)) {
    const integer = integerOf(schema.properties[name]);
    const texts = Array.isArray(text) ? text : [text];
    if (integer !== undefined && !texts.every((t) => spellsInteger(integer, t))) misspelled[name] = text;
  }
  // `Value.Convert` works on the object it is given: a copy, so the texts above stay as they came.
  return { ...(Value.Convert(schema, { ...values }) as Record<string, unknown>), ...misspelled };
}
