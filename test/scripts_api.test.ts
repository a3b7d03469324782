/**
 * Scripts that run, through the gateway's HTTP API: a run by hand and what it answers, code that does not
 * compile (400 `script_invalid` with line and column), who may do what, the reference's status and summary
 * operations, schedules (a periodic script fires, a run still going makes the next skip, unscheduling
 * stops it, a Once script fires once), the last runs with their logs, a script that reaches for another
 * space's connection, and the live channel's `scripts` topic.
 */
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { until } from '@scada/testkit/live';
import { openSse } from '@scada/testkit/sse';
import { createSpace, signIn } from '@scada/testkit/session';
import { scriptsApi } from '@scada/testkit/scripts';

const p = await startTestPlatform({ SCRIPT_DEADLINE_MS: '1000', SCRIPT_MANUAL_DEADLINE_MS: '1500' });
t.teardown(() => p.stop());

const editor = await signIn(p, { role: 'editor' });
const viewer = await signIn(p, { role: 'viewer' });
const s = await scriptsApi(p, editor);
const asViewer = await scriptsApi(p, viewer).catch(() => null);
const get = async (path: string, who = editor) => {
  const res = await fetch(`${p.url}/api/scripts${path}`, { headers: who.headers });
  return { status: res.status, body: (await res.json()) as any };
};

t.test(`a run by hand (${p.mode})`, async (t) => {
  t.test('answers the outcome, the result, the logs and the duration', async (t) => {
    const r = await s.runCode('ins.log("sum", 1 + 2); return { total: 6 * 7, at: typeof ins.now() }');
    t.match(r, { outcome: 'ok', result: { total: 42, at: 'number' }, logs: ['sum 3'] });
    t.type(r.durationMs, 'number');
    t.notOk('error' in r);
  });

  t.test('a failing script still answers 200, with its error and where it was raised', async (t) => {
    const r = await s.runCode('const x = 1;\nthrow new RangeError("too far: " + x);');
    t.match(r, { outcome: 'error', result: null, error: { name: 'RangeError', message: 'too far: 1', line: 2 } });
    t.ok(r.error!.column! >= 1, `column ${r.error!.column}`);
    const loop = await s.runCode('for (;;) {}');
    t.match(loop, { outcome: 'timeout' }, 'a run by hand stops at its deadline (SCRIPT_MANUAL_DEADLINE_MS) too');
    t.ok(loop.durationMs >= 1490 && loop.durationMs < 2500, `at ${loop.durationMs} ms`);
  });

  t.test('code that does not compile: 400 script_invalid with line and column, at run and at schedule', async (t) => {
    const id = await s.create('const ok = 1;\nconst broken = (;\n', { type: 'Periodic', period: 1000 });
    const run = await s.run(id);
    t.equal(run.status, 400);
    t.match(run.body, { code: 'script_invalid', line: 2, column: 17, errors: [{ path: '/code', message: /^line 2, column 17: / }] });
    const scheduled = await s.api('POST', `/${id}/schedule`);
    t.equal(scheduled.status, 400);
    t.match(await scheduled.json(), { code: 'script_invalid', line: 2 });
    t.equal((await get(`/${id}/status`)).body, 'Not Scheduled', 'and it is not scheduled');
    t.same((await get(`/${id}/runs`)).body.runs, [], 'nothing ran');
  });

  t.test('the state a script keeps is there at its next run, and only its own', async (t) => {
    const counter = await s.create('const n = (ins.state.get() ?? 0) + 1; ins.state.set(n); return n');
    t.equal((await s.run(counter)).body.result, 1);
    t.equal((await s.run(counter)).body.result, 2);
    const other = await s.create('return ins.state.get()');
    t.equal((await s.run(other)).body.result, null, 'another script has its own');
    await s.setCode(counter, 'ins.state.set("x".repeat(70000))');
    t.match((await s.run(counter)).body, { outcome: 'error', error: { name: 'RangeError' } }, 'a state past its limit is refused');
    await s.setCode(counter, 'return ins.state.get()');
    t.equal((await s.run(counter)).body.result, 2, 'and the state before it stays');
  });

  t.test('the last runs, newest first, with their logs when log is on', async (t) => {
    const logged = await s.create('ins.log("run"); return 1', { log: true });
    const quiet = await s.create('ins.log("run"); return 1', { log: false });
    for (const id of [logged, logged, quiet]) t.equal((await s.run(id)).status, 200);
    const runs = (await get(`/${logged}/runs`, viewer)).body;
    t.match(runs, { status: 'Not Scheduled', missed: 0, overlapped: 0 });
    t.equal(runs.runs.length, 2);
    t.match(runs.runs[0], { outcome: 'ok', trigger: 'hand', by: editor.username, logs: ['run'] });
    t.notOk('logs' in (await get(`/${quiet}/runs`)).body.runs[0], 'no logs kept when log is off');
    t.equal((await get(`/${logged}/runs?limit=1`)).body.runs.length, 1);
  });

  t.test('a viewer reads statuses and runs; only an editor runs and schedules', async (t) => {
    const id = await s.create('return 1', { type: 'Periodic', period: 60000 });
    t.equal((await get(`/${id}/status`, viewer)).status, 200);
    t.equal((await get(`/${id}/runs`, viewer)).status, 200);
    for (const action of ['run', 'schedule', 'unschedule']) {
      const res = await fetch(`${p.url}/api/scripts/${id}/${action}`, { method: 'POST', headers: viewer.headers });
      t.equal(res.status, 403, `a viewer may not ${action}`);
    }
    t.ok(asViewer === null, 'nor create a project');
  });

  t.test("another space's script is 404", async (t) => {
    const id = await s.create('return 1');
    const other = await createSpace(p, `scripts-other-${Date.now()}`);
    const stranger = await signIn(p, { role: 'editor', spaces: [other] });
    const headers = { ...stranger.headers, 'x-space': other };
    for (const [method, path] of [
      ['GET', `/${id}/status`],
      ['GET', `/${id}/runs`],
      ['POST', `/${id}/run`],
      ['POST', `/${id}/schedule`],
    ] as const) {
      t.equal((await fetch(`${p.url}/api/scripts${path}`, { method, headers })).status, 404, `${method} ${path}`);
    }
  });
});

