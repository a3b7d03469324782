/**
 * A `date-time` value is taken exactly when it has RFC 3339's shape, a `Date` reads it, the day exists in
 * its month, and the store keeps it as given (an offset of at most 15:59, an instant in the years 1 to
 * 9999): held here to `Date.parse` and a calendar over every field at and around its edges.
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { canonicalInstant, isoTime, validate } from '../src/validate.ts';

const schema = Type.String({ format: 'date-time' });
const shape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** What the format took before: the shape, then `Date.parse` (which reads 30 February as 2 March). */
const readable = (v: string) => shape.test(v) && !Number.isNaN(Date.parse(v));
/** The day exists: the date's fields survive a round trip through the calendar. */
const exists = (v: string) => {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d);
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
};
/** PostgreSQL keeps offsets up to 15:59 and instants from year 1 on; 9999 is the last year shown in four digits. */
const storable = (v: string) => {
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(v);
  const at = Date.parse(v);
  return (!offset || Number(offset[2]) <= 15) && at >= Date.parse('0001-01-01T00:00:00Z') && at <= Date.parse('9999-12-31T23:59:59Z');
};
/** What the format takes now. */
const strict = (v: string) => readable(v) && exists(v) && storable(v);
const two = (n: number) => String(n).padStart(2, '0');

function* candidates(): Generator<string> {
  const years = ['0000', '0001', '1969', '1970', '2024', '2026', '9999'];
  for (const y of years) for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) yield `${y}-${two(m)}-${two(d)}T12:00:00Z`;
  for (let h = 0; h <= 25; h++)
    for (let mi = 0; mi <= 61; mi++)
      for (let s = 0; s <= 61; s++) for (const f of ['', '.0', '.5']) yield `2026-06-15T${two(h)}:${two(mi)}:${two(s)}${f}Z`;
  const fractions = ['', '.0', '.00', '.000', '.5', '.123', '.123456789', '.0000000001', '.'];
  const offsets = ['Z', '+00:00', '-00:00', '+23:59', '-23:59', '+24:00', '-24:00', '+00:60', '+12:30', '-05:45', '+1:00', 'z'];
  const times = ['00:00:00', '23:59:59', '24:00:00', '24:00:01', '24:01:00', '12:34:56'];
  const days = ['01-01', '02-28', '02-29', '02-30', '02-31', '04-31', '12-31'];
  for (const y of years)
    for (const f of fractions) for (const o of offsets) for (const time of times) for (const md of days) yield `${y}-${md}T${time}${f}${o}`;
  for (let h = 0; h <= 25; h++)
    for (let mi = 0; mi <= 61; mi++) for (const sign of ['+', '-']) yield `2026-06-15T10:00:00${sign}${two(h)}:${two(mi)}`;
  // The form Date.toISOString writes (24 characters, milliseconds, Z), decided apart from the expression:
  // every field at and around its edges in that form too, and the same length with something out of place.
  for (const y of years) for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) yield `${y}-${two(m)}-${two(d)}T23:59:59.999Z`;
  for (let h = 0; h <= 25; h++)
    for (let mi = 0; mi <= 61; mi++) for (let s = 58; s <= 61; s++) yield `2026-06-15T${two(h)}:${two(mi)}:${two(s)}.000Z`;
  yield* [
    '2026-06-15T10:00:00.12aZ',
    '2026-06-15T10:00:00.1234',
    '2026-06-15T10:00:00,000Z',
    '2026-06-15t10:00:00.000Z',
    '2026/06/15T10:00:00.000Z',
    '2026-06-15T10-00:00.000Z',
    'a026-06-15T10:00:00.000Z',
    '2026-0a-15T10:00:00.000Z',
    '2026-06-1aT10:00:00.000Z',
    '2026-06-15T1a:00:00.000Z',
    '2026-06-15T10:0a:00.000Z',
    '2026-06-15T10:00:0a.000Z',
    '2026-06-15T10:00:00.000z',
    '2026-06-15T24:00:00.000Z',
    '2024-02-29T10:00:00.000Z',
    '2100-02-29T10:00:00.000Z',
  ];
  yield* [
    '',
    '2026-06-15',
    '2026-06-15 10:00:00Z',
    '2026-06-15T10:00Z',
    '+02026-06-15T10:00:00Z',
    '2026-06-15T10:00:00Z\n',
    ' 2026-06-15T10:00:00Z',
  ];
}

