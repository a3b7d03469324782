/**
 * Reading the history back: a trend of one attribute in at most `maxPoints` points, the finest of raw
 * values, buckets of raw values, or buckets of the minute or hour rollups that fits; each bucket keeps its
 * min and max, so a spike survives. The session's down times in the period are its gaps.
 */
import { ProblemError, type HistoryAnswer, type HistoryPoint } from '@scada/contracts';
import type { Queryable } from '@scada/platform';
import { validityNames } from './ingest.ts';

/** A period as asked, checked. */
export type Period = { from: number; to: number };

const hourMs = 3_600_000;
const minuteMs = 60_000;
/** Raw values grouped into buckets at most this many times `maxPoints`; more are read from the rollups. */
const rawBucketsUpTo = 10;

function badQuery(path: string, message: string): ProblemError {
  return new ProblemError('validation_failed', `${path.slice('/query/'.length)} ${message}`, { errors: [{ path, message }] });
}

/** The period of a query: `to` now when absent, `from` a day before `to`; a date that is no date, or `from` after `to`: 400. */
export function periodOf(query: { from?: string; to?: string }, now: number): Period {
  const parse = (name: 'from' | 'to', text: string) => {
    const ms = Date.parse(text);
    // The format check takes a 31st of any month; a date that does not exist is no date.
    const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
    if (
      !Number.isFinite(ms) ||
      (day && new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]))).getUTCDate() !== Number(day[3]))
    )
      throw badQuery(`/query/${name}`, 'is not a date');
    return ms;
  };
  const to = query.to === undefined ? now : parse('to', query.to);
  const from = query.from === undefined ? to - 24 * hourMs : parse('from', query.from);
  if (from > to) throw badQuery('/query/from', 'is after to');
  return { from, to };
}

/** 400 for an attribute the connection never recorded (or whose values are all past the retention). */
export async function checkReference(db: Queryable, space: string, connectionId: string, reference: string): Promise<void> {
  const { rows } = await db.query('select 1 from history.rollup_hour where connection_id = $1 and reference = $2 and space = $3 limit 1', [
    connectionId,
    reference,
    space,
  ]);
  if (rows.length === 0) throw badQuery('/query/reference', 'has no recorded values on this connection');
}

type BucketRow = {
  t: Date | string;
  count: number;
  numbers: number;
  min: number | null;
  max: number | null;
  sum: number | null;
  last_value: unknown;
  worst: number;
};

function iso(t: Date | string): string {
  return (t instanceof Date ? t : new Date(t)).toISOString();
}

function bucketPoint(row: BucketRow): HistoryPoint {
  const numbers = Number(row.numbers);
  const point: HistoryPoint = {
    t: iso(row.t),
    value: numbers > 0 ? Number(row.sum) / numbers : (row.last_value ?? null),
    quality: validityNames[Number(row.worst)] ?? 'good',
    count: Number(row.count),
  };
  if (row.min !== null) point.min = Number(row.min);
  if (row.max !== null) point.max = Number(row.max);
  return point;
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
  // An upper bound of the values in the period, from the minute rollups that touch it.
  const { rows: est } = await db.query<{ n: string | number | null }>(
    `select sum(count) as n from history.rollup_minute where connection_id = $1 and reference = $2 and space = $3 and bucket >= $4 and bucket < $5`,
    [...key, new Date(Math.floor(from / minuteMs) * minuteMs).toISOString(), new Date(to).toISOString()],
  );
  const bound = Number(est[0]?.n ?? 0);
  if (bound <= q.maxPoints) {
    const { rows } = await db.query<{
      t: Date | string;
      num: number | null;
      value: unknown;
      quality: unknown;
      device_time: Date | string | null;
    }>(
      `select received_at as t, num, value, quality, device_time from history.points
       where connection_id = $1 and reference = $2 and space = $3 and received_at >= $4 and received_at < $5
       order by received_at, rcb, seq limit $6`,
      [...key, base.from, base.to, q.maxPoints],
    );
    const points = rows.map((r) => ({
      t: iso(r.t),
      value: r.num !== null ? Number(r.num) : (r.value ?? null),
      quality: (r.quality ?? null) as HistoryPoint['quality'],
      timestamp: r.device_time === null ? null : iso(r.device_time),
    }));
    return { ...base, resolution: 'raw', bucketSeconds: null, points };
  }
  const span = to - from;
  const rawWidth = Math.ceil(span / q.maxPoints / 1000) * 1000;
  // Buckets under a minute come from the raw values while there are not too many of them to group; a
  // period holding more is answered from the minute rollups, which then fit in `maxPoints` too.
  if (rawWidth < minuteMs && bound <= rawBucketsUpTo * q.maxPoints) {
    const { rows } = await db.query<BucketRow>(
      `select to_timestamp(($4::double precision + k * $6::double precision) / 1000) as t, count, numbers, min, max, sum, last_value, worst from (
         select floor((extract(epoch from received_at) * 1000 - $4::double precision) / $6::double precision) as k,
           count(*) as count, count(num) as numbers, min(num) as min, max(num) as max, sum(num) as sum,
           (array_agg(value order by received_at desc))[1] as last_value, max(validity) as worst
         from history.points
         where connection_id = $1 and reference = $2 and space = $3 and received_at >= to_timestamp($4::double precision / 1000) and received_at < to_timestamp($5::double precision / 1000)
         group by k) b order by k`,
      [...key, from, to, rawWidth],
    );
    return { ...base, resolution: 'raw-buckets', bucketSeconds: rawWidth / 1000, points: rows.map(bucketPoint) };
  }
  const unit = rawWidth < hourMs ? minuteMs : hourMs;
  const start = Math.floor(from / unit) * unit;
  const width = Math.ceil((to - start) / q.maxPoints / unit) * unit;
  const table = unit === minuteMs ? 'history.rollup_minute' : 'history.rollup_hour';
  const { rows } = await db.query<BucketRow>(
    `select to_timestamp(($4::double precision + k * $6::double precision) / 1000) as t, count, numbers, min, max, sum, last_value, worst from (
       select floor((extract(epoch from bucket) * 1000 - $4::double precision) / $6::double precision) as k,
         sum(count) as count, sum(numbers) as numbers, min(min) as min, max(max) as max, sum(sum) as sum,
         (array_agg(last_value order by last_at desc))[1] as last_value, max(worst) as worst
       from ${table}
       where connection_id = $1 and reference = $2 and space = $3 and bucket >= to_timestamp($4::double precision / 1000) and bucket < to_timestamp($5::double precision / 1000)
       group by k) b order by k`,
    [...key, start, to, width],
  );
  return { ...base, resolution: unit === minuteMs ? 'minute' : 'hour', bucketSeconds: width / 1000, points: rows.map(bucketPoint) };
}

