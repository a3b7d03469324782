/**
 * The history's recording, against the store directly: a batch of values never seen goes in with its
 * rollups folded in memory; a batch some of whose values were recorded before (a redelivery, part of one,
 * or the same value twice in a batch) is recorded with the rollups of exactly the values that were new.
 * Either way the minute and hour rollups are what the recorded points make them. On the embedded store,
 * and on PostgreSQL when `DATABASE_URL` is set.
 */
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { loadMigrations, type DurableEvent, type Store } from '@scada/platform';
import { storeTargets } from '@scada/testkit/stores';
import { record } from '../src/ingest.ts';
import { Partitions } from '../src/partitions.ts';

// The store the run names: a database of its own on PostgreSQL when `DATABASE_URL` is set, otherwise the
// embedded store started from the suite's cached fresh database (no initdb of its own), compiled as a
// platform compiles it.
const [target] = storeTargets();
const made = await target!.make();
t.teardown(() => made.cleanup());
const store: Store = made.store;
const database = target!.name === 'postgres';
await store.query('create schema if not exists history');
for (const m of await loadMigrations(new URL('../migrations/', import.meta.url))) await store.query(m.sql);
const partitions = new Partitions(store);
await partitions.upkeep(Date.now(), 30, 1);
const encoder = new TextEncoder();
const rcb = 'LD0/LLN0$RP$urcb01';

type Value = { reference: string; value: unknown; at: number; device?: number; validity?: string };

function report(connectionId: string, seqNum: number, values: Value[]): DurableEvent {
  return {
    subject: 'events.protocol.report',
    data: encoder.encode(
      JSON.stringify({
        space: 'default',
        connectionId,
        rcb,
        rptId: 'r',
        seqNum,
        entryId: null,
        at: new Date().toISOString(),
        values: values.map((v) => ({
          connectionId,
          reference: v.reference,
          value: v.value,
          quality: v.validity ? { validity: v.validity, detail: [], source: 'process', test: false, operatorBlocked: false } : null,
          timestamp: v.device === undefined ? null : new Date(v.device).toISOString(),
          timestampSource: v.device === undefined ? null : 'attribute',
          receivedAt: new Date(v.at).toISOString(),
          rcb,
          reason: ['data-change'],
          seqNum,
        })),
      }),
    ),
  };
}

/** The rollups as kept, beside the rollups the recorded points make, for one connection. */
async function rollups(connectionId: string, table: 'rollup_minute' | 'rollup_hour', width: string) {
  const kept = await store.query(
    `select reference, bucket, count, numbers, min, max, sum::numeric(20,6)::text as sum, first_at, last_at, last_num, last_value, worst
     from history.${table} where connection_id = $1 order by reference, bucket`,
    [connectionId],
  );
  const made = await store.query(
    `select reference, date_bin('${width}', t, timestamptz '2000-01-01 00:00:00+00') as bucket, count(*)::int as count,
       count(num)::int as numbers, min(num) as min, max(num) as max, sum(num)::numeric(20,6)::text as sum,
       min(t) as first_at, max(t) as last_at,
       (array_agg(num order by t desc, received_at desc))[1] as last_num,
       (array_agg(value order by t desc, received_at desc))[1] as last_value,
       max(validity) as worst
     from history.points where connection_id = $1 group by 1, 2 order by 1, 2`,
    [connectionId],
  );
  return { kept: kept.rows, made: made.rows };
}

/** The connection's points number `n`, and its rollups are what they make, each value counted once. */
async function recordedOnce(t: Test, id: string, n: number, what: string) {
  const { rows } = await store.query<{ n: number }>('select count(*)::int as n from history.points where connection_id = $1', [id]);
  t.equal(rows[0]!.n, n, what);
  for (const [table, width] of [
    ['rollup_minute', '1 minute'],
    ['rollup_hour', '1 hour'],
  ] as const) {
    const { kept, made } = await rollups(id, table, width);
    t.same(kept, made, `${table}: what the recorded points make`);
    t.equal(
      kept.reduce((sum, r) => sum + Number(r.count), 0),
      n,
      `${table}: every value counted once`,
    );
  }
}

const settings = { retentionDays: 30 };
const hour = 3_600_000;
const start = Math.floor(Date.now() / hour) * hour - 2 * hour;
const refs = ['LD0/MMXU1.A.phsA.cVal.mag.f[MX]', 'LD0/GGIO1.Ind1.stVal[ST]'];

function valuesOf(n: number, offset: number): Value[][] {
  return Array.from({ length: n }, (_, i) => [
    {
      reference: refs[0]!,
      value: Math.sin(i + offset) * 10,
      at: start + (i + offset) * 7_000,
      // The device's time, up to 80 s before receipt: its buckets are not those of the receipt.
      device: start + (i + offset) * 7_000 - ((i + offset) % 5) * 20_000,
      validity: i % 17 === 0 ? 'questionable' : 'good',
    },
    { reference: refs[1]!, value: (i + offset) % 3 === 0, at: start + (i + offset) * 7_000 },
  ]);
}

