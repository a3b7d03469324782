/**
 * The live channel under load, two cases (`LIVE_BENCH_CASES`, both unless told):
 *
 * `stream`: one gateway (the whole platform in this process, embedded), 1,000 SSE clients on loopback in
 * a process of their own, each following one of 10 connections, and 200 value changes a second spread
 * over the 10 (so about 20,000 events a second to deliver). Reports are published on the bus as the
 * protocol service publishes them, stamped with their receipt time; the latency is from that stamp to the
 * client. The baseline is a bare Node SSE server in the same process, fed the same events from the same
 * bus and writing each frame once to its followers. Also: heap per idle client after a full collection,
 * for both.
 *
 * `snapshot`: the opening snapshot of a space of 10,000 connections and 50,000 values
 * (`LIVE_BENCH_SNAPSHOT_CONNECTIONS`), embedded and, with NATS_URL and DATABASE_URL set, on NATS and
 * PostgreSQL (`live_snapshot.ts`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import vm from 'node:vm';
import { launch, type PlatformProcess } from '../launch.ts';
import { createDatabase } from '@scada/testkit/platform';
import { testBusKeys } from '@scada/testkit/bus_keys';
import { dropEventStream } from '@scada/testkit/event_streams';
import { platformNatsEnv } from '@scada/testkit/nats_auth';
import { freePort } from './harness.ts';
import { largeSpace, measureSnapshot } from './live_snapshot.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const clients = Number(process.env.LIVE_BENCH_CLIENTS ?? 1000);
const rate = Number(process.env.LIVE_BENCH_RATE ?? 200);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connectionCount = 10;
const encoder = new TextEncoder();
const cases = (process.env.LIVE_BENCH_CASES ?? 'stream,snapshot').split(',');
const snapshotConnections = Number(process.env.LIVE_BENCH_SNAPSHOT_CONNECTIONS ?? 10_000);
const password = 'bench-admin-password-1';

/** The `stream` case: throughput, latency and heap per client against the bare server. */
async function streamCase(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-live-'));
  const port = await freePort();
  const proc = await launch(
    {
      DATA_DIR: dataDir,
      HTTP_PORT: String(port),
      HTTPS_PORT: '0',
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: password,
      NODE_ENV: 'test',
      PASSWORD_HASH_COST: '12',
      LIVE_STREAMS_PER_USER: String(clients * 2),
    },
    { host: '127.0.0.1' },
  );
  const base = `http://127.0.0.1:${port}`;
  process.stderr.write(`platform up\n`);
  const login = (await (
    await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    })
  ).json()) as { access_token: string };
  const headers = { authorization: `Bearer ${login.access_token}` };
  const project = (await (
    await fetch(`${base}/api/projects`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', isActive: true }),
    })
  ).json()) as { id: string };
  const connections: string[] = [];
  for (let i = 0; i < connectionCount; i++) {
    const form = new FormData();
    form.set(
      'connection',
      JSON.stringify({ name: `bench-${i}`, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' }),
    );
    connections.push(
      (
        (await (await fetch(`${base}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers, body: form })).json()) as {
          id: string;
        }
      ).id,
    );
  }

  /** The baseline: a bare SSE server on the same bus, one frame per value written once to every follower. */
  const followers = new Map<string, Set<http.ServerResponse>>();
  let bareId = 0;
  const bare = http.createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('connections') ?? '';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.flushHeaders();
    let set = followers.get(id);
    if (!set) followers.set(id, (set = new Set()));
    set.add(res);
    res.on('close', () => set.delete(res));
  });
  const barePort = await freePort();
  await new Promise<void>((resolve) => bare.listen(barePort, '127.0.0.1', resolve));
  const bareSub = proc.bus.subscribe('events.protocol.report', (m) => {
    const report = JSON.parse(new TextDecoder().decode(m.data)) as { connectionId: string; values: unknown[] };
    const set = followers.get(report.connectionId);
    if (!set) return;
    const id = ++bareId;
    for (const value of report.values) {
      const frame = Buffer.from(`id: ${id}\nevent: value\ndata: ${JSON.stringify(value)}\n\n`);
      for (const res of set) res.write(frame);
    }
  });

  /** Starts the client process; resolves once every stream is open. */
  async function startClients(
    url: string,
    follow: string[],
    count: number,
  ): Promise<{ child: ChildProcess; next(): Promise<Record<string, number>> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/live_clients.ts'], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, URL: url, CLIENTS: String(count), CONNECTIONS: follow.join(','), HEADERS: JSON.stringify(headers) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(String((await lines.next()).value)) as Record<string, number>;
    await next();
    return { child, next };
  }

  function publishFor(ms: number): Promise<number> {
    return new Promise((resolve) => {
      const start = Date.now();
      let sent = 0;
      const timer = setInterval(() => {
        const elapsed = Date.now() - start;
        const due = Math.min(Math.floor((elapsed * rate) / 1000), Math.floor((ms * rate) / 1000));
        for (; sent < due; sent++) {
          const connectionId = connections[sent % connectionCount]!;
          const at = new Date().toISOString();
          const value = {
            connectionId,
            reference: 'LD0/MMXU1.TotW.mag.f',
            value: sent,
            quality: null,
            timestamp: at,
            receivedAt: at,
            rcb: 'LD0/LLN0$RP$urcb01',
            reason: ['data-change'],
            seqNum: sent,
          };
          proc.bus.publish(
            'events.protocol.report',
            encoder.encode(
              JSON.stringify({
                space: 'default',
                connectionId,
                rcb: value.rcb,
                rptId: 'bench',
                seqNum: sent,
                entryId: null,
                at,
                values: [value],
              }),
            ),
          );
        }
        if (elapsed >= ms) {
          clearInterval(timer);
          resolve(sent);
        }
      }, 5);
    });
  }

  type Row = { name: string; perSecond: number; share: number; p50: number; p99: number; heapKiB: number };

  async function measure(name: string, url: string): Promise<Row> {
    process.stderr.write(`measuring ${name}\n`);
    const run = await startClients(url, connections, clients);
    await new Promise((r) => setTimeout(r, 1000));
    run.child.kill('SIGUSR1');
    const published = await publishFor(seconds * 1000);
    await new Promise((r) => setTimeout(r, 1000));
    run.child.kill('SIGUSR2');
    const result = await run.next();
    await new Promise((r) => run.child.once('exit', r));
    const expected = published * (clients / connectionCount);
    // Idle clients: streams of a connection nobody reports on.
    await new Promise((r) => setTimeout(r, 500));
    gc();
    const before = process.memoryUsage().heapUsed;
    const idle = await startClients(url, [randomUUID()], clients);
    await new Promise((r) => setTimeout(r, 1000));
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    idle.child.kill('SIGUSR2');
    await idle.next();
    return {
      name,
      perSecond: Math.round(result.delivered! / seconds),
      share: result.delivered! / expected,
      p50: result.p50!,
      p99: result.p99!,
      heapKiB: (after - before) / clients / 1024,
    };
  }

  try {
    const baseline = await measure('bare Node SSE server on the same bus (baseline)', `http://127.0.0.1:${barePort}/`);
    const gateway = await measure('gateway `GET /api/live`', `${base}/api/live`);
    const rows = [baseline, gateway];
    console.log(
      `Live channel, ${clients} SSE clients over ${connectionCount} connections, ${rate} value changes/s for ${seconds} s, ${new Date().toISOString().slice(0, 10)}\n`,
    );
    console.log('| case | events delivered/s | delivered of sent | p50 ms | p99 ms | heap per idle client | ratio to baseline |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.perSecond} | ${(r.share * 100).toFixed(1)} % | ${r.p50} | ${r.p99} | ${r.heapKiB.toFixed(1)} KiB | ${(r.perSecond / baseline.perSecond).toFixed(2)} |`,
      );
    }
  } finally {
    await bareSub.unsubscribe();
    bare.closeAllConnections();
    bare.close();
    await proc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Signs the bootstrap administrator in; answers bearer headers. */
async function adminHeaders(base: string): Promise<Record<string, string>> {
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` };
}

/** The `snapshot` case on one platform: embedded, or on NATS and PostgreSQL. */
async function snapshotCase(mode: 'embedded' | 'NATS'): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-snapshot-'));
  const database = mode === 'NATS' ? await createDatabase(process.env.DATABASE_URL as string) : null;
  const prefix = `b${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  let proc: PlatformProcess | null = null;
  let holder: { stop(): Promise<void> } | null = null;
  try {
    proc = await launch(
      {
        DATA_DIR: dataDir,
        HTTP_PORT: String(port),
        HTTPS_PORT: '0',
        LOG_LEVEL: 'warn',
        ADMIN_PASSWORD: password,
        NODE_ENV: 'test',
        PASSWORD_HASH_COST: '12',
        // The supervisor looks for connections to take every lease/5; the stand-in holds them all.
        SESSION_LEASE_SECONDS: '300',
        ...(database
          ? {
              DATABASE_URL: database.url,
              SECRETS_KEY: randomBytes(32).toString('base64'),
              ...platformNatsEnv(),
              ...testBusKeys,
              BUS_SUBJECT_PREFIX: prefix,
            }
          : {}),
      },
      { host: '127.0.0.1' },
    );
    const base = `http://127.0.0.1:${port}`;
    const headers = await adminHeaders(base);
    const filled = Date.now();
    const large = await largeSpace(proc, base, headers, snapshotConnections);
    holder = large;
    process.stderr.write(`${mode}: ${snapshotConnections} connections in ${Date.now() - filled} ms\n`);
    const result = await measureSnapshot(proc, base, headers, large.space, 3);
    console.log(
      `\nSnapshot of ${snapshotConnections} connections, ${mode}, ${new Date().toISOString().slice(0, 10)}; the whole snapshot asked for in one bus message: ${result.unpaged}\n`,
    );
    console.log('| run | headers ms | first byte ms | whole snapshot ms | snapshot MiB | sessions | values |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|');
    for (const [i, r] of result.runs.entries()) {
      console.log(
        `| ${i + 1} | ${r.headersMs.toFixed(0)} | ${r.firstByteMs.toFixed(0)} | ${r.snapshotMs.toFixed(0)} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${r.sessions} | ${r.values} |`,
      );
    }
    console.log(`\nGateway process heap at its peak during a snapshot, above where it started: ${result.heapPeakMiB.toFixed(0)} MiB`);
  } finally {
    await holder?.stop();
    await proc?.stop();
    if (database) await dropEventStream(prefix).catch(() => undefined);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (cases.includes('stream')) await streamCase();
if (cases.includes('snapshot')) {
  await snapshotCase('embedded');
  if (process.env.NATS_URL && process.env.DATABASE_URL) await snapshotCase('NATS');
}
