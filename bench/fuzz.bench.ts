/**
 * The fuzz property of `test/fuzz.test.ts` at a larger count (`FUZZ_RUNS` per route, 150 by default; a
 * seed of its own each run unless `FUZZ_SEED` is set): every route, requests generated from its schemas
 * and broken on purpose. Reports the requests, how they were answered, and any that broke the property
 * (never a 5xx, never a leak, nothing stored by a refusal; there must be none). The rate of broken
 * requests is set against well-formed requests to the same routes in the same run, as the baseline:
 * refusing at the edge should cost no more than serving.
 */
import fc from 'fast-check';
import { fuzzRoutes, mutationNames, requestsFor, type FuzzRequest } from '@scada/testkit/fuzz';
import { checkRequest, fuzzClient } from '@scada/testkit/fuzz_check';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin } from '@scada/testkit/session';

const runs = Number(process.env.FUZZ_RUNS ?? 150);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const p = await startTestPlatform({ LOGIN_RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'warn' });
const client = fuzzClient(p.url, (await asAdmin(p)).headers);

type Pass = { requests: number; seconds: number; byStatus: Map<number, number>; broken: string[] };

/** Runs the property over every route with the given mutations; the requests are generated before the clock starts. */
async function pass(mutations: string[], count: number): Promise<Pass> {
  const out: Pass = { requests: 0, seconds: 0, byStatus: new Map(), broken: [] };
  for (const route of fuzzRoutes()) {
    const requests = fc.sample(requestsFor(route, mutations), { seed, numRuns: count }) as FuzzRequest[];
    const started = performance.now();
    for (const req of requests) {
      try {
        const status = await checkRequest(p, client, route, req);
        out.byStatus.set(status, (out.byStatus.get(status) ?? 0) + 1);
      } catch (err) {
        out.broken.push(`${route.method} ${route.path}: ${(err as Error).message.slice(0, 200)}`);
      }
      out.requests++;
    }
    out.seconds += (performance.now() - started) / 1000;
  }
  return out;
}

try {
  const valid = await pass(['valid'], Math.max(10, Math.round(runs / 5)));
  const broken = await pass(
    mutationNames.filter((m) => m !== 'valid'),
    runs,
  );
  const rate = (x: Pass) => x.requests / x.seconds;
  const statuses = (x: Pass) =>
    [...x.byStatus]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
  console.log(`### Fuzz, ${fuzzRoutes().length} routes, seed ${seed}, ${p.mode}\n`);
  console.log('| case | requests | req/s | ratio to baseline | answers | broke the property |');
  console.log('|---|---:|---:|---:|---|---:|');
  console.log(
    `| well-formed requests (baseline) | ${valid.requests} | ${rate(valid).toFixed(0)} | 1.00 | ${statuses(valid)} | ${valid.broken.length} |`,
  );
  console.log(
    `| broken requests, ${mutationNames.length - 1} kinds | ${broken.requests} | ${rate(broken).toFixed(0)} | ${(rate(broken) / rate(valid)).toFixed(2)} | ${statuses(broken)} | ${broken.broken.length} |`,
  );
  for (const line of [...valid.broken, ...broken.broken].slice(0, 20)) console.log(`- ${line}`);
} finally {
  client.close();
  await p.stop();
}
