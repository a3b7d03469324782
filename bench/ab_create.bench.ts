/**
 * Two builds of the platform side by side with Moleculer, on the create (`POST …/boards`): the question a
 * change to the create's cost asks, answered in the same rounds, so that the machine's drift from minute to
 * minute (which moved a create's CPU ratio to Moleculer between 1.12 and 1.31 over five runs of `peers` on
 * one quiet machine) falls on every side alike.
 *
 * Side A runs the bundles of `AB_DIST_A`, side B those of `AB_DIST_B` (this checkout's `dist` by default,
 * built when missing or stale). A `dist` of another commit must sit inside this checkout, where its bundles
 * find the packages they import: `npm run build` at that commit, then copy its `dist` to `.dist-base` here.
 * Both sides run with this checkout's image flags. `AB_ENV_A` and `AB_ENV_B` (JSON objects) add environment
 * variables to one side's processes; `AB_CONTROL=1` runs the same bundles on both sides, whose B/A ratios
 * show the noise a real change must stand out from. Without any of these the bench is skipped (a full
 * `npm run bench` would otherwise spend minutes on a control).
 *
 * Each side is as `peers.bench.ts` runs the platform (gateway and services in two processes, its own
 * database, subject prefix and bus keys, `LOG_LEVEL=info`). Moleculer's two processes write into side A's
 * database, in a board group of their own: PostgreSQL's CPU is not counted, and the rows already in a table
 * change an insert's cost by their logarithm. `BENCH_ROUNDS` rounds (12 by default) of `BENCH_SECONDS`
 * seconds (3) per side, taking the six orders of the three sides in turn; 32 connections. The table gives
 * each side's medians (rate, CPU a create, its gateway's and its services' apart) and the ratios of the
 * rounds taken side by side. A round with a failed request stops the bench. Needs NATS_URL and DATABASE_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsPlatformSettings, startBundle } from '@scada/testkit/bundles';
import { createDatabase } from '@scada/testkit/platform';
import { bundleFile, ensureBuilt, repoRoot } from '../tools/build/build.ts';
import { benchRounds, freePort, load, median, processCpuMs, startProcess, stopProcess, waitReady } from './harness.ts';

const natsUrl = process.env.NATS_URL;
const databaseUrl = process.env.DATABASE_URL;
const rounds = process.env.BENCH_ROUNDS ? benchRounds : 12;
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = 32;
const password = 'bench-ab-password';
/** After a round, before its CPU is read: what a side does after its last answer (a log block, a put's acknowledgement) is its round's. */
const settleMs = 300;

/** One side: where it creates, and the CPU its gateway and its services have used. */
type Side = { name: string; url: string; headers: Record<string, string>; cpu: () => [gateway: number, services: number] };
type Round = { rps: number; gateway: number; services: number };

function envOf(name: string): Record<string, string> {
  const text = process.env[name];
  if (!text) return {};
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string'))
    throw new Error(`${name} must be a JSON object of strings`);
  return parsed as Record<string, string>;
}

function checkedDist(dist: string, name: string): string {
  for (const target of ['edge', 'gateway'])
    if (!existsSync(join(dist, target, bundleFile))) throw new Error(`${name}: ${dist} holds no ${target}/${bundleFile}`);
  if (!dist.startsWith(`${repoRoot}/`))
    throw new Error(`${name}: ${dist} must be inside ${repoRoot}, where its bundles find their packages`);
  return dist;
}

/** Asks again while the answer is 503 (the platform is up before its services answer), for at most 30 s. */
async function until(what: string, ask: () => Promise<Response>): Promise<Response> {
  let r = await ask();
  for (let tries = 0; r.status === 503 && tries < 60; tries++) {
    await r.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 500));
    r = await ask();
  }
  if (!r.ok) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return r;
}

