/**
 * A trend of one attribute over a period, in at most `maxPoints` points: the raw values when they fit,
 * else buckets of equal width, each with its count, min, max and worst quality, so a spike survives. No
 * bucket counts a value outside the period: a bucket is made of the rollups (per minute, per hour) that
 * lie wholly inside the period, and of the raw values of the stretches at its edges that no whole rollup
 * covers; buckets finer than a minute are made of raw values alone.
 */
import { isoTime, type HistoryAnswer, type HistoryPoint } from '@scada/contracts';
import { mapInPieces, type Queryable } from '@scada/platform';
import { gapsOf, iso, isoOr, type Period } from './read.ts';
import { validityNames } from './rows.ts';

const minuteMs = 60_000;
const hourMs = 3_600_000;
/** Raw values grouped into buckets at most this many times `maxPoints`; more are read from the rollups. */
const rawBucketsUpTo = 10;
/**
 * Raw values this many a bucket or more, on average, are summed bucket by bucket (`denseBucketsOf`) rather
 * than grouped: a range read a bucket costs an index descent, which pays once a bucket holds a few dozen
 * values.
 */
const denseFrom = 16;

/** A rollup of the store and the width of its buckets. */
type Step = { table: 'history.rollup_minute' | 'history.rollup_hour'; ms: number };
const minuteStep: Step = { table: 'history.rollup_minute', ms: minuteMs };
const hourStep: Step = { table: 'history.rollup_hour', ms: hourMs };

/** A stretch of the period and where its values are read: raw values, or the rollups of a step. */
export type Piece = { step: Step | null; from: number; to: number };

/**
 * The period cut into the stretches each step covers wholly, coarsest first: the whole hours from the
 * hour rollups, the whole minutes left at either side from the minute rollups, the rest from raw values.
 */
export function piecesOf(from: number, to: number, steps: readonly Step[]): Piece[] {
  if (from >= to) return [];
  const step = steps.at(-1);
  if (step === undefined) return [{ step: null, from, to }];
  const finer = steps.slice(0, -1);
  const first = Math.ceil(from / step.ms) * step.ms;
  const last = Math.floor(to / step.ms) * step.ms;
  if (first >= last) return piecesOf(from, to, finer);
  return [...piecesOf(from, first, finer), { step, from: first, to: last }, ...piecesOf(last, to, finer)];
}

/**
 * The rows of the pieces as one relation `(at, count, numbers, min, max, sum, last_at, last_value, worst)`:
 * a raw value is a row that counts one. Parameters from `$4` on; `$1` to `$3` are the attribute's key.
 */
function piecesSql(pieces: Piece[], rawLimit?: number): { sql: string; params: string[] } {
  const params: string[] = [];
  const selects = pieces.map((piece) => {
    params.push(new Date(piece.from).toISOString(), new Date(piece.to).toISOString());
    const lo = `$${params.length + 2}`;
    const hi = `$${params.length + 3}`;
    const key = 'connection_id = $1 and reference = $2 and space = $3';
    if (piece.step === null)
      return `select t as at, 1 as count, (num is not null)::int as numbers, num as min, num as max, num as sum,
          t as last_at, received_at as last_received, value as last_value, validity as worst
        from history.points where ${key} and t >= ${lo} and t < ${hi}${rawLimit === undefined ? '' : ` limit ${rawLimit}`}`;
    return `select bucket as at, count, numbers, min, max, sum, last_at, null::timestamptz as last_received, last_value, worst
        from ${piece.step.table} where ${key} and bucket >= ${lo} and bucket < ${hi}`;
  });
  return { sql: selects.map((s) => `(${s})`).join(' union all '), params };
}

type BucketRow = {
  k: number | string;
  count: number | string;
  numbers: number | string;
  min: number | null;
  max: number | null;
  sum: number | null;
  worst: number;
};

/**
 * How many values the attribute holds in the period, from the rollups and the raw values of the edges:
 * exact up to `upTo`, and more than `upTo` when it is more (the raw values of a stretch are counted up to
 * one past it: a minute of 5,000 values a second is not counted to its 300,000th to learn that it does not
 * fit in 10,000 points).
 */
