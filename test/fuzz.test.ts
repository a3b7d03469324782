/**
 * A property over every route of the registry (and the session routes): requests generated from the
 * route's schemas, then broken on purpose (`@scada/testkit/fuzz`), are never answered 5xx, never show a stack
 * or SQL, and a refused write leaves the store exactly as it was (`@scada/testkit/fuzz_check`). A fixed seed
 * and a bounded count here; `npm run bench -- fuzz` runs many more.
 */
import fc from 'fast-check';
import t from 'tap';
import { fuzzRoutes, requestsFor, type FuzzRequest } from '@scada/testkit/fuzz';
import { checkRequest, fuzzClient } from '@scada/testkit/fuzz_check';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin } from '@scada/testkit/session';

const seed = Number(process.env.FUZZ_SEED ?? 20261123);
const runsPerRoute = Number(process.env.FUZZ_RUNS ?? 8);

const p = await startTestPlatform({ LOGIN_RATE_LIMIT_PER_MINUTE: '1000000' });
t.teardown(() => p.stop());
const client = fuzzClient(p.url, (await asAdmin(p)).headers);
t.teardown(() => client.close());

t.test(
  `every route, ${runsPerRoute} broken requests each (seed ${seed}): never a 5xx, never a leak, nothing stored by a refusal (${p.mode})`,
  async (t) => {
    const seen = new Map<number, number>();
    for (const route of fuzzRoutes()) {
      const result = await fc.check(
        fc.asyncProperty(requestsFor(route), async (req) => {
          const status = await checkRequest(p, client, route, req);
          seen.set(status, (seen.get(status) ?? 0) + 1);
        }),
        { seed, numRuns: runsPerRoute, endOnFailure: true },
      );
      const example = result.counterexample?.[0] as FuzzRequest | undefined;
      const why = example
        ? `: ${example.method} ${example.path.slice(0, 120)} ${JSON.stringify(example.headers)} ${String(result.errorInstance)}`
        : '';
      t.notOk(result.failed, `${route.method} ${route.path}${why}`);
    }
    t.comment(`answers by status: ${JSON.stringify(Object.fromEntries([...seen].sort((a, b) => a[0] - b[0])))}`);
  },
);
