/**
 * Configuration reads and writes through the platform against the same store work served by a bare Koa
 * handler in one process (the monolith baseline): `GET /api/projects` with 100 projects, `createBoard`,
 * and a mix of 90 % of those lists and 10 % project updates. The platform's reads both through a gateway
 * with its read cache and through a second one with the cache off (what a read costs on its way to the
 * service). Embedded mode always; NATS mode (gateway → NATS → config service → PostgreSQL) when NATS_URL
 * and DATABASE_URL are set, with the floor of any platform over NATS beside it (bare Koa → NATS → a bare
 * responder doing the same store work). Cases run in interleaved rounds (`BENCH_ROUNDS`); the tables give
 * medians and each case's ratio to the baseline of the same round.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import Koa from 'koa';
import { pino } from 'pino';
import { boards, projects } from '@scada/config/tables';
import { busAuthView, startGateway } from '@scada/gateway';
import { launch } from '../launch.ts';
import type { Store } from '@scada/platform';
import { createDatabase } from '@scada/testkit/platform';
import { benchRounds, interleave, load, mainThreadCpuMs, roundsTable, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const password = 'bench-admin-password';
/** The platform and the baseline both run on this process's main thread; the load runs on a worker. */
const cpu = mainThreadCpuMs;
const board = (name: string) => JSON.stringify({ name, type: 'Html', header: true, x: 0, y: 0, width: 4, height: 3 });

