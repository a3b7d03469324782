/**
 * Reading the history back: the period a query asks for, the session's down times in it (a trend's gaps),
 * what the history holds of a connection, and the raw values page by page (the trends are `trend.ts`).
 */
import { isoTime, ProblemError, type HistoryAnswer } from '@scada/contracts';
import { mapInPieces, type Queryable } from '@scada/platform';

/** A period as asked, checked. */
export type Period = { from: number; to: number };

const hourMs = 3_600_000;

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

/** A time of a row as the answer gives it (ISO 8601, UTC, milliseconds). */
export function iso(t: Date | string): string {
  return isoTime(t instanceof Date ? t.getTime() : new Date(t).getTime());
}

/**
 * {@link iso} of `t`, or `sameIso` (the text of `same`) when both are one instant: a recorded value's
 * place on the time axis is its device time or its receipt, so one row holds few distinct times, and
 * making each text once spares most of a large answer's formatting.
 */
export function isoOr(t: Date | string, same: Date | string, sameIso: string): string {
  if (t === same) return sameIso;
  return t instanceof Date && same instanceof Date && t.getTime() === same.getTime() ? sameIso : iso(t);
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

type Cursor = [t: string, receivedAt: string, rcb: string, seq: string];

/** The cursor of a page: the place on the time axis of the last value it held, and that value's key. */
function cursorOf(after: string | undefined): Cursor | null {
  if (after === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 4 &&
      parsed.every((p) => typeof p === 'string') &&
      Number.isFinite(Date.parse(parsed[0])) &&
      Number.isFinite(Date.parse(parsed[1]))
    )
      return parsed as Cursor;
  } catch {}
  throw badQuery('/query/after', 'is not a cursor this operation answered');
}

/** A page of raw values in the order of the time axis; `after` is the cursor the page before answered. */
export async function rawPage(
  db: Queryable,
  q: { space: string; connectionId: string; reference: string; period: Period; after?: string; size: number },
) {
  const cursor = cursorOf(q.after);
  const { rows } = await db.query<{
    t: Date | string;
    received_at: Date | string;
    rcb: string;
    seq: string;
    seq_num: number | null;
    device_time: Date | string | null;
    num: number | null;
    value: unknown;
    quality: unknown;
  }>(
    `select t, received_at, rcb, seq, seq_num, device_time, num, value, quality from history.points
     where connection_id = $1 and reference = $2 and space = $3 and t >= $4 and t < $5
       and ($6::timestamptz is null or (t, received_at, rcb, seq) > ($6::timestamptz, $7::timestamptz, $8::text, $9::text))
     order by t, received_at, rcb, seq limit $10`,
    [
      q.connectionId,
      q.reference,
      q.space,
      new Date(q.period.from).toISOString(),
      new Date(q.period.to).toISOString(),
      ...(cursor ?? [null, null, null, null]),
      q.size,
    ],
  );
  const last = rows.at(-1);
  return {
    rows: await mapInPieces(rows, (r) => {
      const t = iso(r.t);
      return {
        t,
        receivedAt: isoOr(r.received_at, r.t, t),
        timestamp: r.device_time === null ? null : isoOr(r.device_time, r.t, t),
        value: r.num !== null ? Number(r.num) : (r.value ?? null),
        quality: (r.quality ?? null) as never,
        rcb: r.rcb,
        seqNum: r.seq_num,
      };
    }),
    next:
      rows.length === q.size && last
        ? Buffer.from(JSON.stringify([iso(last.t), iso(last.received_at), last.rcb, last.seq])).toString('base64url')
        : null,
  };
}