t.test(`a script acts in its own space only (${p.mode})`, async (t) => {
  const other = await createSpace(p, `plant-b-${Date.now()}`);
  const there = await signIn(p, { role: 'editor', spaces: [other] });
  const headers = { ...there.headers, 'x-space': other, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'b', isActive: true }) })
  ).json()) as { id: string };
  const made = await fetch(`${p.url}/api/connections`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'b-ied', ip: '127.0.0.1', port: 1, projectId: project.id, protocol: 'IEC 61850' }),
  });
  t.equal(made.status, 201);
  const connectionId = ((await made.json()) as { id: string }).id;
  const r = await s.runCode(
    `const out = [];
     for (const call of [() => ins.write(${JSON.stringify(connectionId)}, "LD0/GGIO1.NamPlt.vendor[DC]", "x"),
                         () => ins.operate(${JSON.stringify(connectionId)}, "LD0/GGIO1.SPCSO1", true),
                         () => ins.read(${JSON.stringify(connectionId)}, "LD0/GGIO1.Ind1.stVal[ST]"),
                         () => ins.values(${JSON.stringify(connectionId)})]) {
       try { await call(); out.push("reached") } catch (e) { out.push(e.status + " " + e.code) }
     }
     return out`,
  );
  t.same(r.result, ['404 not_found', '404 not_found', '404 not_found', '404 not_found'], "another space's connection is 404 to a script");
  const log = (await (await fetch(`${p.url}/api/connections/${connectionId}/control-log`, { headers })).json()) as { content: unknown[] };
  t.same(log.content, [], 'and its control log holds nothing');
});