/** Signs in as the administrator; answers the headers of a request in the default space and a new board group's id. */
async function signedIn(url: string): Promise<{ headers: Record<string, string>; group: () => Promise<string> }> {
  const login = await until('signing in', () =>
    fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    }),
  );
  const { access_token: token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
  let groups = 0;
  const group = async () => {
    const body = JSON.stringify({ name: `bench-group-${++groups}` });
    const made = await until('making a board group', () => fetch(`${url}/api/dashboard`, { method: 'POST', headers, body }));
    return ((await made.json()) as { id: string }).id;
  };
  return { headers, group };
}

/** A round's rate and CPU a create; throws when a request failed or none was answered. */
async function measured(side: Side, round: number): Promise<Round> {
  const body = JSON.stringify({ name: `${side.name}-${round}-[<id>]`, type: 'Html', header: true, x: 0, y: 0, width: 4, height: 3 });
  const [gw0, svc0] = side.cpu();
  const out = await load(side.name, side.url, { method: 'POST', body, headers: side.headers, seconds, connections });
  await new Promise((r) => setTimeout(r, settleMs));
  const [gw1, svc1] = side.cpu();
  const n = out.total ?? 0;
  if (out.errors + out.non2xx > 0 || n === 0)
    throw new Error(`${side.name}, round ${round}: ${out.errors + out.non2xx} failed requests of ${n + out.errors + out.non2xx}`);
  return { rps: out.rps, gateway: (gw1 - gw0) / n, services: (svc1 - svc0) / n };
}

/** The six orders of three sides, taken in turn: each side comes first, second and last, after each other side, alike. */
function orderOf<T>(sides: [T, T, T], round: number): T[] {
  const [a, b, c] = sides;
  return [
    [a, b, c],
    [b, c, a],
    [c, a, b],
    [c, b, a],
    [a, c, b],
    [b, a, c],
  ][round % 6]!;
}

function report(sides: Side[], results: Map<string, Round[]>, distA: string, distB: string): string {
  const of = (name: string) => results.get(name)!;
  const total = (x: Round) => x.gateway + x.services;
  const envNote = (name: string) => (process.env[name] ? ` with ${process.env[name]}` : '');
  const lines = [
    `### The create, two builds side by side with Moleculer: ${rounds} rounds of ${seconds} s, ${connections} connections, ${new Date().toISOString().slice(0, 10)}`,
    '',
    `A: ${distA}${envNote('AB_ENV_A')}; B: ${distB}${envNote('AB_ENV_B')}`,
    '',
    '| side | creates/s | CPU ms a create | gateway | services |',
    '|---|---:|---:|---:|---:|',
    ...sides.map((s) => {
      const v = of(s.name);
      const cell = (f: (r: Round) => number) => median(v.map(f)).toFixed(3);
      return `| ${s.name} | ${median(v.map((x) => x.rps)).toFixed(0)} | ${cell(total)} | ${cell((x) => x.gateway)} | ${cell((x) => x.services)} |`;
    }),
    '',
    '| ratio, rounds side by side | median | range | below 1 in |',
    '|---|---:|---:|---:|',
  ];
  const ratio = (label: string, x: string, y: string, f: (r: Round) => number) => {
    const v = of(x).map((r, i) => f(r) / f(of(y)[i]!));
    const range = `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}`;
    lines.push(`| ${label} | ${median(v).toFixed(3)} | ${range} | ${v.filter((q) => q < 1).length} of ${v.length} |`);
  };
  ratio('CPU a create, B / A', 'B', 'A', total);
  ratio('… the gateway, B / A', 'B', 'A', (r) => r.gateway);
  ratio('… the services, B / A', 'B', 'A', (r) => r.services);
  ratio('CPU a create, A / Moleculer', 'A', 'Moleculer', total);
  ratio('CPU a create, B / Moleculer', 'B', 'Moleculer', total);
  ratio('creates/s, A / Moleculer', 'A', 'Moleculer', (r) => r.rps);
  ratio('creates/s, B / Moleculer', 'B', 'Moleculer', (r) => r.rps);
  return lines.join('\n');
}

