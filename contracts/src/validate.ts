import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ProblemFieldError } from './problems.ts';

/** A date and time as `date-time` values take them (see `registerFormats`). */
const dateTime =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?|24:00:00(?:\.0+)?)(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

registerFormats();

/** Formats the schemas use, checked the same way by the gateway and the services. */
function registerFormats(): void {
  // RFC 3339's shape with every field in the range a `Date` reads (a day up to 31 in any month, and
  // 24:00:00 for the end of a day, as `Date.parse` takes them): one expression, no `Date.parse` per value,
  // which was half of checking a 100-row reply. `contracts/test/formats.test.ts` holds it to `Date.parse`.
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => dateTime.test(v));
  if (!FormatRegistry.Has('http-url')) {
    FormatRegistry.Set('http-url', (v) => {
      try {
        const u = new URL(v);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    });
  }
  if (!FormatRegistry.Has('color')) FormatRegistry.Set('color', (v) => /^#[0-9a-fA-F]{6}$/.test(v));
  // A practical address check (one @, a dotted domain, no spaces), not the full RFC 5322 grammar.
  if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(v));
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled checker of a schema, compiled once per schema object. */
export function checkerOf<S extends TSchema>(schema: S): TypeCheck<S> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check as TypeCheck<S>;
}

/** Checks a value against a schema: the first failure of each path, in document order. */
export function validate<S extends TSchema>(
  schema: S,
  value: unknown,
): { ok: true; value: Static<S> } | { ok: false; errors: ProblemFieldError[] } {
  const check = checkerOf(schema);
  if (check.Check(value)) return { ok: true, value: value as Static<S> };
  const errors: ProblemFieldError[] = [];
  const seen = new Set<string>();
  for (const error of check.Errors(value)) {
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    errors.push({ path: error.path || '/', message: error.message });
    if (errors.length >= 20) break;
  }
  return { ok: false, errors };
}
