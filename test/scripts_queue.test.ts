/**
 * The script workers are shared fairly and their queue is bounded, through the gateway's HTTP API: one
 * editor starting sixteen endless loops gets one worker, a few runs queued behind it and 503 `overloaded`
 * with `Retry-After` for the rest, answered before any loop has ended; a run in another space meanwhile
 * answers `ok` on the worker the flood could not take; the queued runs each get their whole deadline,
 * counted from when a worker took them.
 */
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';
import { scriptsApi } from '@scada/testkit/scripts';

// Two workers, so one space may hold one of them; runs by hand end after 1.5 s; four may wait per space.
const deadlineMs = 1500;
const queuePerSpace = 4;
const p = await startTestPlatform({
  SCRIPT_WORKERS: '2',
  SCRIPT_MANUAL_DEADLINE_MS: String(deadlineMs),
  SCRIPT_QUEUE_PER_SPACE: String(queuePerSpace),
});
t.teardown(() => p.stop());

t.test(`a flood of endless runs in one space takes one worker, queues a few and is refused the rest at once (${p.mode})`, async (t) => {
  const flooder = await scriptsApi(p, await signIn(p, { role: 'editor' }));
  const other = await createSpace(p, `queue-other-${Date.now()}`);
  const elsewhere = await scriptsApi(p, await signIn(p, { role: 'editor', spaces: [other] }), { 'x-space': other });
  const loop = await flooder.create('for (;;) {}');
  const quick = await elsewhere.create('return 1');
  // A run in each space at once starts both workers, so that the flood meets them warm, as it would on a
  // replica that has been running (a worker's cold start is not what this is about).
  const warm = await Promise.all([elsewhere.run(quick), flooder.run(await flooder.create('return 2'))]);
  t.same(
    warm.map((r) => r.body.outcome),
    ['ok', 'ok'],
    'a first run in each space warms the workers',
  );

  const order: string[] = [];
  const flood = Array.from({ length: 16 }, async () => {
    const res = await flooder.api('POST', `/${loop}/run`);
    const body = (await res.json()) as { outcome?: string; code?: string; durationMs?: number };
    order.push(res.status === 200 ? 'ended' : `refused ${res.status}`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
  });
  // Once the refusals are in (they come at once), a run in the other space.
  while (order.length < 16 - 1 - queuePerSpace) await new Promise((r) => setTimeout(r, 20));
  const meanwhile = await elsewhere.run(quick);
  order.push(`elsewhere ${meanwhile.body.outcome}`);
  const answers = await Promise.all(flood);

  const refused = answers.filter((a) => a.status === 503);
  t.equal(refused.length, 16 - 1 - queuePerSpace, 'one runs, four wait, the rest are refused');
  t.ok(
    refused.every((a) => a.body.code === 'overloaded' && a.retryAfter === '1'),
    'each refusal is 503 overloaded with Retry-After',
  );
  t.same(
    order.slice(0, refused.length),
    refused.map(() => 'refused 503'),
    'every refusal is answered before any of the loops has ended',
  );
  t.equal(order[refused.length], 'elsewhere ok', 'and a run in another space answers ok while the loops go on');
  const ran = answers.filter((a) => a.status === 200);
  t.equal(ran.length, 1 + queuePerSpace, 'the running and the queued runs are answered');
  t.ok(
    ran.every((a) => a.body.outcome === 'timeout' && (a.body.durationMs ?? 0) >= deadlineMs - 50),
    `each ends timeout after its whole deadline, counted from when a worker took it (${ran.map((a) => a.body.durationMs).join(', ')} ms)`,
  );
});
