/**
 * What a pod costs: for each service alone, the gateway alone and the all-in-one process, the time from
 * start until `/healthz` answers (the probe port `HEALTH_PORT` of a service, the HTTP port of the gateway
 * and of the all-in-one process), the CPU time the process spent until then (on a shared machine the
 * steadier of the two), and the resident memory after it has sat idle. The sources through tsx
 * (`node --import tsx main.ts` with `SERVICES` naming the part, as the images ran before) against the
 * bundle as the image runs it now (`node <the image's flags> dist/<target>/main.mjs`), in alternating
 * rounds of one run. Services and the gateway run on a NATS server and a PostgreSQL cluster of the
 * benchmark's own, their schemas already in place (a new replica, not a first install); the all-in-one on
 * its embedded defaults with its data folder in place (a restart).
 *
 * Resident memory is shown whole and as its anonymous part: the rest is mostly the Node binary's own
 * code, mapped from the file and shared by every process that runs the same binary.
 *
 * Then what a Node flag that trims memory would cost under load (`BENCH_CANDIDATE_FLAGS`, by default a
 * young generation smaller still than the image's; empty for none): auth, config and a gateway, as
 * bundles, run as the image runs them and with the candidate flags added, a read route through the
 * gateway, in alternating rounds. `BENCH_NODE` runs everything on another Node binary (the images run
 * Node 24).
 *
 * Then what an edge box runs (`footprint_edge.ts`): the all-in-one bundle's first start on a new data
 * folder (peak and idle resident memory, time and CPU to ready) and an idle edge site (its NATS server and
 * the protocol bundle with `SITE=`, as the site's unit runs it), each with the embedded store's WebAssembly
 * compiled as by default (`EMBEDDED_STORE_COMPILER=baseline`) and with `optimizing`, the store on the main
 * thread and on a worker (`EMBEDDED_STORE_THREAD`), and the CPU a fixed piece of the store's work costs
 * with each (`footprint_store_work.ts`), the defaults as the baseline. Goals: site ≤ 128 MiB
 * together; all-in-one ≤ 200 MiB idle, ≤ 300 MiB at its peak, ready ≤ 3 s on a quiet machine.
 * `BENCH_FOOTPRINT=edge` runs this part alone; `BENCH_EDGE_SEMI_SPACE` (say `4 8 16`) adds the all-in-one's first
 * start with each of those young generations (`--max-semi-space-size`, in MiB) in place of the image's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleCommand, ensureBuilt, repoRoot, type Target } from '../tools/build/build.ts';
import { adminToken } from '@scada/testkit/faults/load';
import { startNats, startPostgres } from '@scada/testkit/faults/servers';
import { freePort, load, waitReady, type LoadResult } from './harness.ts';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import { edgeFirstStart, edgeSite, storeWork, type EdgeSample } from './footprint_edge.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const idleMs = Number(process.env.BENCH_IDLE_MS ?? 5000);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const password = 'footprint-bench-admin-password';
const imageFlags = bundleCommand('edge').slice(0, -1);
const nodeBinary = process.env.BENCH_NODE ?? process.execPath;
const candidateFlags = (process.env.BENCH_CANDIDATE_FLAGS ?? '--max-semi-space-size=1').split(/\s+/).filter(Boolean);
const edgeOnly = process.env.BENCH_FOOTPRINT === 'edge';

type Variant = 'tsx' | 'bundle';
/** Thrown to leave out the services' part (`BENCH_FOOTPRINT=edge`). */
class Skip extends Error {}
type Sample = { readyMs: number; cpuMs: number; rssMiB: number; anonMiB: number };

/** A field of /proc/<pid>/smaps_rollup (resident memory, whole or anonymous), in MiB. */
function memoryMiB(pid: number, field: 'Rss' | 'Anonymous'): number {
  const line = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024;
}
const rssMiB = (pid: number) => memoryMiB(pid, 'Rss');

/** CPU time (user + system) a process has used so far, in ms, from /proc (USER_HZ 100). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Whether a URL answers 200 now (a bare request, so that polling costs the measured process little). */
function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on('error', () => resolve(false));
  });
}

