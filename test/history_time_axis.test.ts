/**
 * The history's time axis, through the gateway: a value is placed at the device's time when it carries
 * one (entries buffered during an outage land where they happened, not where the link came back), at
 * its receipt otherwise; both times are answered, in JSON and CSV. A value that arrives late goes into
 * the rollup bucket of its time. No bucket counts, or takes its min or max from, a value outside the
 * period asked for. The protocol service's report events are published here by hand, with the device
 * and receipt times a test needs.
 */
import t, { type Test } from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { liveConnection, until } from '@scada/testkit/live';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const viewer = await signIn(p, { role: 'viewer' });
const editor = await signIn(p, { role: 'editor' });
const encoder = new TextEncoder();
const minute = 60_000;
const hour = 3_600_000;

type Point = { t: string; value: unknown; timestamp?: string | null; receivedAt?: string; min?: number; max?: number; count?: number };
type Answer = { resolution: string; bucketSeconds: number | null; points: Point[] };
/** A value as a device reports it: its device time (`device`, none when absent) and when it was received (`at`). */
type Sent = { value: number; at: number; device?: number };

const iso = (ms: number) => new Date(ms).toISOString();

/** Publishes the values in report events of up to 200 values, as the protocol service does. */
function send(connectionId: string, reference: string, values: Sent[]) {
  const rcb = 'LD0/LLN0$BR$brcb01';
  for (let first = 0; first < values.length; first += 200) {
    const entryId = `${connectionId}-${first}-${values[first]!.at}`;
    const reported = values.slice(first, first + 200).map((v) => ({
      connectionId,
      reference,
      value: v.value,
      quality: null,
      timestamp: v.device === undefined ? null : iso(v.device),
      timestampSource: v.device === undefined ? null : 'attribute',
      receivedAt: iso(v.at),
      rcb,
      reason: ['data-change'],
      seqNum: null,
    }));
    const body = { space: 'default', connectionId, rcb, rptId: 'r', seqNum: null, entryId, values: reported, at: iso(values[first]!.at) };
    p.proc.bus.publish('events.protocol.report', encoder.encode(JSON.stringify(body)));
  }
}

async function recorded(connectionId: string, count: number) {
  await until(`${count} values recorded`, async () => {
    const res = await fetch(`${p.url}/api/connections/${connectionId}/history/summary`, { headers: viewer.headers });
    const entries = (await res.json()) as { count: number }[];
    return entries.reduce((n, e) => n + e.count, 0) === count;
  });
}

async function history(connectionId: string, query: Record<string, string | number>): Promise<Response> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${p.url}/api/connections/${connectionId}/history?${search}`, { headers: viewer.headers });
  if (res.status !== 200) throw new Error(`history answered ${res.status}: ${await res.text()}`);
  return res;
}

const trend = async (connectionId: string, query: Record<string, string | number>) =>
  (await (await history(connectionId, query)).json()) as Answer;

/** What a bucket of these values would say: how many, the smallest and the largest. */
function statsOf(values: number[]) {
  return { count: values.length, min: Math.min(...values), max: Math.max(...values) };
}

t.test(`entries buffered during an outage land at the device's time (${p.mode})`, async (t) => {
  const { id } = await liveConnection(p, 1, { editor });
  const ref = 'LD0/MMXU1.TotW.mag.f[MX]';
  const t0 = Math.floor(Date.now() / minute) * minute - 10 * minute;
  const back = t0 + 65_000;
  // A minute of entries the device kept while the link was down, every 3 s, all received when it came back.
  const buffered: Sent[] = Array.from({ length: 20 }, (_, i) => ({ value: i, device: t0 + i * 3000, at: back }));
  // After it: one with no device time (placed at its receipt), one whose clock was never set (1970, not
  // believed: placed at its receipt too), one stamped a little after receipt (clocks differ by seconds).
  const after: Sent[] = [
    { value: 100, at: back + 1000 },
    { value: 101, device: 0, at: back + 2000 },
    { value: 102, device: back + 3500, at: back + 3000 },
  ];
  send(id, ref, [...buffered, ...after]);
  await recorded(id, 23);

  const body = await trend(id, { reference: ref, from: iso(t0), to: iso(t0 + minute) });
  t.equal(body.resolution, 'raw');
  t.same(
    body.points.map((pt) => [pt.t, pt.value, pt.timestamp, pt.receivedAt]),
    buffered.map((v) => [iso(v.device!), v.value, iso(v.device!), iso(back)]),
    'each buffered entry at its device time, in their order, with the time of receipt beside it',
  );
  const later = await trend(id, { reference: ref, from: iso(back), to: iso(back + minute) });
  t.same(
    later.points.map((pt) => [pt.value, pt.t, pt.timestamp, pt.receivedAt]),
    [
      [100, iso(back + 1000), null, iso(back + 1000)],
      [101, iso(back + 2000), iso(0), iso(back + 2000)],
      [102, iso(back + 3500), iso(back + 3500), iso(back + 3000)],
    ],
    'no device time, or one that cannot be: at the receipt; a little ahead of it: believed',
  );

  const csv = (await (await history(id, { reference: ref, from: iso(t0), to: iso(back + minute), format: 'csv' })).text())
    .trim()
    .split('\r\n');
  t.equal(csv[0], 't,receivedAt,timestamp,value,validity,quality,rcb,seqNum');
  t.equal(csv.length, 24);
  t.same(
    csv.slice(1, 4).map((line) => line.split(',').slice(0, 4)),
    buffered.slice(0, 3).map((v) => [iso(v.device!), iso(back), iso(v.device!), String(v.value)]),
    'the CSV in the order of the time axis, with both times',
  );

  // Buckets and the summary are on the same axis: the minute the entries happened holds them all.
  const buckets = await trend(id, { reference: ref, from: iso(t0), to: iso(t0 + 2 * minute), maxPoints: 2 });
  t.equal(buckets.resolution, 'minute');
  t.match(buckets.points[0], { t: iso(t0), count: 20, min: 0, max: 19 });
});

