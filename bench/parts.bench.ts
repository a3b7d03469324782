/**
 * The gateway's hand-written parts beside the maintained library each stands in front of, doing the same
 * work in this process: @koa/router alone beside find-my-way in front of it (as the gateway routes), the metric tallies
 * beside prom-client's children, the log line batch beside pino.destination's own gathering, the token and
 * principal caches and the rate limiter's buckets beside lru-cache, the client-address middleware beside
 * proxy-addr, the urlencoded parser beside URLSearchParams. A part replaced by its library is measured as it
 * was written (its code kept here) beside the library as the gateway now uses it. Each case runs for `BENCH_PART_MS` (200 ms
 * unless told) a round, the cases interleaved over `BENCH_ROUNDS` rounds (every other round in reverse);
 * the table gives operations per second and the median over rounds of hand-written / library. A part is
 * kept when it wins by 10 % or more; the margin is written beside it in its code and in bench/README.md.
 */
import { openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import Router from '@koa/router';
import { operations } from '@scada/contracts';
import type { Context } from 'koa';
import { LRUCache } from 'lru-cache';
import { pino } from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { clientIp, indexedRoutes, parseUrlencoded, RateLimiter, Tallies } from '@scada/gateway/parts';
import { LineBatch } from '@scada/platform/log';
import { benchRounds } from './harness.ts';

const partMs = Number(process.env.BENCH_PART_MS ?? 200);
/** proxy-addr has no types of its own; the one call used here. */
const require = createRequire(import.meta.url);
const proxyaddr = require('proxy-addr') as ((req: unknown, trust: unknown) => string) & {
  compile(addresses: string[]): unknown;
};

type Op = () => unknown;
type Pair = { part: string; hand: Op; lib: Op; libName: string; async?: boolean };

/** Operations a second of `op` over `ms` (in batches of 256 between clock reads). */
async function rate(op: Op, async: boolean, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  const started = performance.now();
  while (performance.now() < end) {
    if (async) for (let i = 0; i < 256; i++) await op();
    else for (let i = 0; i < 256; i++) op();
    n += 256;
  }
  return n / ((performance.now() - started) / 1000);
}

// --- routes: every route of the registry, and a request mix of the hot paths.
const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
const routes = [
  { method: 'GET', path: '/healthz' },
  ...operations.flatMap((o) => (o.http ? [{ method: o.http.method, path: o.http.path }] : [])),
];
const koaRouter = new Router();
const noop = async () => {};
for (const r of routes) koaRouter.register(r.path, [r.method], noop);
const index = indexedRoutes([koaRouter]);
const requests = [
  ['GET', '/healthz'],
  ['GET', '/api/echo'],
  ['GET', '/api/projects'],
  ['GET', `/api/projects/${uuid}`],
  ['POST', `/api/dashboard/${uuid}/boards`],
] as const;
let at = 0;
// The hand side is what @koa/router does alone (every pattern of the table tested in turn); the library
// side what the gateway does: find-my-way finds the pattern, the patterns of its few candidates are tested.
const routeHand = () => {
  const [method, path] = requests[at++ % requests.length]!;
  if (!koaRouter.match(path, method).route) throw new Error(`no route for ${method} ${path}`);
};
const routeLib = () => {
  const [method, path] = requests[at++ % requests.length]!;
  if (!index.match(method, path).route) throw new Error(`no route for ${method} ${path}`);
};

// --- metrics: an HTTP request counted and timed by method, route and status (40 label sets).
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const labelSets = Array.from({ length: 40 }, (_, i) => ({
  method: i % 2 ? 'GET' : 'POST',
  route: `/api/r${i % 20}`,
  status: i % 3 ? '200' : '404',
}));
const tallies = new Tallies(['method', 'route', 'status']);
const registry = new Registry();
const counter = new Counter({ name: 'c', help: 'c', labelNames: ['method', 'route', 'status'] as const, registers: [registry] });
const histogram = new Histogram({
  name: 'h',
  help: 'h',
  labelNames: ['method', 'route', 'status'] as const,
  buckets,
  registers: [registry],
});
const children = new Map<string, { c: { inc(): void }; h: { observe(v: number): void } }>();
let m = 0;
const metricHand = () => {
  const l = labelSets[m++ % labelSets.length]!;
  tallies.observe(`${l.method} ${l.status} ${l.route}`, () => l, 0.003);
};
const metricLib = () => {
  const l = labelSets[m++ % labelSets.length]!;
  const key = `${l.method} ${l.status} ${l.route}`;
  let child = children.get(key);
  if (!child) children.set(key, (child = { c: counter.labels(l), h: histogram.labels(l) }));
  child.c.inc();
  child.h.observe(0.003);
};

// --- log: the access line through pino, gathered by LineBatch or by the destination itself, to /dev/null.
const devNull = () => openSync('/dev/null', 'w');
const logOptions = { level: 'info', redact: { paths: ['password', '*.password', 'headers.authorization'], censor: '[redacted]' } };
const batched = pino(logOptions, new LineBatch(devNull(), 4096, 200)).child({ reqId: 'x' });
const gathered = pino(logOptions, pino.destination({ dest: devNull(), minLength: 4096, sync: false })).child({ reqId: 'x' });
const line = { method: 'GET', url: '/api/echo?text=hi', status: 200, ms: 1.234, ip: '10.1.2.3', space: 'default' };
const logHand = () => batched.info(line, 'request');
const logLib = () => gathered.info(line, 'request');

// --- token cache: 1,000 verified tokens (600 characters each), looked up by the token.
const tokens = Array.from({ length: 1000 }, (_, i) => `${'eyJhbGciOiJFZERTQSJ9'.padEnd(580, 'x')}.${String(i).padStart(19, '0')}`);
const claims = { sub: 'u', sid: 's', jti: 'j', exp: Date.now() / 1000 + 3600, iat: 0 };
const tokenMap = new Map(tokens.map((t) => [t, claims]));
const tokenLru = new LRUCache<string, typeof claims>({ max: 10_000 });
for (const t of tokens) tokenLru.set(t, claims);
let k = 0;
const tokenHand = () => {
  const c = tokenMap.get(tokens[k++ % tokens.length]!);
  if (!c || c.exp * 1000 <= Date.now()) throw new Error('missing');
};
const tokenLib = () => {
  const c = tokenLru.get(tokens[k++ % tokens.length]!);
  if (!c || c.exp * 1000 <= Date.now()) throw new Error('missing');
};

// --- principal cache: 200 users, kept for a minute.
const users = Array.from({ length: 200 }, (_, i) => `user-${i}`);
const principal = { id: 'u', roles: ['admin'] };
const principalMap = new Map(users.map((u) => [u, { value: principal, at: Date.now() }]));
const principalLru = new LRUCache<string, typeof principal>({ max: 10_000, ttl: 60_000 });
for (const u of users) principalLru.set(u, principal);
let p = 0;
const principalHand = () => {
  const c = principalMap.get(users[p++ % users.length]!);
  if (!c || Date.now() - c.at >= 60_000) throw new Error('missing');
};
const principalLib = () => {
  if (!principalLru.get(users[p++ % users.length]!)) throw new Error('missing');
};

// --- rate limiter: a token bucket per address, 1,000 addresses, bounded at 100,000. The hand-written side
// is the Map kept as an LRU (delete and set again on every take) that RateLimiter was before lru-cache.
const addresses = Array.from({ length: 1000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
const perMinute = 1_000_000_000;
const limiter = new RateLimiter(perMinute);
const mapBuckets = new Map<string, { tokens: number; at: number }>();
const takeMap = (address: string, now = Date.now()): number => {
  const rate = perMinute / 60_000;
  const bucket = mapBuckets.get(address) ?? { tokens: perMinute, at: now };
  bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * rate);
  bucket.at = now;
  mapBuckets.delete(address);
  mapBuckets.set(address, bucket);
  if (mapBuckets.size > 100_000) mapBuckets.delete(mapBuckets.keys().next().value as string);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000));
};
let a = 0;
const limitHand = () => takeMap(addresses[a++ % addresses.length]!);
const limitLib = () => limiter.take(addresses[a++ % addresses.length]!);