/** Starts a process in the repository with exactly `env`, keeping the end of its stderr for a failure. */
function start(args: string[], env: Record<string, string>): { child: ChildProcess; stderr: () => string; stop(): Promise<void> } {
  const child = spawn(nodeBinary, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + String(d)).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts one process, times it to `/healthz`, lets it idle, reads its memory, stops it with SIGTERM. */
async function measure(variant: Variant, target: Target, env: Record<string, string>, probePort: number): Promise<Sample> {
  const started = performance.now();
  const proc = start(variant === 'tsx' ? ['--import', 'tsx', 'main.ts'] : bundleCommand(target), env);
  try {
    for (;;) {
      if (await answers(`http://127.0.0.1:${probePort}/healthz`)) break;
      if (proc.child.exitCode !== null) throw new Error(`${target} (${variant}) exited ${proc.child.exitCode}: ${proc.stderr()}`);
      if (performance.now() - started > 60_000) throw new Error(`${target} (${variant}) not up in 60 s: ${proc.stderr()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyMs = performance.now() - started;
    const cpu = cpuMs(proc.child.pid!);
    await new Promise((r) => setTimeout(r, idleMs));
    return { readyMs, cpuMs: cpu, rssMiB: rssMiB(proc.child.pid!), anonMiB: memoryMiB(proc.child.pid!, 'Anonymous') };
  } finally {
    await proc.stop();
  }
}

/** auth, config and a gateway as bundles with the given Node flags; a read route loaded through the gateway. */
async function underLoad(
  flags: string[],
  label: string,
  env: Record<string, string>,
  keys: Record<'auth' | 'config' | 'gateway', Record<string, string>>,
): Promise<LoadResult & { rss: string }> {
  const [authHealth, configHealth, http] = [await freePort(), await freePort(), await freePort()];
  // Each process with its own role's bus keys and what it runs, as the images start them.
  const procs = [
    start([...flags, bundleCommand('auth').at(-1)!], { ...env, ...keys.auth, SERVICES: 'auth', HEALTH_PORT: String(authHealth) }),
    start([...flags, bundleCommand('config').at(-1)!], { ...env, ...keys.config, SERVICES: 'config', HEALTH_PORT: String(configHealth) }),
    start([...flags, bundleCommand('gateway').at(-1)!], {
      ...env,
      ...keys.gateway,
      SERVICES: 'gateway',
      HTTP_PORT: String(http),
      HTTPS_PORT: '0',
    }),
  ];
  try {
    for (const url of [
      `http://127.0.0.1:${authHealth}/readyz`,
      `http://127.0.0.1:${configHealth}/readyz`,
      `http://127.0.0.1:${http}/healthz`,
    ])
      await waitReady(url);
    const headers = { authorization: `Bearer ${await adminToken(http, password)}`, 'content-type': 'application/json' };
    const created = await fetch(`http://127.0.0.1:${http}/api/projects`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `p${randomBytes(4).toString('hex')}`, isActive: true }),
    });
    const url = `http://127.0.0.1:${http}/api/projects/${((await created.json()) as { id: string }).id}`;
    await load('warm-up', url, { seconds: 1, headers });
    const result = await load(label, url, { seconds, headers });
    const rss = `${rssMiB(procs[2].child.pid!).toFixed(0)} / ${rssMiB(procs[1].child.pid!).toFixed(0)} MiB`;
    return { ...result, rss };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

