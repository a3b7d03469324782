/**
 * The history service end to end: values a device reports through a live session are recorded and read
 * back as trends through the gateway; redelivered events never double a point; long periods come back
 * in buckets that keep their spikes; a session that was down is a gap; CSV streams every value; another
 * space sees nothing; bad questions are 400s. Events the protocol service publishes are also published
 * here by hand (the bus contract of the service), to make periods a device would take hours to fill.
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startSimulator } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';
import { liveConnection, until } from '@scada/testkit/live';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '500',
  MMS_REQUEST_TIMEOUT_MS: '2000',
  MMS_IDLE_PROBE_MS: '2000',
});
t.teardown(() => p.stop());
const D = 'SIMLD0';
const BRCB = `${D}/LLN0$BR$brcb`;
const encoder = new TextEncoder();

type Point = { t: string; value: unknown; quality: unknown; min?: number; max?: number; count?: number };
type Answer = { resolution: string; bucketSeconds: number | null; points: Point[]; gaps: { from: string; to: string; reason: string }[] };

const viewer = await signIn(p, { role: 'viewer' });
const editor = await signIn(p, { role: 'editor' });

const history = (id: string, query: Record<string, string | number>, headers = viewer.headers) =>
  fetch(`${p.url}/api/connections/${id}/history?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, {
    headers,
  });

/** A connection of the default space that no device answers for: its events are published by hand. */
async function handConnection(): Promise<string> {
  const c = await liveConnection(p, 1, { editor });
  return c.id;
}

/** Publishes a report event as the protocol service does. */
function report(
  connectionId: string,
  values: { reference: string; value: unknown; at: number; validity?: string }[],
  seqNum: number | null,
  rcb = `${D}/LLN0$RP$urcb01`,
) {
  const body = {
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
      timestamp: new Date(v.at).toISOString(),
      timestampSource: 'attribute',
      receivedAt: new Date(v.at).toISOString(),
      rcb,
      reason: ['data-change'],
      seqNum,
    })),
  };
  p.proc.bus.publish('events.protocol.report', encoder.encode(JSON.stringify(body)));
}

function session(connectionId: string, state: string, since: number, lastError: string | null = null) {
  const at = new Date().toISOString();
  p.proc.bus.publish(
    'events.protocol.session',
    encoder.encode(
      JSON.stringify({ space: 'default', connectionId, state, since: new Date(since).toISOString(), lastError, warnings: [], at }),
    ),
  );
}

async function summary(id: string): Promise<{ reference: string; first: string; last: string; count: number }[]> {
  const res = await fetch(`${p.url}/api/connections/${id}/history/summary`, { headers: viewer.headers });
  if (res.status !== 200) throw new Error(`summary answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as never;
}

const countOf = async (id: string, reference: string) => (await summary(id)).find((s) => s.reference === reference)?.count ?? 0;

t.test(`a device's reported values are recorded and read back (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port, { editor });
  await c.connect();
  t.equal(
    (await c.api('POST', '/reports', { rcb: BRCB, triggers: ['dchg'], optionalFields: ['sequence-number', 'entry-id'] })).status,
    204,
  );
  const q = sim.value(`${D}/GGIO1$MX$AnIn1$q`);
  for (let n = 1; n <= 5; n++) {
    sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value: n * 10, double: false }] },
        q,
        { type: 'utc-time', value: { seconds: Math.floor(Date.now() / 1000), fraction: 0, quality: 0 } } as never,
      ],
    });
    await until(`value ${n * 10} recorded`, async () => {
      const s = await summary(c.id);
      return s.find((e) => e.reference.includes('AnIn1.mag.f'))?.count === n;
    });
  }
  const s = await summary(c.id);
  const reference = s.find((e) => e.reference.includes('AnIn1.mag.f'))!.reference;
  t.equal(reference, `${D}/GGIO1.AnIn1.mag.f[MX]`, 'a reported data object is recorded attribute by attribute');
  const res = await history(c.id, { reference });
  t.equal(res.status, 200);
  const body = (await res.json()) as Answer;
  t.equal(body.resolution, 'raw');
  t.same(
    body.points.map((pt) => pt.value),
    [10, 20, 30, 40, 50],
    'every reported value once, in order, as numbers',
  );
  t.ok(body.points.every((pt) => typeof pt.t === 'string' && 'quality' in pt));
  t.same(body.gaps, [], 'the session was up the whole time');

  const read = await c.api('POST', '/read', { references: [`${D}/GGIO1$MX$AnIn1$mag$f`] });
  t.equal(read.status, 200);
  await until('the value read recorded', async () => (await summary(c.id)).find((e) => e.reference === reference)?.count === 6);
  const after = (await (await history(c.id, { reference, format: 'csv' })).text()).trim().split('\r\n');
  t.match(
    after.at(-1),
    /^[^,]+,[^,]+,[^,]*,50,[^,]*,.*,,$/,
    'a value read on request is recorded too, with no block and no sequence number',
  );
});