async function measure(mode: 'embedded' | 'NATS'): Promise<Record<string, LoadResult[]>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-config-'));
  const database = mode === 'NATS' ? await createDatabase(process.env.DATABASE_URL as string) : null;
  const env: Record<string, string> = { DATA_DIR: dataDir, HTTP_PORT: '1', HTTPS_PORT: '0', ADMIN_PASSWORD: password, LOG_LEVEL: 'warn' };
  if (database)
    Object.assign(env, {
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      NATS_URL: process.env.NATS_URL as string,
      BUS_SUBJECT_PREFIX: `b${Date.now()}`,
    });
  const proc = await launch(env, { log: pino({ level: 'warn' }), host: '127.0.0.1', ephemeralPorts: true }).catch(async (err: unknown) => {
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
  const store = proc.store!;
  const server = http.createServer();
  try {
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
    for (let i = 0; i < 100; i++) {
      await fetch(`${url}/api/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `project-${String(i).padStart(3, '0')}`, isActive: true }),
      });
    }
    const group = (await (
      await fetch(`${url}/api/dashboard`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-group' }) })
    ).json()) as { id: string };
    const listed = (await (await fetch(`${url}/api/projects`, { headers })).json()) as { id: string; name: string }[];
    const updated = listed[0]!;
    const update = JSON.stringify({ name: updated.name, isActive: true });
    /** Nine lists, then one update of a project: each connection sends these in turn. */
    const mix = (listPath: string, updatePath: string, h: Record<string, string>) => [
      ...Array.from({ length: 9 }, () => ({ method: 'GET' as const, path: listPath, headers: h })),
      { method: 'PUT' as const, path: updatePath, headers: h, body: update },
    ];

    // The monolith: the same table functions on the same store, behind a bare Koa app.
    const app = new Koa();
    app.use(async (ctx) => {
      if (ctx.method === 'GET') {
        ctx.body = await projects.list(store, 'default');
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      if (ctx.method === 'PUT') {
        await projects.update(store, 'default', updated.id, body, { actor: 'admin', at: new Date() });
        ctx.status = 204;
        return;
      }
      ctx.body = await boards.insert(store, 'default', randomUUID(), body, { actor: 'admin', at: new Date() }, group.id);
    });
    server.on('request', app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const bare = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const floor = mode === 'NATS' ? await startFloor(store, group.id) : null;

    await load('warm-up', `${bare}/projects`, { seconds: 1 });
    await load('warm-up', `${url}/api/projects`, { seconds: 1, headers });
    if (floor) await load('warm-up', `${floor.url}/projects`, { seconds: 1 });
    // The same platform behind a second gateway without the read cache: what every read costs on its way to
    // the service. Running only for its own two cases, which each round takes one after the other (started
    // before the first, stopped after the second): its subscriptions (events, presence) would be charged
    // to the others.
    let uncached: Awaited<ReturnType<typeof startGateway>> | undefined;
    let uncachedRuns = 0;
    const direct = () => `http://127.0.0.1:${uncached?.httpPort}`;
    const startUncached = async () => {
      if (uncached) return;
      uncached = await startGateway({
        bus: proc.bus,
        log: proc.log,
        config: { ...proc.config.gateway!, httpsPort: 0, readCache: { maxAgeMs: 0, maxChars: 0 } },
        dataDir,
        busTimeoutMs: 5000,
        shutdownGraceMs: 1000,
        host: '127.0.0.1',
        ephemeralPorts: true,
        auth: busAuthView({ bus: proc.bus, log: proc.log, timeoutMs: 5000 }),
      });
      // Its first requests verify the token and fill its caches: not measured.
      await load('warm-up', `${direct()}/api/projects`, { seconds: 0.5, headers });
    };
    /** Runs one of the uncached gateway's cases: started for the first of the two, stopped after the second. */
    const onUncached = async (run: () => Promise<LoadResult>): Promise<LoadResult> => {
      await startUncached();
      try {
        return await run();
      } finally {
        if (++uncachedRuns % 2 === 0) {
          await uncached?.stop();
          uncached = undefined;
        }
      }
    };
    const createBody = { method: 'POST' as const, body: board('[<id>]'), headers: { 'content-type': 'application/json' } };
    const cases: Record<string, () => Promise<LoadResult>> = {
      listBaseline: () => load(`${mode}: bare Koa + store, list 100 projects (baseline)`, `${bare}/projects`, { seconds, cpu }),
      listCached: () => load(`${mode}: GET /api/projects (100), read cache`, `${url}/api/projects`, { seconds, headers, cpu }),
      listUncached: () =>
        onUncached(() => load(`${mode}: GET /api/projects (100), no read cache`, `${direct()}/api/projects`, { seconds, headers, cpu })),
      createBaseline: () => load(`${mode}: bare Koa + store, create a board (baseline)`, `${bare}/boards`, { seconds, ...createBody, cpu }),
      create: () =>
        load(`${mode}: POST …/boards (createBoard)`, `${url}/api/dashboard/${group.id}/boards`, {
          seconds,
          method: 'POST',
          body: board('gw-[<id>]'),
          headers,
          cpu,
        }),
      mixBaseline: () =>
        load(`${mode}: bare Koa + store, 90 % lists, 10 % updates (baseline)`, bare, {
          seconds,
          requests: mix('/projects', '/projects', { 'content-type': 'application/json' }),
          cpu,
        }),
      mixCached: () =>
        load(`${mode}: 90 % GET /api/projects, 10 % PUT, read cache`, url, {
          seconds,
          requests: mix('/api/projects', `/api/projects/${updated.id}`, headers),
          cpu,
        }),
      mixUncached: () =>
        onUncached(() =>
          load(`${mode}: 90 % GET /api/projects, 10 % PUT, no read cache`, direct(), {
            seconds,
            requests: mix('/api/projects', `/api/projects/${updated.id}`, headers),
            cpu,
          }),
        ),
    };
    if (floor) {
      cases.listFloor = () =>
        load(`${mode}: bare Koa → NATS → bare responder + store, list (the floor over NATS)`, `${floor.url}/projects`, { seconds, cpu });
      cases.createFloor = () =>
        load(`${mode}: bare Koa → NATS → bare responder + store, create (the floor over NATS)`, `${floor.url}/boards`, {
          seconds,
          ...createBody,
          cpu,
        });
    }
    // The creates warmed up too: the first round would otherwise meet a cold insert path.
    await load('warm-up', `${bare}/boards`, { seconds: 1, ...createBody });
    await load('warm-up', `${url}/api/dashboard/${group.id}/boards`, { seconds: 1, method: 'POST', body: board('w-[<id>]'), headers });
    if (floor) await load('warm-up', `${floor.url}/boards`, { seconds: 1, ...createBody });
    // Each round takes every case in turn (every other round in reverse); the uncached gateway's two
    // cases side by side, around its life.
    const order = Object.keys(cases).filter((k) => k !== 'listUncached' && k !== 'mixUncached');
    order.push('listUncached', 'mixUncached');
    try {
      const results = await interleave(
        benchRounds,
        order.map((k) => cases[k]!),
      );
      return Object.fromEntries(order.map((k, i) => [k, results[i]!]));
    } finally {
      await uncached?.stop();
      await floor?.stop();
    }
  } finally {
    server.close();
    await proc.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The floor of any platform that serves these over NATS: a bare Koa app forwarding each list or create as
 * one NATS request to a bare responder that does the same store work, in this process (as the platform's
 * NATS mode runs here), on a connection of its own. No checks, logging, events or cache versions.
 */
async function startFloor(store: Store, groupId: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const nc = await connect({ servers: process.env.NATS_URL as string, noAsyncTraces: true });
  const subject = `bench.floor.${randomBytes(4).toString('hex')}`;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  nc.subscribe(`${subject}.*`, {
    queue: 'floor',
    callback: (_err, msg) => {
      const work = msg.subject.endsWith('.list')
        ? projects.list(store, 'default')
        : boards.insert(store, 'default', randomUUID(), JSON.parse(decoder.decode(msg.data)), { actor: 'admin', at: new Date() }, groupId);
      // A failure answers an empty message, which the app answers with a 500, as the baseline would.
      void work.then(
        (answer) => msg.respond(encoder.encode(JSON.stringify(answer))),
        () => msg.respond(new Uint8Array()),
      );
    },
  });
  await nc.flush();
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const op = ctx.method === 'GET' ? 'list' : 'create';
    const reply = await nc.request(`${subject}.${op}`, Buffer.concat(chunks), { timeout: 5000 });
    if (reply.data.byteLength === 0) ctx.throw(500);
    ctx.type = 'application/json';
    ctx.body = decoder.decode(reply.data);
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.close();
      await nc.close();
    },
  };
}

const modes: ('embedded' | 'NATS')[] = process.env.NATS_URL && process.env.DATABASE_URL ? ['embedded', 'NATS'] : ['embedded'];
for (const mode of modes) {
  const r = await measure(mode);
  for (const runs of Object.values(r)) {
    const failed = runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0);
    if (failed > 0) console.error(`${runs[0]?.name}: ${failed} failed requests`);
  }
  const title = (what: string) => `${mode}: ${what}, ${benchRounds} interleaved rounds of ${seconds} s per case, 32 connections`;
  const floor = (k: string) => (r[k] ? [r[k]] : []);
  console.log(roundsTable(title('list'), r.listBaseline!, [r.listCached!, r.listUncached!, ...floor('listFloor')]));
  console.log(roundsTable(title('createBoard'), r.createBaseline!, [r.create!, ...floor('createFloor')]));
  console.log(roundsTable(title('90 % lists, 10 % updates'), r.mixBaseline!, [r.mixCached!, r.mixUncached!]));
}
