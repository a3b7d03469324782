/**
 * Two builds of the platform side by side with Moleculer, on the create (`POST …/boards`): the question a
 * change to the create's cost asks, answered in the same rounds, so that the machine's drift from minute to
 * minute (which moves a create's CPU by 5–30 % between runs of `peers`) falls on both sides alike.
 *
 * Side A runs the bundles of `AB_DIST_A` (a `dist` built from the commit before a change: `npm run build`
 * there, then copy its `dist`), side B those of `AB_DIST_B` (`dist` of this checkout by default, built when
 * missing). Without `AB_DIST_A` both sides run the same bundles: a control, whose B/A ratios show the noise a
 * real change must stand out from. `AB_ENV_A` and `AB_ENV_B` (JSON objects) add environment variables to
 * one side's processes. Each side is as `peers.bench.ts` runs the platform (gateway and services in two
 * processes, the image's Node flags, its own database, subject prefix and bus keys, `LOG_LEVEL=info`);
 * Moleculer's two processes write into side A's database. `BENCH_ROUNDS` rounds (12 by default) of
 * `BENCH_SECONDS` seconds (3) per side, the order rotated each round; 32 connections. The table gives the
 * medians of each side's rate and CPU a create (the gateway's and the services' apart), and the ratios of the
 * rounds taken side by side. Needs NATS_URL and DATABASE_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@scada/testkit/platform';
import { ensureBuilt } from '../tools/build/build.ts';
import { natsPlatformSettings, startBundle } from './bundles.ts';
import { freePort, load, processCpuMs, startProcess, stopProcess, waitReady } from './harness.ts';

const natsUrl = process.env.NATS_URL;
const databaseUrl = process.env.DATABASE_URL;
const root = new URL('..', import.meta.url).pathname;
const rounds = positive(process.env.BENCH_ROUNDS, 12);
const seconds = positive(process.env.BENCH_SECONDS, 3);
const password = 'bench-ab-password';

function positive(text: string | undefined, fallback: number): number {
  const n = Number(text ?? fallback);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

function envOf(name: string): Record<string, string> {
  const text = process.env[name];
  if (!text) return {};
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string'))
    throw new Error(`${name} must be a JSON object of strings`);
  return parsed as Record<string, string>;
}

/** One side's processes: what it answers on, and the CPU its gateway and its services have used. */
type Side = { name: string; url: string; headers: Record<string, string>; cpu: () => [gateway: number, services: number] };
type Round = { rps: number; gateway: number; services: number };

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

