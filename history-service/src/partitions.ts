/**
 * The day partitions of `history.points`, kept by the service itself (no extension does it for us, and
 * PGlite has none): one partition per UTC day, `points_YYYYMMDD`, made ahead of today and on demand for a
 * point of a day that has none, and dropped once the whole day is past the retention.
 */
import type { Logger } from 'pino';
import type { Queryable, Store } from '@scada/platform';

const dayMs = 86_400_000;

/** The UTC day of a time, as its first millisecond. */
export function dayOf(ms: number): number {
  return Math.floor(ms / dayMs) * dayMs;
}

function nameOf(day: number): string {
  return `points_${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The first millisecond of the oldest day still kept. */
export function keptFrom(now: number, retentionDays: number): number {
  return dayOf(now) - (retentionDays - 1) * dayMs;
}

/** The partitions that exist, by their day. */
export class Partitions {
  readonly #store: Store;
  readonly #known = new Set<number>();
  #making: Promise<void> = Promise.resolve();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Makes sure each of these days has its partition (made one at a time, once). */
  async ensure(days: Iterable<number>): Promise<void> {
    const missing = [...new Set(days)].filter((d) => !this.#known.has(d));
    if (missing.length === 0) return;
    const run = this.#making.then(async () => {
      for (const day of missing) if (!this.#known.has(day)) await this.#make(this.#store, day);
    });
    this.#making = run.catch(() => {});
    await run;
  }

  async #make(db: Queryable, day: number): Promise<void> {
    const from = new Date(day).toISOString();
    const to = new Date(day + dayMs).toISOString();
    try {
      await db.query(
        `create table if not exists history.${nameOf(day)} partition of history.points for values from ('${from}') to ('${to}')`,
      );
    } catch (err) {
      // Another replica made it at the same moment.
      if (!(await this.#exists(day))) throw err;
    }
    this.#known.add(day);
  }

  async #exists(day: number): Promise<boolean> {
    const { rows } = await this.#store.query<{ n: number }>(
      `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'history' and c.relname = $1`,
      [nameOf(day)],
    );
    return rows[0]!.n > 0;
  }

  /** The days that have a partition, oldest first. */
  async days(): Promise<number[]> {
    const { rows } = await this.#store.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       join pg_class p on p.oid = i.inhparent join pg_namespace n on n.oid = p.relnamespace
       where n.nspname = 'history' and p.relname = 'points' order by c.relname`,
    );
    return rows
      .map((r) => /^points_(\d{4})(\d{2})(\d{2})$/.exec(r.name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  }

  /**
   * Upkeep: partitions for today and `ahead` days after it; every partition of a day before the kept
   * ones dropped, with the rollups and session states of that time.
   */
  async upkeep(now: number, retentionDays: number, ahead: number, log?: Logger): Promise<void> {
    const today = dayOf(now);
    await this.ensure(Array.from({ length: ahead + 1 }, (_, i) => today + i * dayMs));
    const from = keptFrom(now, retentionDays);
    const dropped: string[] = [];
    for (const day of await this.days()) {
      if (day >= from) continue;
      await this.#store.query(`drop table if exists history.${nameOf(day)}`);
      this.#known.delete(day);
      dropped.push(nameOf(day));
    }
    const cutoff = new Date(from).toISOString();
    await this.#store.query('delete from history.rollup_minute where bucket < $1', [cutoff]);
    await this.#store.query('delete from history.rollup_hour where bucket < $1', [cutoff]);
    // The last state before the cutoff stays: it says whether the session was down when the kept time began.
    await this.#store.query(
      `delete from history.sessions s where s.since < $1 and exists (
         select 1 from history.sessions later where later.connection_id = s.connection_id and later.since > s.since and later.since <= $1)`,
      [cutoff],
    );
    if (dropped.length > 0) log?.info({ partitions: dropped }, 'dropped history past its retention');
  }
}
