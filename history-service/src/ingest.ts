/**
 * Recording: the protocol service's value events become rows of `history.points`, once each, and the
 * rollups per minute and per hour grow with every row that was new. One transaction per batch of events:
 * the batch is acknowledged after it commits, so an event is either recorded or delivered again.
 */
import { ConstraintViolation, copyField, slices, type DurableEvent, type Queryable, type Step, type Transactional } from '@scada/platform';
import type { Logger } from 'pino';
import { dayOf, keptFrom, type Partitions } from './partitions.ts';
import { instantOf, rowsOf, type PointRow, type SessionRow } from './rows.ts';

const minuteMs = 60_000;
const hourMs = 3_600_000;

/** A rollup row folded from a batch's points: one per (connection, reference, bucket). */
type RollupRow = {
  c: string;
  r: string;
  b: string;
  sp: string;
  n: number;
  nn: number;
  mn: number | null;
  mx: number | null;
  s: number | null;
  fa: number;
  la: number;
  /** The receipt of the last value: of two values at the same time, the one received later is the last. */
  lr: number;
  ln: number | null;
  lv: unknown;
  w: number;
};

/**
 * The rollups of a part's points, folded in memory as they are read: one row per (connection, reference,
 * bucket) of the width on the time axis, as the SQL of the redelivery path (`rollupSql`) would make them.
 * A value that arrives late goes into the bucket its time belongs to.
 */
class Fold {
  readonly #width: number;
  readonly #byKey = new Map<string, RollupRow>();
  // The row of the point before: a batch's points come attribute by attribute and in time, so most points
  // fall into the row of the one before, found without a key made and looked up.
  #last: RollupRow | undefined;
  #lastBucket = Number.NaN;

  constructor(width: number) {
    this.#width = width;
  }

  add(p: PointRow, at: number, receipt: number): void {
    const bucket = Math.floor(at / this.#width) * this.#width;
    const last = this.#last;
    let row = last !== undefined && bucket === this.#lastBucket && p.c === last.c && p.r === last.r ? last : undefined;
    let key = '';
    if (row === undefined) {
      key = `${p.c}\u0000${p.r}\u0000${bucket}`;
      row = this.#byKey.get(key);
      this.#lastBucket = bucket;
      this.#last = row;
    }
    if (row === undefined) {
      this.#last = {
        c: p.c,
        r: p.r,
        b: new Date(bucket).toISOString(),
        sp: p.sp,
        n: 1,
        nn: p.num === null ? 0 : 1,
        mn: p.num,
        mx: p.num,
        s: p.num,
        fa: at,
        la: at,
        lr: receipt,
        ln: p.num,
        lv: p.v,
        w: p.w,
      };
      this.#byKey.set(key, this.#last);
      return;
    }
    row.n++;
    if (p.sp < row.sp) row.sp = p.sp;
    if (p.num !== null) {
      row.nn++;
      row.mn = row.mn === null || p.num < row.mn ? p.num : row.mn;
      row.mx = row.mx === null || p.num > row.mx ? p.num : row.mx;
      row.s = (row.s ?? 0) + p.num;
    }
    if (at < row.fa) row.fa = at;
    if (at > row.la || (at === row.la && receipt >= row.lr)) {
      row.la = at;
      row.lr = receipt;
      row.ln = p.num;
      row.lv = p.v;
    }
    if (p.w > row.w) row.w = p.w;
  }