/** The stretches of the period in which the session was not connected, from the states it announced. */
export async function gapsOf(db: Queryable, connectionId: string, space: string, period: Period): Promise<HistoryAnswer['gaps']> {
  const from = new Date(period.from).toISOString();
  const to = new Date(period.to).toISOString();
  const { rows } = await db.query<{ since: Date | string; state: string; last_error: string | null }>(
    `(select since, state, last_error from history.sessions where connection_id = $1 and space = $2 and since <= $3 order by since desc limit 1)
     union all
     (select since, state, last_error from history.sessions where connection_id = $1 and space = $2 and since > $3 and since < $4)
     order by since`,
    [connectionId, space, from, to],
  );
  const gaps: HistoryAnswer['gaps'] = [];
  let open: { from: number; reason: string } | null = null;
  for (const row of rows) {
    const at = Math.max(new Date(row.since).getTime(), period.from);
    if (row.state === 'connected') {
      if (open && at > open.from)
        gaps.push({ from: new Date(open.from).toISOString(), to: new Date(at).toISOString(), reason: open.reason });
      open = null;
    } else if (!open) {
      open = { from: at, reason: row.last_error ? `${row.state}: ${row.last_error}` : row.state };
    }
  }
  if (open && period.to > open.from) gaps.push({ from: new Date(open.from).toISOString(), to, reason: open.reason });
  return gaps;
}

/** Per attribute of the connection: first and last time held, and how many values. */
export async function summaryOf(db: Queryable, space: string, connectionId: string) {
  const { rows } = await db.query<{ reference: string; first: Date | string; last: Date | string; count: string | number }>(
    `select reference, min(first_at) as first, max(last_at) as last, sum(count) as count from history.rollup_hour
     where connection_id = $1 and space = $2 group by reference order by reference`,
    [connectionId, space],
  );
  return rows.map((r) => ({ reference: r.reference, first: iso(r.first), last: iso(r.last), count: Number(r.count) }));
}

/** A page of raw values, oldest first; `after` is the cursor the page before answered. */
export async function rawPage(
  db: Queryable,
  q: { space: string; connectionId: string; reference: string; period: Period; after?: string; size: number },
) {
  let cursor: [string, string, string] | null = null;
  if (q.after !== undefined) {
    try {
      const parsed = JSON.parse(Buffer.from(q.after, 'base64url').toString('utf8'));
      if (
        Array.isArray(parsed) &&
        parsed.length === 3 &&
        parsed.every((p) => typeof p === 'string') &&
        Number.isFinite(Date.parse(parsed[0]))
      )
        cursor = parsed as [string, string, string];
    } catch {}
    if (!cursor) throw badQuery('/query/after', 'is not a cursor this operation answered');
  }
  const { rows } = await db.query<{
    received_at: Date | string;
    rcb: string;
    seq: string;
    seq_num: number | null;
    device_time: Date | string | null;
    num: number | null;
    value: unknown;
    quality: unknown;
  }>(
    `select received_at, rcb, seq, seq_num, device_time, num, value, quality from history.points
     where connection_id = $1 and reference = $2 and space = $3 and received_at >= $4 and received_at < $5
       and ($6::timestamptz is null or (received_at, rcb, seq) > ($6::timestamptz, $7::text, $8::text))
     order by received_at, rcb, seq limit $9`,
    [
      q.connectionId,
      q.reference,
      q.space,
      new Date(q.period.from).toISOString(),
      new Date(q.period.to).toISOString(),
      cursor?.[0] ?? null,
      cursor?.[1] ?? null,
      cursor?.[2] ?? null,
      q.size,
    ],
  );
  const last = rows.at(-1);
  return {
    rows: rows.map((r) => ({
      receivedAt: iso(r.received_at),
      timestamp: r.device_time === null ? null : iso(r.device_time),
      value: r.num !== null ? Number(r.num) : (r.value ?? null),
      quality: (r.quality ?? null) as never,
      rcb: r.rcb,
      seqNum: r.seq_num,
    })),
    next:
      rows.length === q.size && last
        ? Buffer.from(JSON.stringify([iso(last.received_at), last.rcb, last.seq])).toString('base64url')
        : null,
  };
}