const nodeVersion = (
  await new Promise<string>((resolve) => {
    const child = spawn(nodeBinary, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += String(d)));
    child.once('exit', () => resolve(out.trim()));
  })
).replace(/^v/, '');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await ensureBuilt();
const rows: { label: string; samples: Record<Variant, Sample[]> }[] = [];
const loaded: Record<'image' | 'candidate', (LoadResult & { rss: string })[]> = { image: [], candidate: [] };
type StoreWork = Awaited<ReturnType<typeof storeWork>>;
const edge: {
  label: string;
  env: Record<string, string>;
  first: EdgeSample[];
  site: { service: EdgeSample; natsMiB: number }[];
  work: StoreWork[];
  /** Node flags of the all-in-one alone: its first start is measured, the site and the store's work not. */
  flags?: string[];
}[] = [
  ["defaults (the all-in-one's store on a worker thread, the site's on the main thread)", {}],
  ['EMBEDDED_STORE_THREAD=main', { EMBEDDED_STORE_THREAD: 'main' }],
  ['EMBEDDED_STORE_THREAD=worker', { EMBEDDED_STORE_THREAD: 'worker' }],
  ['EMBEDDED_STORE_COMPILER=optimizing', { EMBEDDED_STORE_COMPILER: 'optimizing' }],
].map(([label, env]) => ({ label: label as string, env: env as Record<string, string>, first: [], site: [], work: [] }));
// `BENCH_EDGE_SEMI_SPACE` ("4 8"): the all-in-one's first start with each young generation too, the flag after the image's.
for (const mb of (process.env.BENCH_EDGE_SEMI_SPACE ?? '').split(/\s+/).filter(Boolean)) {
  const flags = [`--max-semi-space-size=${mb}`];
  edge.push({ label: `all-in-one with ${flags.join(' ')}`, env: {}, first: [], site: [], work: [], flags });
}
for (let round = 0; round < rounds; round++) {
  for (const e of round % 2 === 0 ? edge : [...edge].reverse()) {
    e.first.push(await edgeFirstStart(e.env, idleMs, e.flags));
    if (e.flags) continue;
    e.site.push(await edgeSite(e.env, idleMs));
    e.work.push(await storeWork(e.env));
  }
}
const nats = edgeOnly ? null : await startNats();
const postgres = edgeOnly ? null : await startPostgres();
const dataDir = await mkdtemp(join(tmpdir(), 'scada-footprint-'));
try {
  if (nats === null || postgres === null) throw new Skip();
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'production', ADMIN_PASSWORD: password };
  const busKeys = roleBusKeys({ gateway: ['gateway'], auth: ['auth'], config: ['config'], protocol: ['protocol'], history: ['history'] });
  const cluster = { ...base, NATS_URL: nats.url, DATABASE_URL: postgres.url, SECRETS_KEY: randomBytes(32).toString('base64') };
  const cases: { target: Target; label: string; env: Record<string, string>; port: number }[] = [];
  for (const service of ['auth', 'config', 'protocol', 'history'] as const) {
    const port = await freePort();
    cases.push({
      target: service,
      label: `${service} service`,
      port,
      env: { ...cluster, ...busKeys[service], SERVICES: service, HEALTH_PORT: String(port), DATA_DIR: join(dataDir, service) },
    });
  }
  const gatewayPort = await freePort();
  cases.push({
    target: 'gateway',
    label: 'gateway',
    port: gatewayPort,
    env: {
      ...cluster,
      ...busKeys.gateway,
      SERVICES: 'gateway',
      HTTP_PORT: String(gatewayPort),
      HTTPS_PORT: '0',
      DATA_DIR: join(dataDir, 'gateway'),
    },
  });
  const edgePort = await freePort();
  cases.push({
    target: 'edge',
    label: 'all-in-one (embedded)',
    port: edgePort,
    env: { ...base, HTTP_PORT: String(edgePort), HTTPS_PORT: String(await freePort()), DATA_DIR: join(dataDir, 'edge') },
  });

  // One start each first: the services create their schemas, the all-in-one its database and certificate.
  for (const c of cases) await measure('tsx', c.target, c.env, c.port);
  for (const c of cases) rows.push({ label: c.label, samples: { tsx: [], bundle: [] } });
  for (let round = 0; round < rounds; round++) {
    const order: Variant[] = round % 2 === 0 ? ['tsx', 'bundle'] : ['bundle', 'tsx'];
    for (const [i, c] of cases.entries()) {
      for (const variant of order) rows[i].samples[variant].push(await measure(variant, c.target, c.env, c.port));
    }
  }
  if (candidateFlags.length > 0) {
    const env = { ...cluster, DATA_DIR: join(dataDir, 'load'), LOG_LEVEL: 'warn' };
    const flags = { image: imageFlags, candidate: [...imageFlags, ...candidateFlags] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['image', 'candidate'] as const) : (['candidate', 'image'] as const);
      for (const which of order) {
        loaded[which].push(await underLoad(flags[which], flags[which].join(' ') || 'the image command (no flags)', env, busKeys));
      }
    }
  }
} catch (err) {
  if (!(err instanceof Skip)) throw err;
} finally {
  await nats?.remove();
  await postgres?.remove();
  await rm(dataDir, { recursive: true, force: true });
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const ratio = (a: number, b: number) => (a / b).toFixed(2);
const lines = [
  `Footprint, ${new Date().toISOString().slice(0, 10)}, Node ${nodeVersion}, median of ${rounds} alternating rounds, RSS after ${idleMs / 1000} s idle; bundles run as \`node ${[...imageFlags, 'main.mjs'].join(' ')}\``,
  '',
  ...(rows.length === 0
    ? []
    : [
        '| process | ready, tsx | ready, bundle | CPU to ready, tsx | CPU to ready, bundle | ratio | idle RSS (anonymous), tsx | idle RSS (anonymous), bundle | ratio |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ]),
];
for (const row of rows) {
  const m = (v: Variant, f: (x: Sample) => number) => median(row.samples[v].map(f));
  const cpu = { tsx: m('tsx', (x) => x.cpuMs), bundle: m('bundle', (x) => x.cpuMs) };
  const rss = { tsx: m('tsx', (x) => x.rssMiB), bundle: m('bundle', (x) => x.rssMiB) };
  const anon = { tsx: m('tsx', (x) => x.anonMiB), bundle: m('bundle', (x) => x.anonMiB) };
  lines.push(
    `| ${row.label} | ${s(m('tsx', (x) => x.readyMs))} | ${s(m('bundle', (x) => x.readyMs))} | ${s(cpu.tsx)} | ${s(cpu.bundle)} | ${ratio(cpu.bundle, cpu.tsx)} | ${rss.tsx.toFixed(0)} (${anon.tsx.toFixed(0)}) MiB | ${rss.bundle.toFixed(0)} (${anon.bundle.toFixed(0)}) MiB | ${ratio(rss.bundle, rss.tsx)} |`,
  );
}
if (loaded.image.length > 0) {
  const rps = (which: 'image' | 'candidate') => median(loaded[which].map((r) => r.rps));
  lines.push(
    '',
    `Node flags under load: GET /api/projects/{id} through a gateway to the config service, 32 connections, ${seconds} s per round (baseline: the image's command)`,
    '',
    '| flags | req/s | p99 ms | ratio to baseline | RSS after load, gateway / config |',
    '|---|---:|---:|---:|---:|',
  );
  for (const which of ['image', 'candidate'] as const) {
    const mid = loaded[which].find((r) => r.rps === rps(which))!;
    lines.push(`| ${mid.name} | ${mid.rps} | ${mid.p99} | ${ratio(mid.rps, rps('image'))} | ${mid.rss} |`);
  }
}
const mib = (x: number) => `${x.toFixed(0)} MiB`;
lines.push(
  '',
  `Edge box: median of ${rounds} rounds; the all-in-one bundle's first start on a new DATA_DIR, an idle edge site (site NATS + protocol bundle with SITE=, flags and environment of deploy/edge/scada-protocol-site.service) on a new one; CPU of the store's work (ingest, reads, keyed) as a ratio to the default`,
  '',
  '| setting | all-in-one: ready | CPU to ready | peak to ready | idle | peak | site: service idle (peak) | site NATS | site together | store work: ingest / reads / keyed |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
);
const workOf = (e: (typeof edge)[number], part: keyof StoreWork) => median(e.work.map((w) => w[part]));
for (const e of edge) {
  const work = (['ingestMs', 'readsMs', 'keyedMs'] as const).map((part) => ratio(workOf(e, part), workOf(edge[0], part))).join(' / ');
  const m = (f: (x: EdgeSample) => number) => median(e.first.map(f));
  const svc = median(e.site.map((x) => x.service.idleMiB));
  const svcPeak = median(e.site.map((x) => x.service.idlePeakMiB));
  const nat = median(e.site.map((x) => x.natsMiB));
  const first = `| ${e.label} | ${s(m((x) => x.readyMs))} | ${s(m((x) => x.cpuMs))} | ${mib(m((x) => x.peakMiB))} | ${mib(m((x) => x.idleMiB))} | ${mib(m((x) => x.idlePeakMiB))} |`;
  if (e.flags) lines.push(`${first} – | – | – | – |`);
  else
    lines.push(
      `${first} ${mib(svc)} (${mib(svcPeak)}) | ${mib(nat)} | ${mib(median(e.site.map((x) => x.service.idleMiB + x.natsMiB)))} | ${work} |`,
    );
}
console.log(lines.join('\n'));
