/**
 * What signing every bus request costs at the edge. Starts the platform split over NATS + PostgreSQL as
 * `gateway_echo.bench.ts` does (a gateway process and a services process, `LOG_LEVEL=info`) twice at once:
 * from the tree before bus contexts were signed (`BEFORE_TREE`, a checkout of that commit with its own
 * `npm install`; with `BEFORE_KEYS=ed25519`, a tree of the Ed25519 contexts, keyed as it was) and from this
 * tree, with a key per process (`roleBusKeys`). Each platform has its own
 * database, subject prefix and 100 projects made through the HTTP API as the administrator, and runs with
 * the read cache off (`READ_CACHE_MAX_AGE_MS=0`), so that every list is a bus round trip. In interleaved
 * rounds (`BENCH_ROUNDS`, `BENCH_SECONDS` per case, 32 connections) it loads `GET /api/echo?text=hi` and
 * `GET /api/projects` on both and prints, per request, req/s and the ratio after/before of each round, with
 * the CPU per request of both processes of each platform. Then it measures, in this process, what a
 * context costs to make and to verify (µs a request, five keys trusted as a cluster's five roles), against
 * the Ed25519 signature the contexts carried until 2026-11-29 (`node:crypto`, on the same bytes) and a
 * request over the in-process bus with and without `SignedBus`. The platforms need BEFORE_TREE, NATS_URL
 * and DATABASE_URL; without them it says so and measures the contexts in this process only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign as edSign, verify as edVerify } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { busHeaders } from '@scada/contracts';
import { pino } from 'pino';
import { ContextSigner, MemoryBus, newBusKey, parseTrustedKeys, SignedBus, trustedKeyEntry } from '@scada/platform';
import { ContextVerifier } from '@scada/platform/testing';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import { createDatabase } from '@scada/testkit/platform';
import { benchRounds, freePort, interleave, load, processCpuMs, roundsTable, stopProcess, waitReady, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const password = 'bench-admin-password';
const thisTree = new URL('..', import.meta.url).pathname;

/** One platform, gateway and services in two processes, ready to be loaded. */
type Platform = { url: string; headers: Record<string, string>; cpu: () => number; stop: () => Promise<void> };

/**
 * Starts `main.ts` of a tree in a process of its own, through that tree's tsx and packages (the harness's
 * `startProcess` runs this tree's files only).
 */