t.test('a redelivered event never doubles a point', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.TotW.mag.f[MX]`;
  const at = Date.now() - 60_000;
  for (let i = 0; i < 3; i++) report(id, [{ reference: ref, value: 1.5, at }], 7);
  report(id, [{ reference: ref, value: 2.5, at: at + 1000 }], 8);
  // The same sequence number later (an unbuffered block's SqNum wraps around): another value.
  report(id, [{ reference: ref, value: 3.5, at: at + 2000 }], 7);
  report(id, [{ reference: ref, value: 2.5, at: at + 1000 }], 8);
  await until('three values recorded', async () => (await countOf(id, ref)) === 3);
  // One more event after the repeats: once it is in, every repeat before it has been handled.
  report(id, [{ reference: ref, value: 4.5, at: at + 3000 }], 9);
  await until('the fourth recorded', async () => (await countOf(id, ref)) >= 4);
  t.equal(await countOf(id, ref), 4);
  const body = (await (await history(id, { reference: ref })).json()) as Answer;
  t.same(
    body.points.map((pt) => pt.value),
    [1.5, 2.5, 3.5, 4.5],
  );
});

t.test('a long period comes back in buckets that keep the spikes', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.Hz.mag.f[MX]`;
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 86_400_000;
  // Two hours of one value a second, with a spike of 1000 at one second and a dip of -5 at another.
  const n = 7200;
  const spikeAt = 4321;
  const dipAt = 1234;
  for (let i = 0; i < n; i += 400) {
    const values = [];
    for (let k = i; k < Math.min(n, i + 400); k++)
      values.push({
        reference: ref,
        value: k === spikeAt ? 1000 : k === dipAt ? -5 : 50,
        at: start + k * 1000,
        validity: k === spikeAt ? 'questionable' : 'good',
      });
    report(id, values, i % 256);
  }
  await until('two hours recorded', async () => (await countOf(id, ref)) === n, 30_000);
  const from = new Date(start).toISOString();
  const to = new Date(start + n * 1000).toISOString();

  const minutes = (await (await history(id, { reference: ref, from, to, maxPoints: 100 })).json()) as Answer;
  t.equal(minutes.resolution, 'minute');
  t.ok(minutes.points.length <= 100 && minutes.points.length >= 50, `${minutes.points.length} points of at most 100`);
  t.equal(Math.max(...minutes.points.map((pt) => pt.max!)), 1000, 'the spike survives');
  t.equal(Math.min(...minutes.points.map((pt) => pt.min!)), -5, 'so does the dip');
  t.equal(
    minutes.points.reduce((sum, pt) => sum + pt.count!, 0),
    n,
    'every value counted once',
  );
  t.equal(minutes.points.find((pt) => pt.max === 1000)?.quality, 'questionable', 'a bucket carries its worst quality');

  const fine = (await (await history(id, { reference: ref, from, to, maxPoints: 1000 })).json()) as Answer;
  t.equal(fine.resolution, 'raw-buckets');
  t.ok(fine.points.length <= 1000);
  t.equal(Math.max(...fine.points.map((pt) => pt.max!)), 1000);

  const hours = (await (await history(id, { reference: ref, from, to, maxPoints: 1 })).json()) as Answer;
  t.equal(hours.resolution, 'hour');
  t.ok(hours.points.length <= 1);
  t.match(hours.points[0], { min: -5, max: 1000, count: n });

  const raw = (await (
    await history(id, { reference: ref, from, to: new Date(start + 100_000).toISOString(), maxPoints: 10_000 })
  ).json()) as Answer;
  t.equal(raw.resolution, 'raw');
  t.equal(raw.points.length, 100);

  const csv = await history(id, { reference: ref, from, to, format: 'csv' });
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  const lines = (await csv.text()).trim().split('\r\n');
  t.equal(lines[0], 't,receivedAt,timestamp,value,validity,quality,rcb,seqNum');
  t.equal(lines.length, n + 1, 'CSV streams every value of the period, page after page');
  t.match(lines[spikeAt + 1], /^[^,]+,[^,]+,[^,]+,1000,questionable,/);
});