  /** The rows as JSON, sorted by their key so that two replicas merging into the same rows take them in the same order. */
  json(): string {
    const rows = [...this.#byKey.values()];
    rows.sort((a, b) => (a.c < b.c ? -1 : a.c > b.c ? 1 : a.r < b.r ? -1 : a.r > b.r ? 1 : a.b < b.b ? -1 : a.b > b.b ? 1 : 0));
    return JSON.stringify(rows);
  }
}

/** How a rollup row merges into the one already there. */
const mergeSql = `on conflict (connection_id, reference, bucket) do update set
      count = r.count + excluded.count,
      numbers = r.numbers + excluded.numbers,
      min = least(r.min, excluded.min),
      max = greatest(r.max, excluded.max),
      sum = case when excluded.sum is null then r.sum else coalesce(r.sum, 0) + excluded.sum end,
      first_at = least(r.first_at, excluded.first_at),
      last_at = greatest(r.last_at, excluded.last_at),
      last_num = case when excluded.last_at >= r.last_at then excluded.last_num else r.last_num end,
      last_value = case when excluded.last_at >= r.last_at then excluded.last_value else r.last_value end,
      worst = greatest(r.worst, excluded.worst)`;

const rollupColumns =
  'connection_id, reference, bucket, space, count, numbers, min, max, sum, first_at, last_at, last_num, last_value, worst';

/** Merges rollup rows folded in memory (`Fold`) into a rollup table. */
function mergeFoldedSql(table: string, param: number): string {
  return `insert into history.${table} as r (${rollupColumns})
    select c, r, b, sp, n, nn, mn, mx, s, to_timestamp(fa / 1000.0), to_timestamp(la / 1000.0), ln, lv, w
    from jsonb_to_recordset($${param}::jsonb) as x(c uuid, r text, b timestamptz, sp text, n integer, nn integer, mn double precision, mx double precision, s double precision, fa double precision, la double precision, ln double precision, lv jsonb, w smallint)
    ${mergeSql}`;
}

const mergeFolded = `with minute as (${mergeFoldedSql('rollup_minute', 1)}) ${mergeFoldedSql('rollup_hour', 2)}`;

/**
 * The rollup of a bucket width from the points just inserted (`new`), in SQL: the path of a batch some of
 * whose values were recorded before. Buckets are UTC minutes and hours of the time axis whatever the
 * session's time zone, as `Fold` makes them.
 */
function rollupSql(table: string, width: '1 minute' | '1 hour'): string {
  const bucket = `date_bin('${width}', t, timestamptz '2000-01-01 00:00:00+00')`;
  return `insert into history.${table} as r (${rollupColumns})
    select connection_id, reference, ${bucket}, min(space), count(*), count(num), min(num), max(num), sum(num),
      min(t), max(t),
      (array_agg(num order by t desc, received_at desc))[1], (array_agg(value order by t desc, received_at desc))[1], max(validity)
    from new group by connection_id, reference, ${bucket}
    order by 1, 2, 3
    ${mergeSql}`;
}

const pointColumns = 'connection_id, reference, t, received_at, rcb, seq, space, seq_num, device_time, num, value, quality, validity';
const pointsFrom = `select c, r, t, at, rcb, seq, sp, sn, dt, num, v, q, w
    from jsonb_to_recordset($1::jsonb) as x(c uuid, r text, t timestamptz, at timestamptz, rcb text, seq text, sp text, sn integer, dt timestamptz, num double precision, v jsonb, q jsonb, w smallint)
    order by c, r, t, at, rcb, seq`;

/** The points of a batch, none recorded before (else the uniqueness index stops the statement). */
const insertPointsSql = `insert into history.points (${pointColumns}) ${pointsFrom}`;

/** The columns of `history.points` a batch fills, in the order of `copyLine`'s fields. */
const copiedColumns = pointColumns.split(', ');

/** A jsonb field of COPY text: the value as JSON (a string value too, which `copyField` would give bare). */
function jsonField(value: unknown): string {
  return copyField(value === null || value === undefined ? null : JSON.stringify(value));
}

/** A point as a line of COPY text (`Queryable.copyRows`), its fields in the order of `copiedColumns`. */
function copyLine(p: PointRow): string {
  return `${copyField(p.c)}\t${copyField(p.r)}\t${p.t}\t${p.at}\t${copyField(p.rcb)}\t${copyField(p.seq)}\t${copyField(p.sp)}\t${copyField(p.sn)}\t${copyField(p.dt)}\t${copyField(p.num)}\t${jsonField(p.v)}\t${jsonField(p.q)}\t${p.w}\n`;
}

/** The points of a batch and the rollups of those that were new, in one statement. */
const insertWithRollupsSql = `with new as (
    insert into history.points (${pointColumns}) ${pointsFrom}
    on conflict do nothing
    returning connection_id, reference, t, received_at, space, num, value, validity
  ), minute as (${rollupSql('rollup_minute', '1 minute')})
  ${rollupSql('rollup_hour', '1 hour')}`;

/**
 * Text that grows outside the JavaScript heap: a part's points as the store takes them, UTF-8 in memory
 * of its own, so that a value read is no object or string still alive when the store commits it some
 * hundreds of milliseconds later (each would be copied by every young-generation collection meanwhile,
 * then promoted).
 */
class Bytes {
  /** Taken from the spares at the first text appended. */
  #buf: Buffer | undefined;
  #len = 0;