if (!natsUrl || !databaseUrl) {
  console.log('ab_create: needs NATS_URL and DATABASE_URL; skipped');
} else {
  const children: ChildProcess[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  const started = (c: ChildProcess) => (children.push(c), c);
  const dataDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'scada-bench-ab-'));
    cleanup.push(() => rm(d, { recursive: true, force: true }));
    return d;
  };
  /** A platform of the given bundles, signed in to, with a board group to create into. */
  const platform = async (name: string, dist: string, extra: Record<string, string>) => {
    const database = await createDatabase(databaseUrl);
    cleanup.push(() => database.drop());
    const settings = natsPlatformSettings({ natsUrl, databaseUrl: database.url, password, prefix: 'ab' });
    const env = { ...settings.env, ...extra };
    const services = started(
      startBundle(
        'edge',
        {
          ...env,
          ...settings.services,
          SERVICES: 'auth,config,protocol',
          HTTP_PORT: '0',
          DATA_DIR: await dataDir(),
        },
        dist,
      ),
    );
    const port = await freePort();
    const gateway = started(
      startBundle(
        'gateway',
        {
          ...env,
          ...settings.gateway,
          SERVICES: 'gateway',
          HTTP_PORT: String(port),
          DATA_DIR: await dataDir(),
        },
        dist,
      ),
    );
    const url = `http://127.0.0.1:${port}`;
    await waitReady(`${url}/readyz`);
    // Ready is not yet signed in to, and the config service may not answer yet: both are asked again for 30 s.
    const until = async (ask: () => Promise<Response>) => {
      let r = await ask();
      for (let tries = 0; r.status === 503 && tries < 60; tries++) {
        await r.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 500));
        r = await ask();
      }
      if (!r.ok) throw new Error(`${name}: ${r.status} ${await r.text()}`);
      return r;
    };
    const login = await until(() =>
      fetch(`${url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      }),
    );
    const { access_token: token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
    const group = (await (
      await until(() => fetch(`${url}/api/dashboard`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-group' }) }))
    ).json()) as { id: string };
    const side: Side = {
      name,
      url: `${url}/api/dashboard/${group.id}/boards`,
      headers,
      cpu: () => [processCpuMs(gateway.pid ?? 0), processCpuMs(services.pid ?? 0)],
    };
    return { side, database, group: group.id };
  };

  try {
    const distB = process.env.AB_DIST_B ?? join(root, 'dist');
    await ensureBuilt(distB);
    const distA = process.env.AB_DIST_A ?? distB;
    const a = await platform('A', distA, envOf('AB_ENV_A'));
    const b = await platform('B', distB, envOf('AB_ENV_B'));
    const molPort = await freePort();
    const molEnv = { NATS_URL: natsUrl, NAMESPACE: `ab-${randomBytes(4).toString('hex')}`, DATABASE_URL: a.database.url };
    const molService = started(startProcess('bench/peers/moleculer_service.ts', molEnv));
    const molGateway = started(startProcess('bench/peers/moleculer_gateway.ts', { ...molEnv, PORT: String(molPort) }));
    const mol = `http://127.0.0.1:${molPort}`;
    await waitReady(`${mol}/api/echo?text=hi`);
    const sides: Side[] = [
      {
        name: 'Moleculer',
        url: `${mol}/api/dashboard/${a.group}/boards`,
        headers: { 'content-type': 'application/json' },
        cpu: () => [processCpuMs(molGateway.pid ?? 0), processCpuMs(molService.pid ?? 0)],
      },
      a.side,
      b.side,
    ];
    const board = (name: string) => JSON.stringify({ name, type: 'Html', header: true, x: 0, y: 0, width: 4, height: 3 });
    const create = (s: Side, tag: string, secs: number) =>
      load(s.name, s.url, { method: 'POST', body: board(`${s.name}-${tag}-[<id>]`), headers: s.headers, seconds: secs });
    for (const s of sides) await create(s, 'warm', 1);
    const results = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) {
      const order = [...sides.slice(r % sides.length), ...sides.slice(0, r % sides.length)];
      for (const s of order) {
        const [gw0, svc0] = s.cpu();
        const out = await create(s, String(r), seconds);
        const [gw1, svc1] = s.cpu();
        const failed = out.errors + out.non2xx;
        if (failed > 0) console.error(`${s.name}: ${failed} failed requests in round ${r + 1}`);
        const n = out.rps * seconds;
        results.get(s.name)!.push({ rps: out.rps, gateway: (gw1 - gw0) / n, services: (svc1 - svc0) / n });
      }
    }
    const of = (name: string) => results.get(name)!;
    const total = (x: Round) => x.gateway + x.services;
    const lines = [
      `### The create, two builds side by side with Moleculer: ${rounds} rotated rounds of ${seconds} s, 32 connections, ${new Date().toISOString().slice(0, 10)}`,
      '',
      `A: ${process.env.AB_DIST_A ? distA : `${distB} (a control: the same bundles as B)`}${process.env.AB_ENV_A ? ` with ${process.env.AB_ENV_A}` : ''}; B: ${distB}${process.env.AB_ENV_B ? ` with ${process.env.AB_ENV_B}` : ''}`,
      '',
      '| side | creates/s | CPU ms a create | gateway | services |',
      '|---|---:|---:|---:|---:|',
      ...sides.map((s) => {
        const v = of(s.name);
        return `| ${s.name} | ${median(v.map((x) => x.rps)).toFixed(0)} | ${median(v.map(total)).toFixed(3)} | ${median(v.map((x) => x.gateway)).toFixed(3)} | ${median(v.map((x) => x.services)).toFixed(3)} |`;
      }),
      '',
      '| ratio, rounds side by side | median | range | below 1 in |',
      '|---|---:|---:|---:|',
    ];
    const ratio = (label: string, x: string, y: string, f: (r: Round) => number) => {
      const v = of(x).map((r, i) => f(r) / f(of(y)[i]!));
      lines.push(
        `| ${label} | ${median(v).toFixed(3)} | ${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)} | ${v.filter((q) => q < 1).length} of ${v.length} |`,
      );
    };
    ratio('CPU a create, B / A', 'B', 'A', total);
    ratio('… the gateway, B / A', 'B', 'A', (r) => r.gateway);
    ratio('… the services, B / A', 'B', 'A', (r) => r.services);
    ratio('CPU a create, A / Moleculer', 'A', 'Moleculer', total);
    ratio('CPU a create, B / Moleculer', 'B', 'Moleculer', total);
    ratio('creates/s, A / Moleculer', 'A', 'Moleculer', (r) => r.rps);
    ratio('creates/s, B / Moleculer', 'B', 'Moleculer', (r) => r.rps);
    console.log(lines.join('\n'));
  } finally {
    for (const c of [...children].reverse()) await stopProcess(c);
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}
