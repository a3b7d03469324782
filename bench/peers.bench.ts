/**
 * The platform beside what a user would pick instead: Moleculer (`moleculer` with `moleculer-web` as its API
 * gateway and its NATS transporter, two processes: `peers/moleculer_gateway.ts` and
 * `peers/moleculer_service.ts`) on the same NATS server, answering the same echo, the same 100-row list read
 * from the same PostgreSQL rows and the same create, in the same interleaved rounds as the platform and
 * the floor (bare Koa → NATS → bare responder). The platform runs as its images run it: the bundles of
 * `npm run build` (built first when missing or stale) with the Node flags of the image's command, `dist/gateway` in one process and the services in
 * another (`dist/edge` with `SERVICES=auth,config,protocol`), `LOG_LEVEL=info`; and embedded (`dist/edge`
 * alone, PGlite) for the gateway's own health check and echo. Needs NATS_URL and DATABASE_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsPlatformSettings, startBundle } from '@scada/testkit/bundles';
import { createDatabase } from '@scada/testkit/platform';
import { ensureBuilt } from '../tools/build/build.ts';
import {
  benchRounds,
  freePort,
  interleave,
  load,
  type LoadOptions,
  type LoadResult,
  processCpuMs,
  roundsTable,
  startProcess,
  stopProcess,
  waitReady,
} from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const natsUrl = process.env.NATS_URL;
const databaseUrl = process.env.DATABASE_URL;
const password = 'bench-peers-password';

function signIn(gateway: string): Promise<Response> {
  return fetch(`${gateway}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
}

const cpuOf = (children: ChildProcess[]) => () => children.reduce((sum, c) => sum + processCpuMs(c.pid ?? 0), 0);

type Case = { key: string; name: string; url: string; options: LoadOptions };

if (!natsUrl || !databaseUrl) {
  console.log('peers: needs NATS_URL and DATABASE_URL; skipped');
} else {
  const children: ChildProcess[] = [];
  const dataDirs: string[] = [];
  const database = await createDatabase(databaseUrl);
  const stopAll = async () => {
    for (const c of [...children].reverse()) await stopProcess(c);
    for (const d of dataDirs) await rm(d, { recursive: true, force: true });
    await database.drop();
  };
  try {
    await ensureBuilt();
    const started = (c: ChildProcess) => (children.push(c), c);
    const dataDir = async () => {
      const d = await mkdtemp(join(tmpdir(), 'scada-bench-peers-'));
      dataDirs.push(d);
      return d;
    };

    // The floor: bare Koa (health check), and bare Koa → NATS → bare responder (echo).
    const koaPort = await freePort();
    const koa = started(startProcess('bench/baseline_koa.ts', { PORT: String(koaPort) }));
    const floorPort = await freePort();
    const floorEnv = { NATS_URL: natsUrl, SUBJECT: `bench.peers.${randomBytes(4).toString('hex')}` };
    const responder = started(startProcess('bench/baseline_koa_nats.ts', { ...floorEnv, ROLE: 'responder' }));
    const floorKoa = started(startProcess('bench/baseline_koa_nats.ts', { ...floorEnv, PORT: String(floorPort) }));

    // The platform over NATS: the services in one process, the gateway in another; and a second gateway
    // with the read cache off (what a list costs on its way to the service and the store).
    const platform = natsPlatformSettings({ natsUrl, databaseUrl: database.url, password, prefix: 'peers' });
    const platformEnv = platform.env;
    const services = started(
      startBundle('edge', {
        ...platformEnv,
        ...platform.services,
        SERVICES: 'auth,config,protocol',
        HTTP_PORT: '0',
        DATA_DIR: await dataDir(),
      }),
    );
    const gwPort = await freePort();
    const gateway = started(
      startBundle('gateway', {
        ...platformEnv,
        ...platform.gateway,
        SERVICES: 'gateway',
        HTTP_PORT: String(gwPort),
        DATA_DIR: await dataDir(),
      }),
    );
    const uncachedPort = await freePort();
    const uncached = started(
      startBundle('gateway', {
        ...platformEnv,
        ...platform.gateway,
        SERVICES: 'gateway',
        HTTP_PORT: String(uncachedPort),
        DATA_DIR: await dataDir(),
        READ_CACHE_MAX_AGE_MS: '0',
      }),
    );
    // The platform embedded: every part in one process, PGlite, no NATS.
    const embeddedPort = await freePort();
    const embedded = started(
      startBundle('edge', {
        NATS_URL: undefined,
        DATABASE_URL: undefined,
        HTTP_PORT: String(embeddedPort),
        HTTPS_PORT: '0',
        LOG_LEVEL: 'info',
        DATA_DIR: await dataDir(),
      }),
    );

    // Moleculer: its gateway and its service, in a namespace of their own on the same NATS server.
    const molPort = await freePort();
    const molEnv = { NATS_URL: natsUrl, NAMESPACE: `peers-${randomBytes(4).toString('hex')}`, DATABASE_URL: database.url };
    const molService = started(startProcess('bench/peers/moleculer_service.ts', molEnv));
    const molGateway = started(startProcess('bench/peers/moleculer_gateway.ts', { ...molEnv, PORT: String(molPort) }));

    const koaUrl = `http://127.0.0.1:${koaPort}`;
    const floorUrl = `http://127.0.0.1:${floorPort}`;
    const gw = `http://127.0.0.1:${gwPort}`;
    const gwUncached = `http://127.0.0.1:${uncachedPort}`;
    const emb = `http://127.0.0.1:${embeddedPort}`;
    const mol = `http://127.0.0.1:${molPort}`;
    for (const url of [`${koaUrl}/healthz`, `${floorUrl}/api/echo?text=hi`, `${gw}/readyz`, `${gwUncached}/readyz`, `${emb}/readyz`])
      await waitReady(url);
    await waitReady(`${mol}/api/echo?text=hi`);

    // The same rows for both: 100 projects and a board group, made through the platform.
    // Ready is not yet signed in to: the gateway answers 503 until it has heard the IP filter's settings.
    let login = await signIn(gw);
    for (let tries = 0; login.status === 503 && tries < 60; tries++) {
      await new Promise((r) => setTimeout(r, 500));
      login = await signIn(gw);
    }
    if (!login.ok) throw new Error(`signing in: ${login.status} ${await login.text()}`);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
    for (let i = 0; i < 100; i++) {
      const create = () =>
        fetch(`${gw}/api/projects`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: `project-${String(i).padStart(3, '0')}`, isActive: true }),
        });
      let r = await create();
      // The gateway is ready before every service behind it is: the first create may find the config
      // service not yet answering (503 with Retry-After), and is asked again, for at most 30 s.
      for (let tries = 0; r.status === 503 && tries < 60; tries++) {
        await r.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 500));
        r = await create();
      }
      if (!r.ok) throw new Error(`creating a project: ${r.status} ${await r.text()}`);
    }
    const group = (await (
      await fetch(`${gw}/api/dashboard`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-group' }) })
    ).json()) as { id: string };
    const platformList = (await (await fetch(`${gw}/api/projects`, { headers })).json()) as unknown[];
    const molList = (await (await fetch(`${mol}/api/projects`)).json()) as unknown[];
    if (platformList.length !== 100 || JSON.stringify(molList) !== JSON.stringify(platformList))
      throw new Error(`the two lists differ: ${platformList.length} and ${molList.length} rows`);

    const board = (name: string) => JSON.stringify({ name, type: 'Html', header: true, x: 0, y: 0, width: 4, height: 3 });
    const platformCpu = cpuOf([gateway, services]);
    const uncachedCpu = cpuOf([uncached, services]);
    const molCpu = cpuOf([molGateway, molService]);
    const post = (prefix: string, h: Record<string, string>) => ({ method: 'POST' as const, body: board(`${prefix}-[<id>]`), headers: h });
    const json = { 'content-type': 'application/json' };
    const cases: Case[] = [
      { key: 'koa', name: 'bare Koa GET /healthz (baseline)', url: `${koaUrl}/healthz`, options: { cpu: cpuOf([koa]) } },
      { key: 'embHealth', name: 'platform embedded: GET /healthz', url: `${emb}/healthz`, options: { cpu: cpuOf([embedded]) } },
      { key: 'embEcho', name: 'platform embedded: GET /api/echo', url: `${emb}/api/echo?text=hi`, options: { cpu: cpuOf([embedded]) } },
      {
        key: 'floorEcho',
        name: 'floor: bare Koa → NATS → bare responder, echo',
        url: `${floorUrl}/api/echo?text=hi`,
        options: { cpu: cpuOf([floorKoa, responder]) },
      },
      { key: 'molEcho', name: 'Moleculer: GET /api/echo', url: `${mol}/api/echo?text=hi`, options: { cpu: molCpu } },
      { key: 'natsEcho', name: 'platform NATS: GET /api/echo', url: `${gw}/api/echo?text=hi`, options: { cpu: platformCpu } },
      { key: 'natsHealth', name: 'platform NATS: gateway GET /healthz', url: `${gw}/healthz`, options: { cpu: platformCpu } },
      { key: 'molList', name: 'Moleculer: GET /api/projects (100 rows)', url: `${mol}/api/projects`, options: { cpu: molCpu } },
      {
        key: 'natsList',
        name: 'platform NATS: GET /api/projects (100 rows), read cache',
        url: `${gw}/api/projects`,
        options: { headers, cpu: platformCpu },
      },
      {
        key: 'natsListUncached',
        name: 'platform NATS: GET /api/projects (100 rows), no read cache',
        url: `${gwUncached}/api/projects`,
        options: { headers, cpu: uncachedCpu },
      },
      {
        key: 'molCreate',
        name: 'Moleculer: POST …/boards (create)',
        url: `${mol}/api/dashboard/${group.id}/boards`,
        options: { ...post('mol', json), cpu: molCpu },
      },
      {
        key: 'natsCreate',
        name: 'platform NATS: POST …/boards (createBoard)',
        url: `${gw}/api/dashboard/${group.id}/boards`,
        options: { ...post('gw', headers), cpu: platformCpu },
      },
    ];
    // BENCH_CASES=natsCreate,molCreate measures only those (and the baseline, which every table needs).
    const only = process.env.BENCH_CASES?.split(',').map((k) => k.trim());
    if (only) cases.splice(0, cases.length, ...cases.filter((c, i) => i === 0 || only.includes(c.key)));
    for (const c of cases) await load('warm-up', c.url, { ...c.options, seconds: 1, cpu: undefined });
    const results = await interleave(
      benchRounds,
      cases.map((c) => () => load(c.name, c.url, { ...c.options, seconds })),
    );
    const byKey = Object.fromEntries(cases.map((c, i) => [c.key, results[i]!])) as Record<string, LoadResult[]>;
    for (const runs of results) {
      const failed = runs.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
      if (failed > 0) console.error(`${runs[0]?.name}: ${failed} failed requests`);
    }
    const title = `${benchRounds} interleaved rounds of ${seconds} s per case, 32 connections, ${new Date().toISOString().slice(0, 10)}`;
    const [baseline, ...rows] = results;
    console.log(roundsTable(`The platform, Moleculer and the floor: ${title}`, baseline!, rows));
    console.log(
      ratioTable(`Ratios, each to its reference in the same round: ${title}`, byKey, [
        ['natsEcho', 'molEcho', 'echo over NATS, platform / Moleculer', '≥ 1.0 (1.5)'],
        ['floorEcho', 'molEcho', 'echo over NATS, floor / Moleculer', ''],
        ['natsEcho', 'floorEcho', 'echo over NATS, platform / floor', ''],
        ['natsList', 'molList', 'list of 100, platform (read cache) / Moleculer', '≥ 1.2'],
        ['natsListUncached', 'molList', 'list of 100, platform (no read cache) / Moleculer', '≥ 1.2'],
        ['natsCreate', 'molCreate', 'create, platform / Moleculer', '≥ 1.0'],
        ['natsHealth', 'koa', 'gateway /healthz over NATS / bare Koa', '≥ 0.6'],
        ['embHealth', 'koa', 'gateway /healthz embedded / bare Koa', '≥ 0.6'],
        ['embEcho', 'koa', 'echo embedded / bare Koa', '≥ 0.5'],
      ]),
    );
  } finally {
    await stopAll();
  }
}

/** Per pair, the median over rounds of the ratio of one case's throughput to another's in the same round. */
function ratioTable(title: string, runs: Record<string, LoadResult[]>, pairs: [string, string, string, string][]): string {
  const median = (v: number[]) => {
    const s = [...v].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const lines = [`### ${title}`, '', '| ratio | median | range over rounds | goal |', '|---|---:|---:|---:|'];
  for (const [a, b, label, goal] of pairs) {
    if (!runs[a] || !runs[b]) continue;
    const ratios = runs[a]!.map((r, i) => r.rps / runs[b]![i]!.rps);
    lines.push(
      `| ${label} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} | ${goal} |`,
    );
  }
  return lines.join('\n');
}