function startIn(tree: string, env: Record<string, string | undefined>): ChildProcess {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const prof = process.env.BENCH_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROF_DIR)] : [];
  return spawn(process.execPath, [...prof, '--import', 'tsx', 'main.ts'], {
    cwd: tree,
    env: merged,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Ed25519 keys of a process each, as `npm run bus-keys` made them until 2026-11-29 (for a BEFORE_TREE of then). */
function ed25519Keys(processes: Record<'gateway' | 'services', string[]>): Record<'gateway' | 'services', Record<string, string>> {
  const pairs = Object.entries(processes).map(([name, roles]) => ({ name, roles, ...generateKeyPairSync('ed25519') }));
  const trusted = JSON.stringify({ keys: pairs.map((p) => ({ ...p.publicKey.export({ format: 'jwk' }), roles: p.roles })) });
  return Object.fromEntries(
    pairs.map((p) => [
      p.name,
      { BUS_SIGNING_KEY: p.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), BUS_TRUSTED_KEYS: trusted },
    ]),
  ) as unknown as Record<'gateway' | 'services', Record<string, string>>;
}

/** How a platform's processes are keyed: not at all (before contexts), Ed25519 (before 2026-11-29), or as now. */
type Keying = 'none' | 'ed25519' | 'x25519';

async function startPlatform(tree: string, keying: Keying): Promise<Platform> {
  const signed = keying !== 'none';
  const database = await createDatabase(process.env.DATABASE_URL as string);
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-trust-'));
  const port = await freePort();
  const common = {
    DATA_DIR: dataDir,
    HTTP_PORT: String(port),
    HTTPS_PORT: '0',
    LOG_LEVEL: 'info',
    NATS_URL: process.env.NATS_URL,
    DATABASE_URL: database.url,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    ADMIN_PASSWORD: password,
    READ_CACHE_MAX_AGE_MS: '0',
    // Both platforms share the NATS server: each on subjects, streams and buckets of its own.
    BUS_SUBJECT_PREFIX: `trust${signed ? 'after' : 'before'}${randomBytes(3).toString('hex')}`,
    BUS_SIGNING_KEY: undefined,
    BUS_TRUSTED_KEYS: undefined,
  };
  const roles = { gateway: ['gateway'], services: ['auth', 'config', 'protocol'] };
  const keys = keying === 'x25519' ? roleBusKeys(roles) : keying === 'ed25519' ? ed25519Keys(roles) : { gateway: {}, services: {} };
  const children = [
    startIn(tree, { ...common, SERVICES: 'auth,config,protocol', ...keys.services }),
    startIn(tree, { ...common, SERVICES: 'gateway', ...keys.gateway }),
  ];
  const stop = async () => {
    for (const c of [...children].reverse()) await stopProcess(c);
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  };
  const url = `http://127.0.0.1:${port}`;
  let headers: Record<string, string>;
  try {
    await waitReady(`${url}/readyz`);
    // The gateway is ready before the auth service has made the administrator: asked again while it answers 503.
    let login: Response;
    for (let tries = 0; ; tries++) {
      login = await fetch(`${url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      if (login.status !== 503 || tries >= 60) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    if (login.status !== 200) throw new Error(`${tree}: login answered ${login.status}: ${await login.text()}`);
    const { access_token: token } = (await login.json()) as { access_token: string };
    headers = { authorization: `Bearer ${token}`, 'x-space': 'default' };
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${url}/api/projects`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `project-${String(i).padStart(3, '0')}`, isActive: true }),
      });
      if (res.status !== 201 && res.status !== 200) throw new Error(`${tree}: creating a project answered ${res.status}`);
    }
    const listed = await fetch(`${url}/api/projects`, { headers });
    const rows = listed.status === 200 ? ((await listed.json()) as unknown[]).length : -1;
    if (rows !== 100) throw new Error(`${tree}: the list answered ${listed.status} with ${rows} projects`);
    const echo = await fetch(`${url}/api/echo?text=hi`);
    if (echo.status !== 200) throw new Error(`${tree}: the echo answered ${echo.status}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, headers, cpu: () => children.reduce((sum, c) => sum + processCpuMs(c.pid ?? 0), 0), stop };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `op` one call after another for `ms`: wall and CPU (every thread of this process) per call, in µs. */
async function perCall(ms: number, op: () => unknown): Promise<{ wallUs: number; cpuUs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 50; i++) await op();
    n += 50;
  }
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wallUs: (wall * 1000) / n, cpuUs: (cpu.user + cpu.system) / n };
}

/** Sign and verify of one context, as a gateway's request of a list carries it, and what they stand on. */
async function micro(rounds: number): Promise<string> {
  const { identity } = await newBusKey();
  const others = ['auth', 'config', 'protocol', 'history'] as const;
  const cluster = [trustedKeyEntry(identity, ['gateway'])];
  for (const role of others) cluster.push(trustedKeyEntry((await newBusKey()).identity, [role]));
  const trusted = await parseTrustedKeys(JSON.stringify({ keys: cluster }));
  const signer = new ContextSigner({ identity, trusted });
  const verifier = new ContextVerifier({ identity, trusted });
  const ed = generateKeyPairSync('ed25519').privateKey;
  const publicKey = createPublicKey(ed);
  const encoder = new TextEncoder();
  const subject = 'scada.config.listProjects';
  const data = encoder.encode(JSON.stringify({ params: {}, query: {} }));
  const actor = JSON.stringify({ id: randomUUID(), name: 'admin', roles: ['admin'], spaces: ['default'], sid: randomUUID() });
  const headers = () => ({
    [busHeaders.requestId]: randomUUID(),
    [busHeaders.space]: 'default',
    [busHeaders.actor]: actor,
    [busHeaders.clientIp]: '127.0.0.1',
    [busHeaders.timeout]: '5000',
  });
  const given = headers();
  const token = signer.sign(subject, data, given);
  const message = { subject, data, headers: { ...given, [busHeaders.context]: token } };
  const verdict = verifier.verify(message);
  if (!('headers' in verdict)) throw new Error(`the context does not verify: ${verdict.reason}`);
  const signingInput = Buffer.from(token.slice(0, token.lastIndexOf('.')));
  const signature = edSign(null, signingInput, ed);

  const log = pino({ level: 'silent' });
  const plain = new MemoryBus();
  const signed = new SignedBus(new MemoryBus(), { identity, trusted }, log);
  const reply = { data: encoder.encode('{"text":"hi"}') };
  for (const bus of [plain, signed])
    await bus.addService({ name: 'echo', version: '1.0.0' }, [{ name: 'e', subject, handler: async () => reply }]);

  const cases: [string, () => unknown][] = [
    ['`ContextSigner.sign` (five HMAC-SHA-256 tags)', () => signer.sign(subject, data, headers())],
    ['`ContextVerifier.verify` (its own tag, then the claims)', () => verifier.verify(message)],
    ['Ed25519 sign of the same bytes, `node:crypto` (synchronous)', () => edSign(null, signingInput, ed)],
    ['Ed25519 verify of the same bytes, `node:crypto` (synchronous)', () => edVerify(null, signingInput, publicKey, signature)],
    ['request over `MemoryBus`, trivial service', () => plain.request(subject, data, { headers: headers() })],
    ['request over `SignedBus` on `MemoryBus`: sign + verify', () => signed.request(subject, data, { headers: headers() })],
  ];
  for (const [, op] of cases) await perCall(300, op);
  const runs = cases.map((): { wallUs: number; cpuUs: number }[] => []);
  for (let round = 0; round < rounds; round++) {
    const order = [...cases.keys()];
    for (const i of round % 2 === 0 ? order : order.reverse()) runs[i]!.push(await perCall(1000, cases[i]![1]));
  }
  await plain.close();
  await signed.close();
  const lines = [
    `### One context, signed and verified in this process, ${rounds} alternating rounds of 1 s, one call at a time (${token.length} characters)`,
    '',
    '| case | µs a call (wall) | range | µs of CPU a call (every thread) |',
    '|---|---:|---:|---:|',
  ];
  cases.forEach(([name], i) => {
    const wall = runs[i]!.map((r) => r.wallUs);
    lines.push(
      `| ${name} | ${median(wall).toFixed(1)} | ${Math.min(...wall).toFixed(1)}–${Math.max(...wall).toFixed(1)} | ${median(runs[i]!.map((r) => r.cpuUs)).toFixed(1)} |`,
    );
  });
  return lines.join('\n');
}

