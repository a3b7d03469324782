/**
 * An alarm flood, end to end on the embedded platform (or on NATS and PostgreSQL when `NATS_URL` and
 * `DATABASE_URL` are set): the IEC 61850 simulator changes a measured value `ALARM_BENCH_RATE` times a
 * second (10 unless told) for `BENCH_SECONDS` (10), alternately above and below the limit of
 * `ALARM_BENCH_ALARMS` analog alarms on it (10), so every change makes a transition of every alarm
 * (100 a second, 1,000 in 10 s). One client follows `/api/live` with topics `values` and `alarms`.
 *
 * Reported: transitions made, recorded in the journal and delivered on the stream; and the latency from
 * the value change (the moment the simulator's value is set) to its `event: alarm` on the stream, against
 * the baseline of the same change to its `event: value` on the same stream, in the same run.
 */
import { utcTimeFromMs } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startBenchPlatform } from '@scada/testkit/bench_platform';

const rate = Number(process.env.ALARM_BENCH_RATE ?? 10);
const alarmCount = Number(process.env.ALARM_BENCH_ALARMS ?? 10);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const D = 'SIMLD0';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
const platform = await startBenchPlatform({ name: 'alarms' });
const { base, headers } = platform;
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as { id: string }) : null;
};

const project = (await post('/api/projects', { name: 'bench', isActive: true }))!;
const form = new FormData();
form.set('connection', JSON.stringify({ name: 'sim', ip: '127.0.0.1', port: sim.port, projectId: project.id, protocol: 'IEC 61850' }));
form.set('file', new Blob([FIXTURE_SCL], { type: 'application/xml' }), 'device.icd');
const connection = (await (
  await fetch(`${base}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers, body: form })
).json()) as {
  id: string;
};
const group = (await post('/api/alarm-groups', { name: 'flood', projectId: project.id, minPriority: 1, maxPriority: 255 }))!;
for (let i = 0; i < alarmCount; i++) {
  await post('/api/alarm-definitions', {
    name: `load ${i}`,
    groupId: group.id,
    connectionId: connection.id,
    reference: `${D}/GGIO1.AnIn1.mag.f[MX]`,
    type: 'analog',
    h: 50,
    priority: 1 + (i % 255),
    message: `load ${i} high`,
  });
}

/** The stream: when each value and each alarm event arrived, by the value it carries. */
const valueAt = new Map<number, number>();
const alarmAt: { n: number; at: number }[] = [];
const abort = new AbortController();
const stream = await fetch(`${base}/api/live?connections=${connection.id}&topics=values,alarms`, {
  headers: { ...headers, accept: 'text/event-stream' },
  signal: abort.signal,
});
const reading = (async () => {
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now();
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (!data || (event !== 'value' && event !== 'alarm')) continue;
        const body = JSON.parse(data) as { value: unknown };
        if (event === 'alarm') alarmAt.push({ n: Math.abs(Number(body.value)) - 100, at });
        else {
          const f = (body.value as { mag?: { f?: number } } | null)?.mag?.f;
          if (typeof f === 'number' && !valueAt.has(Math.abs(f) - 100)) valueAt.set(Math.abs(f) - 100, at);
        }
      }
    }
  } catch {
    // closed
  }
})();

await post(`/api/connections/${connection.id}/start`, {});
for (let i = 0; ; i++) {
  const session = (await (await fetch(`${base}/api/connections/${connection.id}/session`, { headers })).json()) as { state: string };
  if (session.state === 'connected') break;
  if (i > 300) throw new Error('the connection did not connect');
  await new Promise((r) => setTimeout(r, 100));
}
await post(`/api/connections/${connection.id}/reports`, {
  rcb: `${D}/LLN0$BR$brcb`,
  triggers: ['dchg'],
  optionalFields: ['sequence-number'],
});

const q = sim.value(`${D}/GGIO1$MX$AnIn1$q`);
const setAt = new Map<number, number>();
const changes = Math.round(rate * seconds);
const started = performance.now();
for (let n = 1; n <= changes; n++) {
  const due = started + ((n - 1) * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  // Above the limit on odd changes, below it on even ones: every change moves every alarm.
  const f = n % 2 === 1 ? 100 + n : -(100 + n);
  setAt.set(n, performance.now());
  sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
    type: 'structure',
    value: [
      { type: 'structure', value: [{ type: 'float', value: f, double: false }] },
      q,
      { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
    ],
  });
}
const expected = changes * alarmCount;
const deadline = performance.now() + 60_000;
while (alarmAt.length < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
const drainedMs = performance.now() - started;
await new Promise((r) => setTimeout(r, 500));

let recorded = 0;
for (let after: string | null = null; ; ) {
  const page = (await (await fetch(`${base}/api/alarms/journal?limit=1000${after ? `&after=${after}` : ''}`, { headers })).json()) as {
    rows: unknown[];
    next: string | null;
  };
  recorded += page.rows.length;
  if (!page.next) break;
  after = page.next;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number) : Number.NaN;
};
const alarmLatency = alarmAt.flatMap(({ n, at }) => (setAt.has(n) ? [at - (setAt.get(n) as number)] : []));
const valueLatency = [...valueAt].flatMap(([n, at]) => (setAt.has(n) ? [at - (setAt.get(n) as number)] : []));
const fmt = (x: number) => x.toFixed(1);

console.log(
  `Alarm flood (${platform.mode === 'NATS' ? 'NATS and PostgreSQL' : 'embedded store, in-process bus'}): ${changes} value changes in ${seconds} s, ${alarmCount} alarms on the value, ${expected} transitions expected`,
);
console.log('');
console.log('| transitions made | recorded in the journal | delivered on /api/live | all delivered after | ');
console.log('|---:|---:|---:|---:|');
console.log(`| ${expected} | ${recorded} | ${alarmAt.length} | ${(drainedMs / 1000).toFixed(1)} s |`);
console.log('');
console.log('| from the value change to | events | p50 ms | p99 ms | ratio to baseline (p99) |');
console.log('|---|---:|---:|---:|---:|');
console.log(
  `| its \`event: value\` (baseline) | ${valueLatency.length} | ${fmt(percentile(valueLatency, 50))} | ${fmt(percentile(valueLatency, 99))} | 1.00 |`,
);
console.log(
  `| its \`event: alarm\` | ${alarmLatency.length} | ${fmt(percentile(alarmLatency, 50))} | ${fmt(percentile(alarmLatency, 99))} | ${(percentile(alarmLatency, 99) / percentile(valueLatency, 99)).toFixed(2)} |`,
);

abort.abort();
await reading;
await platform.stop();
await sim.stop();