  append(text: string): void {
    let buf = (this.#buf ??= spareBuffers.pop() ?? Buffer.allocUnsafeSlow(256 * 1024));
    // At most 3 bytes of UTF-8 a UTF-16 unit.
    const room = this.#len + text.length * 3;
    if (room > buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(room, buf.length * 2));
      buf.copy(grown, 0, 0, this.#len);
      buf = this.#buf = grown;
    }
    this.#len += buf.write(text, this.#len);
  }

  /** The bytes in memory of their own, whole (so the embedded store's worker can be given them, moved). */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#len);
    if (this.#buf) out.set(this.#buf.subarray(0, this.#len));
    return out;
  }

  text(): string {
    return this.#buf ? this.#buf.toString('utf8', 0, this.#len) : '';
  }

  /** Gives the memory back for the next part's text, once what it holds was taken (`bytes()` or `text()`). */
  release(): void {
    if (this.#buf && this.#buf.length <= spareBufferMaxBytes && spareBuffers.length < 2) spareBuffers.push(this.#buf);
    this.#buf = undefined;
    this.#len = 0;
  }
}

/**
 * The memory of parts whose text was taken, for the next parts to write in: memory outside the heap counts
 * toward V8's full collections, and a buffer made and grown anew for every part made more of them. (What
 * a part gives the store is a copy of its exact length, moved to the store's worker.) A buffer grown past
 * `spareBufferMaxBytes` by a part of large values is not kept: the process would hold it for good.
 */
const spareBuffers: Buffer[] = [];
const spareBufferMaxBytes = 2 * 1024 * 1024;

/** Where a part's points begin: the event, and how many of its kept points went into the part before. */
type PartStart = { event: number; skip: number };

/**
 * A part of a batch, one transaction's worth, built as its events are read: its points as COPY text (the
 * embedded store) or as a JSON array (PostgreSQL), its rollups folded, the days its points fall on, its
 * session states, and where in the batch its points came from, to read them again on the rare path that
 * needs the rows themselves.
 */
class Part {
  readonly start: PartStart;
  readonly points: Bytes;
  readonly minute = new Fold(minuteMs);
  readonly hour = new Fold(hourMs);
  readonly days = new Set<number>();
  readonly sessions: SessionRow[] = [];
  readonly #copy: boolean;
  count = 0;

  constructor(start: PartStart, copy: boolean) {
    this.start = start;
    this.#copy = copy;
    this.points = new Bytes();
  }

  add(p: PointRow, receipt: number): void {
    if (this.#copy) this.points.append(copyLine(p));
    else this.points.append(`${this.count === 0 ? '[' : ','}${JSON.stringify(p)}`);
    this.count++;
    const at = instantOf(p.t);
    this.minute.add(p, at, receipt);
    this.hour.add(p, at, receipt);
    this.days.add(dayOf(receipt));
  }

  /**
   * The points as the store takes them, taken once: COPY text as bytes of their own (the embedded store),
   * or a JSON array (a part built without COPY). The part's memory goes back for the next part.
   */
  take(): Uint8Array | string {
    const taken = this.#copy ? this.points.bytes() : this.count === 0 ? '[]' : `${this.points.text()}]`;
    this.points.release();
    return taken;
  }
}

/**
 * Records a batch of events: every value not recorded before, every session state not known before. The
 * service gives it the store's bulk lane (`Store.bulk()`): a batch waits while shorter work waits.
 */
export async function record(
  store: Transactional,
  partitions: Partitions,
  batch: DurableEvent[],
  settings: { retentionDays: number; now?: () => number; log?: Logger },
): Promise<void> {
  // A value older than what is kept has no partition to go to (and would be dropped at the next upkeep).
  const from = keptFrom((settings.now ?? Date.now)(), settings.retentionDays);
  // A batch of many values goes in as several transactions of about `valuesPerTransaction` each, its
  // events read a part at a time, so that neither reading a batch nor one turn of the embedded store runs
  // for seconds (a report of thousands of values, 500 of them in a batch). The batch is acknowledged once
  // every part is in; one delivered again after some parts went in finds those values recorded and takes
  // the redelivery path (`recordPart`) for them. A point is written into its part as it is read, so none
  // lives on as an object while its part waits for the store (but for the points of a report larger than a
  // part, held while that report is read).
  const copy = store.transactionOf !== undefined;
  let part = new Part({ event: 0, skip: 0 }, copy);
  let old = 0;
  const flush = async (next: PartStart) => {
    const done = part;
    part = new Part(next, copy);
    const points = done.take();
    if (done.count === 0 && done.sessions.length === 0) return;
    if (done.count > 0) await partitions.ensure(done.days);
    await recordPart(store, done, points, () => pointsOf(batch, done, from));
  };
  // Reading the events runs in time slices: 2,000 values read in one go held the main thread 30–65 ms.
  const slice = slices();
  for (let i = 0; i < batch.length; i++) {
    const rows = rowsOf(batch[i]!, from);
    for (const state of rows.sessions) part.sessions.push(state);
    let kept = 0;
    for (const point of rows.points) {
      const receipt = instantOf(point.at);
      if (receipt < from) {
        old++;
        continue;
      }
      part.add(point, receipt);
      kept++;
      if (part.count >= valuesPerTransaction) await flush({ event: i, skip: kept });
    }
    if (slice.due()) await slice.next();
  }
  await flush({ event: batch.length, skip: 0 });
  if (old > 0) settings.log?.debug({ values: old }, 'values older than the retention not recorded');
}

/** The points of a part read again from its events, as `record` put them into it. */
function pointsOf(batch: DurableEvent[], part: Part, from: number): PointRow[] {
  const points: PointRow[] = [];
  let skip = part.start.skip;
  for (let i = part.start.event; i < batch.length && points.length < part.count; i++) {
    for (const point of rowsOf(batch[i]!, from).points) {
      if (instantOf(point.at) < from) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      points.push(point);
      if (points.length === part.count) break;
    }
  }
  return points;
}

/** The most values recorded in one transaction (about a tenth of a second of the embedded store's CPU). */
export const valuesPerTransaction = 2000;

const insertSessionsSql = `insert into history.sessions (connection_id, since, state, space, last_error)
  select c, since, state, sp, err from jsonb_to_recordset($1::jsonb) as x(c uuid, since timestamptz, state text, sp text, err text)
  on conflict do nothing`;

/** Records a part's values (`points`, as `Part.take` gave them) and session states in one transaction; `rows` reads its points again. */
async function recordPart(store: Transactional, part: Part, points: Uint8Array | string, rows: () => PointRow[]): Promise<void> {
  const sessions = part.sessions;
  const recordSessions = async (tx: Queryable) => {
    if (sessions.length > 0) await tx.query(insertSessionsSql, [JSON.stringify(sessions)]);
  };
  // The usual part holds only values never recorded: its points go in by a plain insert (no speculative
  // insertion per row, which ON CONFLICT would cost) and its rollups, folded as they were read (a few
  // rows per attribute), are merged after. If any value was recorded before (a redelivery, part of one,
  // the same value twice in the batch, or another replica's batch holding it), the uniqueness index stops
  // the insert and rolls that transaction back; the part's points are then read again from its events and
  // recorded with ON CONFLICT DO NOTHING, the rollups made in SQL from exactly the rows that were new. On
  // the embedded store the usual part is one request (`transactionOf`: one turn, no round trip a
  // statement) and its points go in as COPY text, which costs the store less CPU a value than the same
  // rows as JSON (bench/README.md, "The history's recording on the embedded store").
  if (part.count > 0) {
    try {
      const rollups = [part.minute.json(), part.hour.json()];
      if (store.transactionOf) {
        const steps: Step[] = [
          { copy: { table: 'history.points', columns: copiedColumns, text: points } },
          { sql: mergeFolded, params: rollups },
        ];
        if (sessions.length > 0) steps.push({ sql: insertSessionsSql, params: [JSON.stringify(sessions)] });
        await store.transactionOf(steps);
        return;
      }
      await store.transaction(async (tx) => {
        await tx.query(insertPointsSql, [points]);
        await tx.query(mergeFolded, rollups);
        await recordSessions(tx);
      });
      return;
    } catch (err) {
      if (!(err instanceof ConstraintViolation && err.kind === 'unique')) throw err;
    }
  }
  const again = part.count > 0 ? JSON.stringify(rows()) : undefined;
  await store.transaction(async (tx) => {
    if (again !== undefined) await tx.query(insertWithRollupsSql, [again]);
    await recordSessions(tx);
  });
}