const asked = ['AB_DIST_A', 'AB_ENV_A', 'AB_ENV_B', 'AB_CONTROL'].some((name) => process.env[name]);
if (!natsUrl || !databaseUrl) {
  console.log('ab_create: needs NATS_URL and DATABASE_URL; skipped');
} else if (!asked) {
  console.log('ab_create: set AB_DIST_A (and AB_DIST_B), AB_ENV_A or AB_ENV_B to compare two sides, or AB_CONTROL=1; skipped');
} else {
  const children: ChildProcess[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  const started = (c: ChildProcess) => (children.push(c), c);
  const dataDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'scada-bench-ab-'));
    cleanup.push(() => rm(d, { recursive: true, force: true }));
    return d;
  };

  /** A platform of the given bundles, up and signed in to, with its database. */
  const platform = async (name: string, dist: string, extra: Record<string, string>) => {
    const database = await createDatabase(databaseUrl);
    cleanup.push(() => database.drop());
    const settings = natsPlatformSettings({ natsUrl, databaseUrl: database.url, password, prefix: 'ab' });
    const env = { ...settings.env, ...extra };
    const servicesEnv = { ...env, ...settings.services, SERVICES: 'auth,config,protocol', HTTP_PORT: '0', DATA_DIR: await dataDir() };
    const services = started(startBundle('edge', servicesEnv, dist));
    const port = await freePort();
    const gatewayEnv = { ...env, ...settings.gateway, SERVICES: 'gateway', HTTP_PORT: String(port), DATA_DIR: await dataDir() };
    const gateway = started(startBundle('gateway', gatewayEnv, dist));
    const url = `http://127.0.0.1:${port}`;
    await waitReady(`${url}/readyz`);
    const { headers, group } = await signedIn(url);
    const side: Side = {
      name,
      url: `${url}/api/dashboard/${await group()}/boards`,
      headers,
      cpu: () => [processCpuMs(gateway.pid ?? 0), processCpuMs(services.pid ?? 0)],
    };
    return { side, database, group };
  };

  try {
    const distB = process.env.AB_DIST_B ?? join(repoRoot, 'dist');
    if (!process.env.AB_DIST_B) await ensureBuilt(distB);
    const distA = process.env.AB_DIST_A ?? distB;
    const a = await platform('A', checkedDist(distA, 'AB_DIST_A'), envOf('AB_ENV_A'));
    const b = await platform('B', checkedDist(distB, 'AB_DIST_B'), envOf('AB_ENV_B'));
    const molPort = await freePort();
    const molEnv = { NATS_URL: natsUrl, NAMESPACE: `ab-${Date.now().toString(36)}`, DATABASE_URL: a.database.url };
    const molService = started(startProcess('bench/peers/moleculer_service.ts', molEnv));
    const molGateway = started(startProcess('bench/peers/moleculer_gateway.ts', { ...molEnv, PORT: String(molPort) }));
    const mol = `http://127.0.0.1:${molPort}`;
    await waitReady(`${mol}/api/echo?text=hi`);
    const moleculer: Side = {
      name: 'Moleculer',
      url: `${mol}/api/dashboard/${await a.group()}/boards`,
      headers: { 'content-type': 'application/json' },
      cpu: () => [processCpuMs(molGateway.pid ?? 0), processCpuMs(molService.pid ?? 0)],
    };
    const sides: [Side, Side, Side] = [moleculer, a.side, b.side];
    for (const s of sides)
      await load('warm-up', s.url, {
        method: 'POST',
        body: JSON.stringify({ name: `${s.name}-warm-[<id>]`, type: 'Html', header: true, x: 0, y: 0, width: 4, height: 3 }),
        headers: s.headers,
        seconds: 1,
        connections,
      });
    const results = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) for (const s of orderOf(sides, r)) results.get(s.name)!.push(await measured(s, r + 1));
    console.log(report(sides, results, distA, distB));
  } finally {
    for (const c of [...children].reverse()) await stopProcess(c);
    for (const step of cleanup.reverse()) await step().catch((err: unknown) => console.error(`ab_create: cleaning up: ${String(err)}`));
  }
}