async function countIn(db: Queryable, key: string[], period: Period, upTo: number): Promise<number> {
  const pieces = piecesSql(piecesOf(period.from, period.to, [minuteStep, hourStep]), upTo + 1);
  const { rows } = await db.query<{ n: string | number | null }>(`select sum(count) as n from (${pieces.sql}) p`, [
    ...key,
    ...pieces.params,
  ]);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The buckets of `width` from `origin` on, made of the pieces (each piece's rollups lie wholly in one
 * bucket). A bucket's value is the mean of its numbers; only a bucket that holds no number answers its
 * last value, which a second statement finds for those buckets alone, and only when there are any. An
 * ordered aggregate in the first statement would have the store sort every row of the period (PostgreSQL
 * sorts a group's whole input for it, whatever its FILTER leaves): a minute of 5,000 numbers a second cost
 * three times as much grouped that way. The bucket's key is computed in floating point (`date_part`,
 * rounded to the millisecond), not in `numeric` (`extract`).
 */
async function bucketsOf(
  db: Queryable,
  key: string[],
  period: Period,
  grid: { origin: number; width: number; steps: Step[]; dense?: boolean },
) {
  const pieces = piecesSql(piecesOf(period.from, period.to, grid.steps));
  const n = key.length + pieces.params.length;
  const params = [...key, ...pieces.params, grid.origin, grid.width];
  // The time's millisecond, exact for the platform's times (whole milliseconds): `date_part`'s floating
  // point may fall a hair short of it (a value on a bucket's edge in the bucket before).
  const bucket = `floor((round(date_part('epoch', at) * 1000) - $${n + 1}::double precision) / $${n + 2}::double precision)`;
  const { rows } = grid.dense
    ? await denseBucketsOf(db, key, period, grid)
    : await db.query<BucketRow>(
        `select ${bucket} as k, sum(count) as count, sum(numbers) as numbers, min(min) as min, max(max) as max, sum(sum) as sum,
       max(worst) as worst
     from (${pieces.sql}) p group by k order by k`,
        params,
      );
  const lastValues = new Map<number, unknown>();
  if (rows.some((row) => Number(row.numbers) === 0)) {
    const last = await db.query<{ k: number | string; last_value: unknown }>(
      `select distinct on (k) ${bucket} as k, last_value
       from (${pieces.sql}) p where numbers = 0
       order by k, last_at desc, last_received desc nulls last`,
      params,
    );
    for (const row of last.rows) lastValues.set(Number(row.k), row.last_value);
  }
  return mapInPieces(rows, (row): HistoryPoint => {
    const numbers = Number(row.numbers);
    // The first bucket begins where the period does, however the grid lies.
    const start = Math.max(grid.origin + Number(row.k) * grid.width, period.from);
    const point: HistoryPoint = {
      t: isoTime(start),
      value: numbers > 0 ? Number(row.sum) / numbers : (lastValues.get(Number(row.k)) ?? null),
      quality: validityNames[Number(row.worst)] ?? 'good',
      count: Number(row.count),
    };
    if (row.min !== null) point.min = Number(row.min);
    if (row.max !== null) point.max = Number(row.max);
    return point;
  });
}

/**
 * The buckets of raw values of `width` from `origin` on, each summed by a range read of its own on the
 * attribute's index, in the order of the time axis: the same rows as grouping every value of the period by
 * its bucket's key, without computing that key for each value and sorting or hashing them by it (a minute
 * of 5,000 values a second into 60 buckets: about 1.7 times faster on the embedded store). A bucket's
 * bounds are its grid's, cut to the period; a bucket without a value has no row.
 */
function denseBucketsOf(db: Queryable, key: string[], period: Period, grid: { origin: number; width: number }) {
  const first = Math.floor((period.from - grid.origin) / grid.width);
  const last = Math.ceil((period.to - grid.origin) / grid.width) - 1;
  const edge = (k: string) => `$6::timestamptz + (${k} * $7::bigint) * interval '1 millisecond'`;
  return db.query<BucketRow>(
    `select k, a.count, a.numbers, a.min, a.max, a.sum, a.worst
     from generate_series($4::bigint, $5::bigint) as k
     cross join lateral (
       select count(*) as count, count(num) as numbers, min(num) as min, max(num) as max, sum(num) as sum, max(validity) as worst
       from history.points
       where connection_id = $1 and reference = $2 and space = $3
         and t >= greatest($8::timestamptz, ${edge('k')}) and t < least($9::timestamptz, ${edge('(k + 1)')})
     ) a
     where a.count > 0 order by k`,
    [
      ...key,
      first,
      last,
      new Date(grid.origin).toISOString(),
      grid.width,
      new Date(period.from).toISOString(),
      new Date(period.to).toISOString(),
    ],
  );
}

/** The raw values of the period, in the order of the time axis. */
async function rawPoints(db: Queryable, key: string[], period: Period, limit: number): Promise<HistoryPoint[]> {
  const { rows } = await db.query<{
    t: Date | string;
    received_at: Date | string;
    device_time: Date | string | null;
    num: number | null;
    value: unknown;
    quality: unknown;
  }>(
    `select t, received_at, device_time, num, value, quality from history.points
     where connection_id = $1 and reference = $2 and space = $3 and t >= $4 and t < $5
     order by t, received_at, rcb, seq limit $6`,
    [...key, new Date(period.from).toISOString(), new Date(period.to).toISOString(), limit],
  );
  return mapInPieces(rows, (r): HistoryPoint => {
    const t = iso(r.t);
    return {
      t,
      value: r.num !== null ? Number(r.num) : (r.value ?? null),
      quality: (r.quality ?? null) as HistoryPoint['quality'],
      timestamp: r.device_time === null ? null : isoOr(r.device_time, r.t, t),
      receivedAt: isoOr(r.received_at, r.t, t),
    };
  });
}

/** The trend of one attribute over a period. */
export async function readTrend(
  db: Queryable,
  q: { space: string; connectionId: string; reference: string; period: Period; maxPoints: number },
): Promise<HistoryAnswer> {
  const { from, to } = q.period;
  const key = [q.connectionId, q.reference, q.space];
  const base = {
    reference: q.reference,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    gaps: await gapsOf(db, q.connectionId, q.space, q.period),
  };
  if (from === to) return { ...base, resolution: 'raw', bucketSeconds: null, points: [] };
  const span = to - from;
  const rawWidth = Math.ceil(span / q.maxPoints / 1000) * 1000;
  const rawBuckets = Math.ceil(span / rawWidth);
  // Known exactly as far as the choices below need: up to what raw values may be grouped into buckets; for
  // a period of a minute or less, whose buckets are raw whatever their number, up to whether they are dense.
  const upTo = span <= minuteMs ? Math.max(q.maxPoints, denseFrom * rawBuckets) : rawBucketsUpTo * q.maxPoints;
  const count = await countIn(db, key, q.period, upTo);
  if (count <= q.maxPoints)
    return { ...base, resolution: 'raw', bucketSeconds: null, points: await rawPoints(db, key, q.period, q.maxPoints) };
  // Buckets under a minute come from raw values: always for a period of a minute or less, and for longer
  // ones while there are not too many values to group; past that, buckets of whole minutes.
  if (span <= minuteMs || (rawWidth < minuteMs && count <= rawBucketsUpTo * q.maxPoints)) {
    const dense = count >= denseFrom * rawBuckets;
    const points = await bucketsOf(db, key, q.period, { origin: from, width: rawWidth, steps: [], dense });
    return { ...base, resolution: 'raw-buckets', bucketSeconds: rawWidth / 1000, points };
  }
  const unit = rawWidth < hourMs ? minuteMs : hourMs;
  const origin = Math.floor(from / unit) * unit;
  const width = Math.ceil((to - origin) / q.maxPoints / unit) * unit;
  const steps = unit === minuteMs ? [minuteStep] : [minuteStep, hourStep];
  const points = await bucketsOf(db, key, q.period, { origin, width, steps });
  return { ...base, resolution: unit === minuteMs ? 'minute' : 'hour', bucketSeconds: width / 1000, points };
}