t.test('a value that arrives late goes into the bucket of its time', async (t) => {
  const { id } = await liveConnection(p, 1, { editor });
  const ref = 'LD0/MMXU1.Hz.mag.f[MX]';
  const t0 = Math.floor(Date.now() / minute) * minute - 30 * minute;
  const values: Sent[] = Array.from({ length: 300 }, (_, i) => ({ value: 50 + (i % 7), device: t0 + i * 2000, at: t0 + i * 2000 + 40 }));
  send(id, ref, values);
  await recorded(id, 300);
  const query = { reference: ref, from: iso(t0), to: iso(t0 + 10 * minute), maxPoints: 5 };
  const before = await trend(id, query);
  t.equal(before.resolution, 'minute');
  t.equal(before.bucketSeconds, 120);
  t.match(before.points[1], { t: iso(t0 + 2 * minute), ...statsOf(values.slice(60, 120).map((v) => v.value)) });

  // Received twenty minutes after its time, as a site's buffer hands it over.
  send(id, ref, [{ value: 999, device: t0 + 3 * minute + 500, at: t0 + 23 * minute }]);
  await recorded(id, 301);
  const after = await trend(id, query);
  t.match(after.points[1], { t: iso(t0 + 2 * minute), count: 61, max: 999 }, 'the bucket of its time counts it');
  t.same(
    after.points.map((pt) => pt.count),
    [60, 61, 60, 60, 60],
    'and no other',
  );
  const raw = await trend(id, { reference: ref, from: iso(t0 + 3 * minute), to: iso(t0 + 3 * minute + 1000) });
  t.same(
    raw.points.map((pt) => pt.value),
    [values[90]!.value, 999],
    'in its place among the raw values',
  );
});

type Period = { from: number; to: number; outside: number; what: string };

/**
 * Records the values, a dip just before each period and a spike at its end, then reads each period with
 * each `maxPoints`: the buckets count exactly the values inside, and take their min and max from them.
 */
async function checkPeriods(t: Test, values: Sent[], periods: Period[], maxPointsList: number[]) {
  const { id } = await liveConnection(p, 1, { editor });
  const ref = 'LD0/MMXU1.PhV.mag.f[MX]';
  for (const { from, to, outside } of periods)
    values.push({ value: -outside, device: from - 1, at: from }, { value: outside, device: to, at: to + 1 });
  send(id, ref, values);
  await recorded(id, values.length);
  for (const { from, to, what } of periods) {
    const inside = values.filter((v) => v.device! >= from && v.device! < to).map((v) => v.value);
    for (const maxPoints of maxPointsList) {
      const body = await trend(id, { reference: ref, from: iso(from), to: iso(to), maxPoints });
      const label = `${what}, maxPoints ${maxPoints} (${body.resolution})`;
      // A raw point is a bucket of one.
      const buckets = body.points.map((pt) =>
        pt.count === undefined ? { ...pt, count: 1, min: pt.value as number, max: pt.value as number } : pt,
      );
      t.ok(buckets.length <= maxPoints, `${label}: ${buckets.length} points`);
      t.equal(
        buckets.reduce((n, pt) => n + pt.count!, 0),
        inside.length,
        `${label}: every value inside counted once, none outside`,
      );
      t.equal(Math.min(...buckets.map((pt) => pt.min!)), Math.min(...inside), `${label}: min from inside`);
      t.equal(Math.max(...buckets.map((pt) => pt.max!)), Math.max(...inside), `${label}: max from inside`);
      t.ok(
        body.points.every((pt) => Date.parse(pt.t) >= from && Date.parse(pt.t) < to),
        `${label}: every bucket begins inside the period`,
      );
      if (to - from <= minute) t.match(body.resolution, /^raw/, `${label}: made of raw values`);
    }
  }
}

t.test('no bucket holds a value from outside the period', async (t) => {
  // Ten minutes of a value every 110 ms around a minute's turn; the second period holds the first one's
  // dip and spike, not its own.
  const turn = Math.floor(Date.now() / minute) * minute - 20 * minute;
  const values: Sent[] = Array.from({ length: 5455 }, (_, i) => {
    const at = turn - 5 * minute + i * 110;
    return { value: (i * 37) % 101, device: at, at: at + 5 };
  });
  await checkPeriods(
    t,
    values,
    [
      { from: turn - 3000, to: turn + 3000, outside: 500, what: 'six seconds across a minute' },
      {
        from: turn - 2 * minute - 30_500,
        to: turn + 2 * minute + 20_500,
        outside: 1000,
        what: 'five minutes from and to the middle of minutes',
      },
    ],
    [1, 3, 5, 7, 100],
  );
});

t.test('no bucket of hours holds a value from outside the period', async (t) => {
  // Four hours of a value every 20 s; the period begins and ends in the middle of a minute and of an hour.
  const h0 = Math.floor(Date.now() / hour) * hour - 6 * hour;
  const values: Sent[] = Array.from({ length: 720 }, (_, i) => ({
    value: (i * 13) % 97,
    device: h0 + i * 20_000,
    at: h0 + i * 20_000 + 5,
  }));
  const period = { from: h0 + 17 * minute + 30_500, to: h0 + 3 * hour + 42 * minute + 10_500, outside: 1000, what: 'hours' };
  await checkPeriods(t, values, [period], [1, 2, 3, 20]);
});