t.test('date-time takes exactly the values Date reads in that shape that exist and the store keeps', async (t) => {
  let count = 0;
  let before = 0;
  const differ: string[] = [];
  for (const v of candidates()) {
    count++;
    if (readable(v)) before++;
    if (validate(schema, v).ok !== strict(v)) differ.push(v);
  }
  t.ok(count > 300_000, `${count} values`);
  t.same(differ.slice(0, 10), [], 'no value taken by one and refused by the other');
  t.comment(`${before} of them taken before, ${[...candidates()].filter(strict).length} now`);
});

t.test('every valid date taken before is still taken', async (t) => {
  const lost: string[] = [];
  for (const v of candidates()) if (readable(v) && exists(v) && storable(v) && !validate(schema, v).ok) lost.push(v);
  t.same(lost.slice(0, 10), []);
});

t.test('examples', async (t) => {
  for (const v of [
    '2026-11-26T01:02:03.123Z',
    '2024-02-29T23:59:59+05:30',
    '2000-02-29T00:00:00Z',
    '2026-12-31T24:00:00Z',
    '2026-01-01T10:00:00+15:59',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
  ]) {
    t.ok(validate(schema, v).ok, `${v} taken`);
  }
  for (const v of [
    '2026-13-01T00:00:00Z',
    '2026-12-01T23:60:00Z',
    '2026-12-01T23:59:60Z',
    '2026-12-01T24:00:01Z',
    '2026-12-01T10:00:00+24:00',
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '1900-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-01-01T10:00:00+16:00',
    '0000-06-01T00:00:00Z',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T24:00:00Z',
    '9999-12-31T23:59:59.5Z',
  ]) {
    t.notOk(validate(schema, v).ok, `${v} refused`);
  }
});

t.test("a time in toISOString's form is read as its instant; any other text is left to Date.parse", async (t) => {
  const wrong: string[] = [];
  const missed: string[] = [];
  let read = 0;
  for (const v of candidates()) {
    const ms = canonicalInstant(v);
    const at = Date.parse(v);
    // Exactly the texts that are their own instant's toISOString, in the years 2 to 9998.
    const canonical =
      Number.isFinite(at) &&
      new Date(at).toISOString() === v &&
      at >= Date.parse('0002-01-01T00:00:00Z') &&
      at < Date.parse('9999-01-01T00:00:00Z');
    if (ms === undefined) {
      if (canonical) missed.push(v);
      continue;
    }
    read++;
    if (ms !== at || !canonical) wrong.push(v);
  }
  t.same(wrong, [], 'every instant read is the one Date.parse reads, of a text toISOString writes');
  t.same(missed.slice(0, 10), [], 'every text toISOString writes is read');
  t.ok(read > 4000, `${read} texts read`);
  // Instants spread over the years it reads, and around the days where the calendar turns.
  const instants = [
    Date.parse('2000-02-29T23:59:59.999Z'),
    Date.parse('2100-03-01T00:00:00.000Z'),
    Date.parse('1970-01-01T00:00:00.000Z'),
    -1,
  ];
  for (let i = 0; i < 100_000; i++)
    instants.push(Math.floor(-62_135_596_800_000 + 31_622_400_000 + ((i * 2_654_435_761) % 1_000_000) * 253_370_000));
  const off = instants.filter((ms) => canonicalInstant(new Date(ms).toISOString()) !== ms);
  t.same(off.slice(0, 10), [], `${instants.length} instants written by toISOString read back`);
});

t.test('isoTime writes what toISOString writes', async (t) => {
  const instants = [0, -1, 1, -0.5, 0.5, 999.9, -999.9, 1000, -1000, 8.64e15, -8.64e15, Date.parse('0000-01-01T00:00:00Z') - 1];
  const base = Date.parse('2026-11-30T05:00:00.000Z');
  // A stream of values a few milliseconds apart (the second kept from one call to the next), and instants anywhere.
  for (let i = 0; i < 20_000; i++) instants.push(base + i * 7, base - i * 13 + 0.25);
  for (let i = 0; i < 20_000; i++) instants.push(((i * 2_654_435_761) % 2 ** 32) * 4_000_000 - 8.6e15);
  const differ = instants.filter((ms) => isoTime(ms) !== new Date(ms).toISOString());
  t.same(differ.slice(0, 10), [], `${instants.length} instants`);
  for (const ms of [Number.NaN, 8.64e15 + 1, -8.64e15 - 1, Number.POSITIVE_INFINITY])
    t.throws(() => isoTime(ms), RangeError, `${ms} is no time, as for a Date`);
});
