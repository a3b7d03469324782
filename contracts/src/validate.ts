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
  const canonical = canonicalDateTime(v);
  if (canonical !== undefined) return canonical;
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

/** The digit at `i` as a number, or -1. */
function digitAt(v: string, i: number): number {
  const d = v.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/** Two digits at `i` as a number, or -1. */
function twoDigitsAt(v: string, i: number): number {
  const a = digitAt(v, i);
  const b = digitAt(v, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * The form `Date.toISOString` writes and the store reads back (`YYYY-MM-DDTHH:MM:SS.sssZ`, years 2 to
 * 9998, hours to 23), decided without the expression or a match's strings: the audit times of every
 * row a list answers are checked this way, and the expression's match was a twentieth of a 100-row
 * list's CPU. Answers `undefined` for anything else, which `isDateTime` decides as before.
 */
function canonicalDateTime(v: string): boolean | undefined {
  if (v.length !== 24 || v.charCodeAt(23) !== 90 /* Z */ || v.charCodeAt(19) !== 46 /* . */) return undefined;
  if (v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(10) !== 84 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58)
    return undefined;
  const high = twoDigitsAt(v, 0);
  const low = twoDigitsAt(v, 2);
  const hour = twoDigitsAt(v, 11);
  if (high < 0 || low < 0 || hour < 0 || hour > 23) return undefined;
  const year = high * 100 + low;
  if (year <= 1 || year >= 9999) return undefined;
  if (digitAt(v, 20) < 0 || digitAt(v, 21) < 0 || digitAt(v, 22) < 0) return false;
  const month = twoDigitsAt(v, 5);
  const day = twoDigitsAt(v, 8);
  const minute = twoDigitsAt(v, 14);
  const second = twoDigitsAt(v, 17);
  if (month < 1 || month > 12 || day < 1 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  if (day > (daysIn[month - 1] ?? 0)) return false;
  return !(month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)));
}

/**
 * The instant of a time written in the form `Date.toISOString` writes (`YYYY-MM-DDTHH:MM:SS.sssZ`, a day
 * that exists, years 2 to 9998), in milliseconds since 1970; `undefined` for any other text, which the
 * caller reads with `Date.parse`. Such a text is its instant's `toISOString()` exactly, so a caller that
 * holds one needs neither to parse it with `Date.parse` nor to write it again: a recorded value's times
 * were a tenth of the history's work a value, `Date.parse` and `toISOString` each far slower than this.
 */
export function canonicalInstant(v: string): number | undefined {
  if (canonicalDateTime(v) !== true) return undefined;
  const year = twoDigitsAt(v, 0) * 100 + twoDigitsAt(v, 2);
  const month = twoDigitsAt(v, 5);
  // Days since 1970-01-01 of the civil date (the year taken from March, so February's length comes last).
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + twoDigitsAt(v, 8) - 1;
  const days = era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468;
  const seconds = ((days * 24 + twoDigitsAt(v, 11)) * 60 + twoDigitsAt(v, 14)) * 60 + twoDigitsAt(v, 17);
  return seconds * 1000 + digitAt(v, 20) * 100 + twoDigitsAt(v, 21);
}

/** The last second {@link isoTime} wrote, and its text up to the milliseconds. */
let isoSecond = Number.NaN;
let isoPrefix = '';
/** The milliseconds and the `Z` that end a time's text, by milliseconds. */
const isoEnds = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);
/** The largest instant a `Date` holds. */
const maxInstant = 8.64e15;

/**
 * `new Date(ms).toISOString()`, the same text, for a fraction of its CPU when the second is the one of the
 * call before (as it is for the times of a stream of values: their receipt, their device times, their
 * events' `at`): the text of the second is kept, and only its milliseconds added.
 */
export function isoTime(ms: number): string {
  // As a Date does: the milliseconds truncated toward zero; NaN and instants past its range throw the same.
  const whole = Math.trunc(ms) + 0;
  if (!(Math.abs(whole) <= maxInstant)) return new Date(ms).toISOString();
  const second = Math.floor(whole / 1000);
  if (second !== isoSecond) {
    const text = new Date(second * 1000).toISOString();
    isoPrefix = text.slice(0, -4);
    isoSecond = second;
  }
  return isoPrefix + (isoEnds[whole - second * 1000] as string);
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
