import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ProblemFieldError } from './problems.ts';

/** The shape of a `date-time` value, every field in its range (see `isDateTime`). */
const dateTimeShape =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?|24:00:00(?:\.0+)?)(?:Z|[+-](?:0\d|1[0-5]):[0-5]\d)$/;

const daysIn = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const firstInstant = Date.parse('0001-01-01T00:00:00Z');
const lastInstant = Date.parse('9999-12-31T23:59:59Z');

/**
 * A date and time that exists and that the store keeps as given: RFC 3339's shape, a day the month has
 * (29 February in leap years only), an offset of at most 15:59 (PostgreSQL's limit), and an instant from
 * 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC. One expression and a table; `Date.parse` only in
 * the first and last year, where the offset can carry the instant out of range.
 */
function isDateTime(v: string): boolean {
  const m = dateTimeShape.exec(v);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (day > (daysIn[month - 1] ?? 0)) return false;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return false;
  if (year <= 1 || year >= 9999) {
    const at = Date.parse(v);
    return at >= firstInstant && at <= lastInstant;
  }
  return true;
}

registerFormats();

/** Formats the schemas use, checked the same way by the gateway and the services. */
function registerFormats(): void {
  // No `Date.parse` per value: it was half of checking a 100-row reply. `contracts/test/formats.test.ts`
  // holds `isDateTime` to `Date.parse` and a calendar over every field at and around its edges.
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);
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