// --- client address: 32 keep-alive connections from IPv4-mapped addresses, no trusted proxy.
const sockets = Array.from({ length: 32 }, (_, i) => ({ remoteAddress: `::ffff:10.1.2.${i}` }) as Socket);
const fakeCtx = (socket: Socket) =>
  ({ req: { socket, connection: socket, headers: {} }, get: () => '', protocol: 'http', state: {} }) as unknown as Context;
const contexts = sockets.map(fakeCtx);
const handIp = clientIp([]);
const trustNone = proxyaddr.compile([]);
const libIp = async (ctx: Context, next: () => Promise<void>) => {
  const address = proxyaddr(ctx.req, trustNone);
  ctx.state.clientIp = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  ctx.state.scheme = ctx.protocol;
  await next();
};
let s = 0;
const ipHand = () => handIp(contexts[s++ % contexts.length]!, noop);
const ipLib = () => libIp(contexts[s++ % contexts.length]!, noop);

// --- urlencoded: a sign-in form. The hand-written side is the parser the gateway had before
// URLSearchParams (each pair split and decoded by decodeURIComponent); the library side is what
// parseUrlencoded does now, both without the value checks (assertClean) that follow either.
const form = 'username=admin&password=correct%20horse%2Bbattery&otp_code=123456&remember=on';
const decodeComponent = (text: string) => decodeURIComponent(text.replaceAll('+', ' '));
const byHand = (text: string) => {
  const fields = new Map<string, string[]>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const [key, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    const name = decodeComponent(key);
    fields.set(name, [...(fields.get(name) ?? []), decodeComponent(value)]);
  }
  return Object.fromEntries([...fields].map(([key, v]) => [key, v.length === 1 ? (v[0] as string) : v]));
};
const fromSearchParams = (text: string) => {
  if (text.includes('%')) decodeURIComponent(text);
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const was = fields.get(name);
    fields.set(name, was === undefined ? value : Array.isArray(was) ? [...was, value] : [was, value]);
  }
  return Object.fromEntries(fields);
};
if (JSON.stringify(byHand(form)) !== JSON.stringify(fromSearchParams(form)) || !parseUrlencoded(form).password)
  throw new Error('the two parsers differ');