t.test('a dense minute comes back in buckets of a second, each holding its own values and no other', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.TotW.mag.f[MX]`;
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 86_400_000 + 3_600_000;
  // 61 s of a value every 20 ms (50 a second, a bucket holding many: the store sums each bucket by a range
  // read of its own), its value its index, one questionable; read from 250 ms in, so that no bucket's edge
  // is a whole second, and to 250 ms before the end.
  const n = 61 * 50;
  const odd = 1234;
  for (let i = 0; i < n; i += 400) {
    const values = [];
    for (let k = i; k < Math.min(n, i + 400); k++)
      values.push({ reference: ref, value: k, at: start + k * 20, validity: k === odd ? 'questionable' : 'good' });
    report(id, values, (i / 400) % 256);
  }
  await until('the minute recorded', async () => (await countOf(id, ref)) === n, 30_000);
  const from = start + 250;
  const to = start + 61_000 - 250;
  const answer = (await (
    await history(id, { reference: ref, from: new Date(from).toISOString(), to: new Date(to).toISOString(), maxPoints: 1000 })
  ).json()) as Answer;
  t.equal(answer.resolution, 'raw-buckets');
  t.equal(answer.bucketSeconds, 1);
  const expected = Array.from({ length: Math.ceil((to - from) / 1000) }, (_, b) => {
    const lo = from + b * 1000;
    const hi = Math.min(to, lo + 1000);
    const ks = Array.from({ length: n }, (_, k) => k).filter((k) => start + k * 20 >= lo && start + k * 20 < hi);
    return {
      t: new Date(lo).toISOString(),
      value: ks.reduce((a, k) => a + k, 0) / ks.length,
      quality: ks.includes(odd) ? 'questionable' : 'good',
      count: ks.length,
      min: Math.min(...ks),
      max: Math.max(...ks),
    };
  });
  t.same(answer.points, expected, 'every bucket: its count, mean, min, max and worst quality, the last one cut at the end');
  t.equal(
    answer.points.reduce((a, pt) => a + pt.count!, 0),
    (to - from) / 20,
    'every value of the period counted once',
  );
});

t.test('a bucket of values that are no numbers answers the last of them; one with numbers their mean', async (t) => {
  const id = await handConnection();
  const text = `${D}/GGIO1.Str1.stVal[ST]`;
  const mixed = `${D}/GGIO1.Mix1.stVal[ST]`;
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 2 * 86_400_000;
  // Ten minutes of a text a second, its value the second's number as text; a mixed attribute alternates
  // numbers and texts. Reported in an order other than the time axis: the last is by time, not by arrival.
  const n = 600;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (a % 7) - (b % 7) || b - a);
  for (let i = 0; i < n; i += 200) {
    const part = order.slice(i, i + 200);
    report(
      id,
      part.flatMap((k) => [
        { reference: text, value: `s${k}`, at: start + k * 1000 },
        { reference: mixed, value: k % 2 === 0 ? k : `m${k}`, at: start + k * 1000 },
      ]),
      i,
    );
  }
  await until('recorded', async () => (await countOf(id, text)) === n && (await countOf(id, mixed)) === n, 30_000);
  const from = new Date(start).toISOString();
  const to = new Date(start + n * 1000).toISOString();
  for (const [maxPoints, resolution, seconds] of [
    [60, 'raw-buckets', 10],
    [5, 'minute', 120],
  ] as const) {
    const texts = (await (await history(id, { reference: text, from, to, maxPoints })).json()) as Answer;
    t.equal(texts.resolution, resolution, `${maxPoints} points: ${resolution}`);
    t.equal(texts.bucketSeconds, seconds);
    t.same(
      texts.points.map((pt) => pt.value),
      texts.points.map((_, b) => `s${(b + 1) * seconds - 1}`),
      'each bucket of texts answers its last text by time',
    );
    const mix = (await (await history(id, { reference: mixed, from, to, maxPoints })).json()) as Answer;
    t.same(
      mix.points.map((pt) => pt.value),
      mix.points.map((_, b) => {
        const evens = Array.from({ length: seconds / 2 }, (_, k) => b * seconds + 2 * k);
        return evens.reduce((a, c) => a + c, 0) / evens.length;
      }),
      'a bucket holding numbers answers the mean of its numbers',
    );
  }
});

t.test('a period the session was down is a gap', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.PPV.mag.f[MX]`;
  const t0 = Date.now() - 600_000;
  session(id, 'connected', t0);
  report(id, [{ reference: ref, value: 1, at: t0 + 1000 }], 1);
  session(id, 'waiting', t0 + 60_000, 'the device does not answer');
  session(id, 'connected', t0 + 180_000);
  report(id, [{ reference: ref, value: 2, at: t0 + 181_000 }], 2);
  session(id, 'stopped', t0 + 300_000);
  await until('recorded', async () => (await countOf(id, ref)) === 2);
  const query = { reference: ref, from: new Date(t0).toISOString(), to: new Date(t0 + 400_000).toISOString() };
  const body = await until('both gaps', async () => {
    const b = (await (await history(id, query)).json()) as Answer;
    return b.gaps.length === 2 && b;
  });
  t.same(body.gaps, [
    { from: new Date(t0 + 60_000).toISOString(), to: new Date(t0 + 180_000).toISOString(), reason: 'waiting: the device does not answer' },
    { from: new Date(t0 + 300_000).toISOString(), to: query.to, reason: 'stopped' },
  ]);
  const inside = (await (await history(id, { ...query, from: new Date(t0 + 120_000).toISOString() })).json()) as Answer;
  t.same(
    inside.gaps[0],
    { from: new Date(t0 + 120_000).toISOString(), to: new Date(t0 + 180_000).toISOString(), reason: 'waiting: the device does not answer' },
    'a gap that began before the period begins with it',
  );
});

