import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ProblemFieldError } from './problems.ts';

registerFormats();

/** Formats the schemas use, checked the same way by the gateway and the services. */
function registerFormats(): void {
  if (!FormatRegistry.Has('date-time')) {
    FormatRegistry.Set(
      'date-time',
      (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
    );
  }
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