const formHand = () => byHand(form);
const formLib = () => fromSearchParams(form);

const pairs: Pair[] = [
  {
    part: 'route lookup (5 hot paths, 148 routes): @koa/router alone; replaced',
    hand: routeHand,
    lib: routeLib,
    libName: "find-my-way, then the candidates' patterns",
  },
  { part: 'metric tallies (counter + histogram of one request)', hand: metricHand, lib: metricLib, libName: 'prom-client children' },
  { part: 'LineBatch (an access line through pino)', hand: logHand, lib: logLib, libName: 'pino.destination minLength' },
  { part: 'token cache (Map, first in first out; replaced)', hand: tokenHand, lib: tokenLib, libName: 'lru-cache' },
  { part: 'principal cache (Map, age checked; replaced)', hand: principalHand, lib: principalLib, libName: 'lru-cache ttl' },
  { part: 'rate limiter buckets (Map as LRU; replaced)', hand: limitHand, lib: limitLib, libName: 'lru-cache' },
  { part: 'client address (peer kept per connection)', hand: ipHand, lib: ipLib, libName: 'proxy-addr', async: true },
  { part: 'urlencoded parser (replaced)', hand: formHand, lib: formLib, libName: 'URLSearchParams' },
];

const results = pairs.map(() => ({ hand: [] as number[], lib: [] as number[] }));
// Warm-up, then interleaved rounds: every case once a round, every other round in reverse.
for (const pair of pairs) {
  await rate(pair.hand, pair.async ?? false, 50);
  await rate(pair.lib, pair.async ?? false, 50);
}
const cases = pairs.flatMap((pair, i) => [
  { i, side: 'hand' as const, op: pair.hand, async: pair.async ?? false },
  { i, side: 'lib' as const, op: pair.lib, async: pair.async ?? false },
]);
for (let round = 0; round < benchRounds; round++) {
  for (const c of round % 2 === 0 ? cases : [...cases].reverse()) results[c.i]![c.side].push(await rate(c.op, c.async, partMs));
}

const median = (v: number[]) => {
  const sorted = [...v].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const lines = [
  `### Hand-written parts beside their libraries: ${benchRounds} interleaved rounds of ${partMs} ms per case, ${new Date().toISOString().slice(0, 10)}`,
  '',
  '| part | hand-written ops/s | library | library ops/s | hand / library (median) | range over rounds |',
  '|---|---:|---|---:|---:|---:|',
];
for (const [i, pair] of pairs.entries()) {
  const r = results[i]!;
  const ratios = r.hand.map((h, j) => h / r.lib[j]!);
  lines.push(
    `| ${pair.part} | ${Math.round(median(r.hand))} | ${pair.libName} | ${Math.round(median(r.lib))} | ${median(ratios).toFixed(2)} | ` +
      `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} |`,
  );
}
console.log(lines.join('\n'));