t.test(`new values and redelivered ones keep exact rollups (${database ? 'PostgreSQL' : 'embedded store'})`, async (t) => {
  const id = randomUUID();
  const first = valuesOf(600, 0).map((v, i) => report(id, i % 256, v));
  await record(store, partitions, first.slice(0, 300), settings);
  // Part of the first batch again, with values never seen: only the new ones count.
  await record(store, partitions, first.slice(200, 450), settings);
  // The same event twice in one batch.
  await record(store, partitions, [first[500]!, first[500]!, first[501]!], settings);
  // Everything again, and the rest.
  await record(store, partitions, first, settings);
  const { rows } = await store.query<{ n: number }>('select count(*)::int as n from history.points where connection_id = $1', [id]);
  t.equal(rows[0]!.n, 1200, 'every value once');
  for (const [table, width] of [
    ['rollup_minute', '1 minute'],
    ['rollup_hour', '1 hour'],
  ] as const) {
    const { kept, made } = await rollups(id, table, width);
    t.ok(kept.length > 2, `${kept.length} ${table} rows`);
    t.same(kept, made, `${table}: what the recorded points make`);
    t.equal(
      kept.reduce((n, r) => n + Number(r.count), 0),
      1200,
      `${table}: every value counted once`,
    );
  }
});

t.test(
  `a batch of more values than one transaction takes is recorded whole, again too (${database ? 'PostgreSQL' : 'embedded store'})`,
  async (t) => {
    const id = randomUUID();
    // 2,500 reports of two values each: 5,000 values, three transactions of at most 2,000 (valuesPerTransaction).
    const events = Array.from({ length: 2500 }, (_, i) =>
      report(id, i % 256, [
        { reference: refs[0]!, value: i, at: start + i * 1000, validity: i % 13 === 0 ? 'invalid' : 'good' },
        { reference: refs[1]!, value: i % 2 === 0, at: start + i * 1000 },
      ]),
    );
    await record(store, partitions, events.slice(0, 1500), settings);
    // Again, with more: its first transaction holds only values recorded, its second some, its third none.
    await record(store, partitions, events, settings);
    await recordedOnce(t, id, 5000, 'every value once');
  },
);

t.test(
  `one report of more values than one transaction takes, delivered again after a part of it went in (${database ? 'PostgreSQL' : 'embedded store'})`,
  async (t) => {
    const id = randomUUID();
    // 4,600 values in one report, every 50th older than the retention (not recorded): 4,508 kept, in parts
    // of 2,000 that begin inside the report. The first 2,500 were recorded before, as a shorter report of
    // the same block: the first part holds only values recorded, the second some, the third none. A part
    // that meets a value recorded before is read again from the report, from where it began inside it.
    const old = Date.now() - 40 * 24 * hour;
    const values: Value[] = Array.from({ length: 4600 }, (_, i) => ({
      reference: refs[i % 2]!,
      value: i % 2 === 0 ? i / 4 : i % 3 === 0,
      at: i % 50 === 7 ? old + i : start + i * 100,
      validity: i % 11 === 0 ? 'questionable' : 'good',
    }));
    await record(store, partitions, [report(id, 9, values.slice(0, 2500))], settings);
    await record(store, partitions, [report(id, 9, values)], settings);
    await recordedOnce(t, id, 4508, 'every kept value once, none older than the retention');
  },
);

t.test(
  `values of every kind are recorded as the JSON path records them, awkward text too (${database ? 'PostgreSQL' : 'embedded store'})`,
  async (t) => {
    const kinds: unknown[] = [
      'plain',
      'tab\tline\nreturn\r back\\slash',
      '\\N',
      '',
      true,
      null,
      -1.5e-7,
      [1, 'two'],
      { deep: { text: 'a\tb' } },
      // PostgreSQL holds no NUL in text or jsonb, nor half a surrogate pair in jsonb: each kept with U+FFFD in
      // its place, not a batch failed for ever.
      'nul\u0000byte',
      'half\uD800pair',
      '\uDC00alone',
    ];
    const events = (id: string) =>
      kinds.map((value, i) =>
        report(id, i, [
          { reference: `LD0/GGIO1.Str${i}.stVal[ST]`, value, at: start + i * 1000, validity: i % 2 ? 'questionable' : 'good' },
        ]),
      );
    const fast = randomUUID();
    const plain = randomUUID();
    await record(store, partitions, events(fast), settings);
    // The same values through a lane that has neither COPY nor one-request transactions: the JSON path.
    const jsonOnly = {
      query: store.query.bind(store),
      transaction: <T>(fn: (tx: { query: typeof store.query }) => Promise<T>) =>
        store.transaction((tx) => fn({ query: tx.query.bind(tx) })),
    };
    await record(jsonOnly, partitions, events(plain), settings);
    const read = async (id: string) =>
      (
        await store.query(
          `select reference, t, received_at, rcb, seq, space, seq_num, device_time, num, value, quality, validity
           from history.points where connection_id = $1 order by reference`,
          [id],
        )
      ).rows;
    const recorded = await read(fast);
    // A structure is recorded attribute by attribute: the array's two items, the object's one leaf.
    t.equal(recorded.length, kinds.length + 1, 'every value recorded');
    t.same(recorded, await read(plain), 'each field as the JSON path records it');
    t.same(
      recorded.map((r) => r.value ?? r.num),
      // In the order of their references: Str11 and Str12 before Str2.
      [...kinds.slice(0, 2), 'half\uFFFDpair', '\uFFFDalone', ...kinds.slice(2, 5), null, -1.5e-7, 1, 'two', 'a\tb', 'nul\uFFFDbyte'],
      'the values read back as they were reported',
    );
  },
);