t.test(`the reference's status and summary operations (${p.mode})`, async (t) => {
  const a = await s.create('return 1', { type: 'Periodic', period: 60000, dsc: 'every minute' });
  const b = await s.create('return 2', { type: 'None' });
  t.equal((await s.api('POST', `/${a}/schedule`)).status, 204);
  t.equal((await s.api('POST', `/${a}/schedule`)).status, 204, 'scheduling a scheduled script changes nothing');
  t.equal((await get(`/${a}/status`)).body, 'Scheduled');
  t.equal((await get(`/${b}/status`)).body, 'Not Scheduled');
  const missing = '00000000-0000-4000-8000-000000000000';
  t.same((await get(`/status/by-ids?scriptIds=${a}&scriptIds=${b.toUpperCase()}&scriptIds=${missing}`, viewer)).body, {
    [a]: 'Scheduled',
    [b]: 'Not Scheduled',
  });
  const summary = (await get('/summary', viewer)).body as Record<string, unknown>[];
  const mine = summary.find((x) => x.id === a);
  t.match(mine, { id: a, type: 'Periodic', dsc: 'every minute', log: true, projectId: s.projectId });
  for (const field of ['code', 'period', 'delay', 'time', 'offset']) t.notOk(field in mine!, `the summary leaves ${field} out`);
  const byProject = (await get(`/summary/by-project?projectId=${s.projectId}`)).body as { id: string }[];
  t.ok(byProject.some((x) => x.id === a) && byProject.some((x) => x.id === b));
  t.equal((await get(`/summary/by-project?projectId=${missing}`)).status, 404);
  const status = (await (await fetch(`${p.url}/api/projects/${s.projectId}/status`, { headers: editor.headers })).json()) as any;
  t.equal(status.scriptStatuses[a], 'Scheduled', "the project's status says so too");
  t.equal((await s.api('POST', `/${b}/schedule`)).status, 409, 'a None script runs only by hand');
  const noPeriod = await s.create('return 1', { type: 'Daily' });
  t.match(await (await s.api('POST', `/${noPeriod}/schedule`)).json(), { code: 'conflict', detail: /needs a time/ });
  const past = await s.create('return 1', { type: 'Once', time: '2020-01-01T00:00:00Z' });
  t.match(await (await s.api('POST', `/${past}/schedule`)).json(), { code: 'conflict', detail: /has passed/ });
  t.equal((await s.api('POST', `/${a}/unschedule`)).status, 204);
  t.equal((await get(`/${a}/status`)).body, 'Not Scheduled');
});

/** Whether each run started after the one before it ended. */
function neverTwoAtOnce(runs: { startedAt: string; durationMs: number }[]): boolean {
  const sorted = [...runs].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
  return sorted.every((r, i) => i === 0 || Date.parse(r.startedAt) >= Date.parse(sorted[i - 1]!.startedAt) + sorted[i - 1]!.durationMs - 1);
}