/** After/before throughput of each round, in round order. */
const perRound = (before: LoadResult[], after: LoadResult[]) => after.map((r, i) => (r.rps / before[i]!.rps).toFixed(2)).join(', ');

const beforeTree = process.env.BEFORE_TREE;
if (!beforeTree || !process.env.NATS_URL || !process.env.DATABASE_URL) {
  console.log(
    'bus_trust.bench.ts: the platforms before and after are skipped; they need BEFORE_TREE (a checkout of the commit before signed bus contexts, npm installed), NATS_URL and DATABASE_URL',
  );
  console.log(await micro(benchRounds));
} else {
  if (!existsSync(join(beforeTree, 'main.ts')) || !existsSync(join(beforeTree, 'node_modules')))
    throw new Error(`BEFORE_TREE=${beforeTree}: no main.ts or node_modules there`);
  const platforms: Platform[] = [];
  try {
    // BEFORE_KEYS=ed25519: a tree of the Ed25519 contexts (before 2026-11-29) rather than one before any context.
    const beforeKeying: Keying = process.env.BEFORE_KEYS === 'ed25519' ? 'ed25519' : 'none';
    const beforeName = beforeKeying === 'ed25519' ? 'before (Ed25519 contexts)' : 'before (unsigned)';
    const before = await startPlatform(resolve(beforeTree), beforeKeying);
    platforms.push(before);
    const after = await startPlatform(thisTree, 'x25519');
    platforms.push(after);
    const echo = (p: Platform, name: string) => () => load(name, `${p.url}/api/echo?text=hi`, { seconds, cpu: p.cpu });
    const list = (p: Platform, name: string) => () => load(name, `${p.url}/api/projects`, { seconds, headers: p.headers, cpu: p.cpu });
    const cases = [
      echo(before, `${beforeName}: GET /api/echo`),
      echo(after, 'after (HMAC contexts): GET /api/echo'),
      list(before, `${beforeName}: GET /api/projects (100), no read cache`),
      list(after, 'after (HMAC contexts): GET /api/projects (100), no read cache'),
    ];
    for (const p of [before, after]) {
      await load('warm-up', `${p.url}/api/echo?text=hi`, { seconds: 1 });
      await load('warm-up', `${p.url}/api/projects`, { seconds: 1, headers: p.headers });
    }
    const [echoBefore, echoAfter, listBefore, listAfter] = await interleave(benchRounds, cases);
    for (const runs of [echoBefore, echoAfter, listBefore, listAfter]) {
      const failed = runs!.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
      if (failed > 0) console.error(`${runs![0]?.name}: ${failed} failed requests`);
    }
    const title = (what: string) =>
      `${what}, ${beforeName} and after (HMAC contexts), NATS + PostgreSQL, ${benchRounds} interleaved rounds of ${seconds} s per case, 32 connections, ${new Date().toISOString().slice(0, 10)}`;
    console.log(roundsTable(title('Echo'), echoBefore!, [echoAfter!]));
    console.log(`\nafter/before by round: ${perRound(echoBefore!, echoAfter!)}\n`);
    console.log(roundsTable(title('List of 100 projects'), listBefore!, [listAfter!]));
    console.log(`\nafter/before by round: ${perRound(listBefore!, listAfter!)}\n`);
  } finally {
    for (const p of platforms.reverse()) await p.stop();
  }
  console.log(await micro(benchRounds));
}
