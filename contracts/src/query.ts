import { Type, type TArray, type TSchema } from '@sinclair/typebox';

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
