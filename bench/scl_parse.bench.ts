/**
 * SCL parse throughput against a bare SAX pass over the same bytes, in one process. Generates an SCD of
 * SCL_BENCH_IEDS IEDs (default 200, about 50 MB), times the bare saxes tokeniser (same decoding, no model)
 * and `parseScl`, and reports MB/s, the ratio of parse throughput to the baseline, and the heap the parse
 * grew by at its peak as a multiple of the file size (sampled as chunks are pulled). Standalone.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SaxesParser } from 'saxes';
import { parseScl } from '@scada/iec61850';
import { generateScd } from '@scada/testkit/scd';

const ieds = Number(process.env.SCL_BENCH_IEDS ?? 200);
const runs = Number(process.env.SCL_BENCH_RUNS ?? 3);
const SLICE = 256 * 1024;
setFlagsFromString('--expose-gc');
/** A full garbage collection, so that each run starts from the same heap. */
const gc = runInNewContext('gc') as () => void;

/** The input as an upload arrives: slices of the buffer, sampling the heap as each is pulled. */
async function* slices(bytes: Uint8Array, peak: { heap: number }) {
  for (let at = 0; at < bytes.length; at += SLICE) {
    peak.heap = Math.max(peak.heap, process.memoryUsage().heapUsed);
    yield bytes.subarray(at, at + SLICE);
  }
}

/**
 * The baseline registers the same saxes events in the same order as the parser's XML layer: saxes keeps
 * handlers as properties that `on()` adds, so another set of handlers gives the parser another shape (and
 * a seventh handler a slow one), which would measure V8's object layout rather than the work.
 */
async function bareSax(bytes: Uint8Array, peak: { heap: number }): Promise<unknown> {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let elements = 0;
  const nothing = () => {};
  parser.on('error', nothing);
  parser.on('opentagstart', nothing);
  parser.on('opentag', () => void elements++);
  parser.on('closetag', nothing);
  parser.on('text', nothing);
  parser.on('cdata', nothing);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const slice of slices(bytes, peak)) parser.write(decoder.decode(slice, { stream: true }));
  parser.close();
  if (elements === 0) throw new Error('nothing tokenised');
  return elements;
}

async function fullParse(bytes: Uint8Array, peak: { heap: number }): Promise<unknown> {
  const result = await parseScl(slices(bytes, peak));
  if (!result.ok) throw new Error(JSON.stringify(result.report.errors.slice(0, 3)));
  return result;
}

/**
 * Times `runs` passes after a warm-up, then makes one more pass from a collected heap to see how far the
 * heap grows during it and how much stays afterwards. Collections come only after the timed passes: a
 * forced full collection between passes makes V8 drop optimised code each time, and after a few drops it
 * stops optimising (see the report of the parser's first version).
 */
async function measure(fn: typeof bareSax, bytes: Uint8Array) {
  await fn(bytes, { heap: 0 });
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn(bytes, { heap: 0 });
    times.push(performance.now() - started);
  }
  const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
  await new Promise((resolve) => setTimeout(resolve, 0)); // lets the last result go
  gc();
  const before = process.memoryUsage().heapUsed;
  const peak = { heap: before };
  const kept = await fn(bytes, peak);
  gc();
  const retained = Math.max(0, process.memoryUsage().heapUsed - before);
  if (kept === undefined) throw new Error('no result');
  return { ms, mbps: bytes.length / 1e6 / (ms / 1000), growth: peak.heap - before, retained };
}

const bytes = generateScd(ieds);
const mb = (bytes.length / 1e6).toFixed(1);
const baseline = await measure(bareSax, bytes);
const parse = await measure(fullParse, bytes);
const row = (name: string, r: typeof baseline) =>
  `| ${name} | ${r.ms.toFixed(0)} | ${r.mbps.toFixed(1)} | ${(r.mbps / baseline.mbps).toFixed(2)} | ${(r.growth / bytes.length).toFixed(2)} | ${(r.retained / bytes.length).toFixed(2)} |`;
console.log(
  [
    `### SCL parse, generated SCD of ${ieds} IEDs (${mb} MB), median of ${runs} runs, ${new Date().toISOString().slice(0, 10)}`,
    '',
    '| case | ms | MB/s | ratio to baseline | peak heap growth / file size | result kept / file size |',
    '|---|---:|---:|---:|---:|---:|',
    row('bare saxes pass, no model (baseline)', baseline),
    row('parseScl: model, templates, checks', parse),
  ].join('\n'),
);

// The same file uploaded through the gateway of an embedded platform, MAX_SCL_BYTES raised to fit it.
if (process.env.SCL_BENCH_UPLOAD !== '0') {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pino } = await import('pino');
  const { launch } = await import('../launch.ts');
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-scl-'));
  const proc = await launch(
    {
      DATA_DIR: dataDir,
      HTTP_PORT: '1',
      HTTPS_PORT: '0',
      ADMIN_PASSWORD: 'bench-admin-password',
      MAX_SCL_BYTES: String(bytes.length * 2),
      LOG_LEVEL: 'warn',
    },
    { log: pino({ level: 'warn' }), host: '127.0.0.1', ephemeralPorts: true },
  );
  try {
    const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'bench-admin-password' }),
    });
    const headers = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
    const project = await fetch(`${url}/api/projects`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', isActive: true }),
    });
    const projectId = ((await project.json()) as { id: string }).id;
    const form = new FormData();
    form.set('connection', JSON.stringify({ name: 'station', ip: '10.0.0.1', port: 102, projectId, protocol: 'IEC 61850' }));
    form.set('file', new Blob([bytes as BlobPart]), 'station.scd');
    const started = performance.now();
    const res = await fetch(`${url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers, body: form });
    const ms = performance.now() - started;
    await res.arrayBuffer();
    console.log(
      `\n| upload of the same ${mb} MB file through the gateway (multipart → 256 KiB chunks on the bus → parse → store) | ${res.status} | ${ms.toFixed(0)} ms |`,
    );
  } finally {
    await proc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
