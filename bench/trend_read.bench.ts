/**
 * What one large trend read holds the main thread for: the embedded platform in this process (embedded
 * store, in-process bus), one attribute with `BENCH_TREND_POINTS` (10,000) values over the last minute, read
 * back through the gateway as raw values (`maxPoints` the same number, as the soak's reads ask)
 * `BENCH_TREND_READS` (20) times, one after the other. `BENCH_TREND_MAX_POINTS` asks for fewer points than
 * there are values: the soak's read of a minute of 5,000 values a second in 10,000 points is
 * `BENCH_TREND_POINTS=300000 BENCH_TREND_MAX_POINTS=10000` (buckets of raw values).
 *
 * Reports per read, medians and worst: the longest main-thread task while the read was answered (the
 * largest delay of the event loop `monitorEventLoopDelay` saw, at 1 ms resolution), the main thread's busy
 * time (`performance.eventLoopUtilization`), the process's CPU (every thread: the store's worker included)
 * and the answer's bytes (the same for every read, and for every build of the same data).
 */
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startBenchPlatform } from '@scada/testkit/bench_platform';
import { reportOf } from './reports.ts';

const points = Number(process.env.BENCH_TREND_POINTS ?? 10_000);
const reads = Number(process.env.BENCH_TREND_READS ?? 20);
const maxPoints = Number(process.env.BENCH_TREND_MAX_POINTS ?? points);
const perReport = 100;
const ref = 'BENCH/MMXU1.A.mag.f[MX]';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const r1 = (x: number) => Math.round(x * 10) / 10;

const platform = await startBenchPlatform({ name: 'trend-read', servers: false });
try {
  const url = platform.base;
  const headers = { ...platform.headers, 'x-space': 'default', 'content-type': 'application/json' };
  const project = (
    (await (
      await fetch(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', isActive: true }) })
    ).json()) as { id: string }
  ).id;
  const id = (
    (await (
      await fetch(`${url}/api/connections`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'feeder', ip: '127.0.0.1', port: 1, projectId: project, protocol: 'IEC 61850' }),
      })
    ).json()) as { id: string }
  ).id;
  // The values over the 50 s before now, so a read of the last minute holds them all.
  const now = Date.now();
  const start = now - 50_000;
  for (let r = 0; r < points / perReport; r++) {
    const values = Array.from({ length: perReport }, (_, k) => {
      const n = r * perReport + k;
      return { reference: ref, value: Math.sin(n / 100) * 100 + n / 7, at: start + Math.floor((n * 50_000) / points) };
    });
    platform.proc.bus.publish(
      'events.protocol.report',
      reportOf(
        id,
        r,
        values.map((v) => ({ ...v, reference: ref })),
      ),
    );
    if (r % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
  }
  const store = platform.proc.store!;
  for (let waited = 0; ; waited += 50) {
    const { rows } = await store.query<{ n: string | null }>('select sum(count) as n from history.rollup_hour where connection_id = $1', [
      id,
    ]);
    if (Number(rows[0]?.n ?? 0) >= points) break;
    if (waited > 600_000) throw new Error('the values were not recorded');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const query = new URLSearchParams({
    reference: ref,
    from: new Date(now - 60_000).toISOString(),
    to: new Date(now + 1000).toISOString(),
    maxPoints: String(maxPoints),
  });
  const longest: number[] = [];
  const busy: number[] = [];
  const cpu: number[] = [];
  const wall: number[] = [];
  const digests = new Set<string>();
  let bytes = 0;
  let resolution = '';
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  for (let i = 0; i < reads + 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    delay.reset();
    const elu = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await fetch(`${url}/api/connections/${id}/history?${query}`, { headers });
    const body = new Uint8Array(await res.arrayBuffer());
    const t1 = performance.now();
    const used = process.cpuUsage(cpu0);
    const active = performance.eventLoopUtilization(elu).active;
    // One more turn, so a task that ended as the answer's last bytes arrived is counted.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const worst = delay.max / 1e6;
    if (res.status !== 200) throw new Error(`the read answered ${res.status}`);
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { resolution: string; points: unknown[] };
    const expected =
      maxPoints >= points ? parsed.points.length === points && parsed.resolution === 'raw' : parsed.points.length <= maxPoints;
    if (!expected) throw new Error(`the read answered ${parsed.points.length} points as ${parsed.resolution}`);
    resolution = parsed.resolution;
    digests.add(createHash('sha256').update(body).digest('hex').slice(0, 16));
    bytes = body.byteLength;
    // The first two warm the code up.
    if (i < 2) continue;
    longest.push(worst);
    busy.push(active);
    cpu.push((used.user + used.system) / 1000);
    wall.push(t1 - t0);
  }
  delay.disable();
  console.log(
    `Trend read of ${points} values in at most ${maxPoints} points (${resolution}), embedded store, in-process bus, Node ${process.versions.node}, ${reads} reads (medians, worst in brackets)`,
  );
  console.log('');
  console.log(
    '| longest main-thread task ms | main thread busy ms a read | process CPU ms a read | wall ms a read | answer bytes, digest |',
  );
  console.log('|---:|---:|---:|---:|---|');
  console.log(
    `| ${r1(median(longest))} (${r1(Math.max(...longest))}) | ${r1(median(busy))} (${r1(Math.max(...busy))}) | ${r1(median(cpu))} (${r1(Math.max(...cpu))}) | ${r1(median(wall))} (${r1(Math.max(...wall))}) | ${bytes}, ${[...digests].join(' ')} |`,
  );
} finally {
  await platform.stop();
}