t.test('another space sees nothing of it', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.A.mag.f[MX]`;
  report(id, [{ reference: ref, value: 1, at: Date.now() - 1000 }], 1);
  await until('recorded', async () => (await countOf(id, ref)) === 1);
  const other = await createSpace(p, 'history-other');
  const stranger = await signIn(p, { role: 'viewer', spaces: [other] });
  const headers = { ...stranger.headers, 'x-space': other };
  const res = await history(id, { reference: ref }, headers);
  t.equal(res.status, 404);
  t.match(res.headers.get('content-type'), /application\/problem\+json/);
  t.equal((await fetch(`${p.url}/api/connections/${id}/history/summary`, { headers })).status, 404);
  t.equal((await history(id, { reference: ref, format: 'csv' }, headers)).status, 404);
  t.equal((await history(randomUUID(), { reference: ref })).status, 404, 'a connection nobody has: 404');
  t.equal((await fetch(`${p.url}/api/connections/${id}/history?reference=${encodeURIComponent(ref)}`)).status, 401, 'no session: 401');
});

t.test('bad questions are 400 problems', async (t) => {
  const id = await handConnection();
  const ref = `${D}/MMXU1.VA.mag.f[MX]`;
  report(id, [{ reference: ref, value: 1, at: Date.now() - 1000 }], 1);
  await until('recorded', async () => (await countOf(id, ref)) === 1);
  const now = Date.now();
  const cases: [string, Record<string, string | number>][] = [
    ['from after to', { reference: ref, from: new Date(now).toISOString(), to: new Date(now - 1000).toISOString() }],
    ['a date that is no date', { reference: ref, from: '2026-02-30T00:00:00Z' }],
    ['not a date at all', { reference: ref, to: 'yesterday' }],
    ['maxPoints 0', { reference: ref, maxPoints: 0 }],
    ['maxPoints above 10,000', { reference: ref, maxPoints: 10_001 }],
    ['maxPoints not a number', { reference: ref, maxPoints: 'many' }],
    ['an attribute never recorded', { reference: `${D}/MMXU1.Nothing.mag.f[MX]` }],
    ['a reference that is no reference', { reference: 'no reference' }],
    ['no reference', {}],
    ['an unknown format', { reference: ref, format: 'xml' }],
    ['an unknown parameter', { reference: ref, colour: 'red' }],
  ];
  for (const [what, query] of cases) {
    for (const format of ['json', 'csv']) {
      if (format === 'csv' && 'format' in query) continue;
      const res = await history(id, format === 'csv' ? { ...query, format } : query);
      t.equal(res.status, 400, `${what} (${format}): 400`);
      t.match(res.headers.get('content-type'), /application\/problem\+json/);
      t.match(await res.json(), { status: 400, code: 'validation_failed' });
    }
  }
  t.equal((await history('not-a-uuid', { reference: ref })).status, 400);
});
