/**
 * Every operation that takes a date and time, driven with dates that do not exist (30 February, 29
 * February of a common year), times past the day's end, offsets and instants the store cannot keep: each
 * answers a 4xx problem or stores what it was given, never a 5xx, and a refusal changes nothing.
 */
import t from 'tap';
import { calendarRequests, fuzzRoutes } from '@scada/testkit/fuzz';
import { checkRequest, fuzzClient } from '@scada/testkit/fuzz_check';
import { startTestPlatform } from '@scada/testkit/platform';
import { scriptsApi } from '@scada/testkit/scripts';
import { asAdmin } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const admin = await asAdmin(p);
const client = fuzzClient(p.url, admin.headers);
t.teardown(() => client.close());

t.test(`every operation taking a date-time, at the calendar's edges: never a 5xx (${p.mode})`, async (t) => {
  let routes = 0;
  const seen = new Map<number, number>();
  for (const route of fuzzRoutes()) {
    const requests = calendarRequests(route, 20261126);
    if (requests.length === 0) continue;
    routes++;
    for (const req of requests) {
      try {
        const status = await checkRequest(p, client, route, req);
        seen.set(status, (seen.get(status) ?? 0) + 1);
      } catch (err) {
        t.fail(`${route.method} ${route.path}: ${(err as Error).message}`);
      }
    }
  }
  t.ok(routes > 0, `${routes} operations take a date-time`);
  t.comment(`answers by status: ${JSON.stringify(Object.fromEntries([...seen].sort((a, b) => a[0] - b[0])))}`);
});

t.test('a script at 30 February is refused with the field named; 29 February of a leap year is kept', async (t) => {
  const scripts = await scriptsApi(p, admin);
  const created = await scripts.create('ins.log(1)', { type: 'Once', time: '2024-02-29T10:00:00Z' });
  const read = (await (await scripts.api('GET', `/${created}`)).json()) as { time: string; projectId: string };
  t.equal(Date.parse(read.time), Date.parse('2024-02-29T10:00:00Z'), 'a leap day exists, and reads back as given');
  const refused = await scripts.api('POST', '', {
    name: 'thirtieth',
    projectId: read.projectId,
    type: 'Once',
    log: true,
    code: 'ins.log(1)',
    time: '2026-02-30T10:00:00Z',
  });
  t.equal(refused.status, 400);
  const problem = (await refused.json()) as { errors?: { path?: string }[] };
  t.same(
    problem.errors?.map((e) => e.path),
    ['/body/time'],
    'the problem names the field',
  );
});