t.test(`schedules (${p.mode})`, async (t) => {
  t.test('a periodic script fires on its period; unscheduled, it fires no more', async (t) => {
    const id = await s.create('return ins.now()', { type: 'Periodic', period: 200 });
    t.equal((await s.api('POST', `/${id}/schedule`)).status, 204);
    const runs = await until('five runs', async () => {
      const body = (await get(`/${id}/runs?limit=100`)).body;
      return body.runs.length >= 5 && body;
    });
    t.ok(runs.runs.every((r: { trigger: string; outcome: string }) => r.trigger === 'schedule' && r.outcome === 'ok'));
    t.ok(neverTwoAtOnce(runs.runs), 'never two at once: each run starts after the one before ended');
    t.equal((await s.api('POST', `/${id}/unschedule`)).status, 204);
    // A run under way when the unschedule is answered ends and is recorded after it; none starts after it.
    // Runs are recorded in batches, so the look is taken after several periods and batches.
    const unscheduled = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    const after = (await get(`/${id}/runs?limit=100`)).body.runs.filter(
      (r: { startedAt: string }) => Date.parse(r.startedAt) > unscheduled,
    );
    t.same(after, [], 'no run after the unschedule');
  });

  t.test('a run still going when the next is due makes that one skip, counted', async (t) => {
    const id = await s.create('const end = Date.now() + 450; while (Date.now() < end) {} return 1', { type: 'Periodic', period: 150 });
    t.equal((await s.api('POST', `/${id}/schedule`)).status, 204);
    const body = await until('skipped runs', async () => {
      const b = (await get(`/${id}/runs?limit=100`)).body;
      return b.runs.length >= 2 && b.overlapped >= 2 && b;
    });
    t.ok(body.overlapped >= 2, `${body.overlapped} skipped for overlap`);
    t.ok(neverTwoAtOnce(body.runs), 'runs never overlap');
    const starts = body.runs.map((r: { startedAt: string }) => Date.parse(r.startedAt)).sort((a: number, b: number) => a - b);
    const span = starts.at(-1) - starts[0];
    t.ok(starts.length <= Math.floor(span / 450) + 2, `skipped ones are not made up (${starts.length} runs in ${span} ms)`);
    await s.api('POST', `/${id}/unschedule`);
  });

  t.test('a changed code takes effect at the next run', async (t) => {
    const id = await s.create('return "old"', { type: 'Periodic', period: 200 });
    await s.api('POST', `/${id}/schedule`);
    await until('an old run', async () => (await get(`/${id}/runs`)).body.runs.length > 0);
    await s.setCode(id, 'return "new"; // changed');
    await s.setCode(id, 'ins.log("new"); return 1');
    const body = await until('a new run', async () => {
      const b = (await get(`/${id}/runs`)).body;
      return b.runs[0]?.logs?.[0] === 'new' && b;
    });
    t.equal(body.runs[0].logs[0], 'new');
    await s.api('POST', `/${id}/unschedule`);
  });

  t.test('a Once script fires once at its time, then is no longer scheduled', async (t) => {
    const id = await s.create('ins.log("once"); return 1', { type: 'Once', time: new Date(Date.now() + 700).toISOString() });
    t.equal((await s.api('POST', `/${id}/schedule`)).status, 204);
    await until('the run', async () => (await get(`/${id}/runs`)).body.runs.length === 1);
    await until('not scheduled', async () => (await get(`/${id}/status`)).body === 'Not Scheduled');
    await new Promise((r) => setTimeout(r, 500));
    t.equal((await get(`/${id}/runs`)).body.runs.length, 1, 'it fired once');
  });

  t.test('a deleted script fires no more', async (t) => {
    const id = await s.create('return 1', { type: 'Periodic', period: 200 });
    await s.api('POST', `/${id}/schedule`);
    await until('a run', async () => (await get(`/${id}/runs`)).body.runs.length > 0);
    t.equal((await s.api('DELETE', `/${id}`)).status, 204);
    t.equal((await get(`/${id}/status`)).status, 404);
    await new Promise((r) => setTimeout(r, 800));
    t.notOk(
      p.logs.some((l) => l.msg === 'a scheduled run failed'),
      'and nothing failed on the way',
    );
  });
});

t.test(`the live channel's scripts topic (${p.mode})`, async (t) => {
  const stream = await openSse(`${p.url}/api/live?topics=scripts`, editor.headers);
  t.teardown(() => stream.close());
  t.equal(stream.res.status, 200);
  const id = await s.create('throw new Error("x")');
  t.equal((await s.run(id)).status, 200);
  const event = await stream.wait((e) => 'event' in e && e.event === 'script');
  t.match('data' in event && event.data, { scriptId: id, outcome: 'error' });
  t.type('data' in event && (event.data as { durationMs: unknown }).durationMs, 'number');
});
