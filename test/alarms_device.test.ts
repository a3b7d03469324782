/**
 * Alarms on a device's values, end to end: the IEC 61850 simulator reports, the protocol service holding
 * the connection evaluates, and an operator follows on `/api/live` (topic `alarms`) and acts through the
 * API. The whole ISA-18.2 lifecycle table, acknowledgement with a comment (one and several), shelving
 * with a reason and its expiry (the shelf's end moved into the past in the store, as the clock passing it
 * would), out of service and back, deadband and on-delay chatter suppressed, the append-only journal
 * (JSON and CSV), the project status's alarm groups, roles and another space.
 */
import t from 'tap';
import { utcTimeFromMs } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { createSpace, signIn, type SignedIn } from '@scada/testkit/session';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const D = 'SIMLD0';
const BRCB = `${D}/LLN0$BR$brcb`;

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '300' });
t.teardown(() => p.stop());

const editor = await signIn(p, { role: 'editor' });
const operator = await signIn(p, { role: 'operator' });
const viewer = await signIn(p, { role: 'viewer' });

async function api(who: SignedIn, method: string, path: string, body?: unknown, space?: string) {
  const res = await fetch(`${p.url}${path}`, {
    method,
    headers: {
      ...who.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(space ? { 'x-space': space } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // CSV
  }
  return { status: res.status, body: parsed, type: res.headers.get('content-type') } as { status: number; body: any; type: string | null };
}

const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL, editor });
const projectId = ((await (await c.api('GET', '')).json()) as { projectId: string }).projectId;
const group = (await api(editor, 'POST', '/api/alarm-groups', { name: 'Bay 1', projectId, minPriority: 1, maxPriority: 100 })).body;
const define = async (body: Record<string, unknown>) => {
  const res = await api(editor, 'POST', '/api/alarm-definitions', {
    groupId: group.id,
    connectionId: c.id,
    message: `${body.name}!`,
    ...body,
  });
  if (res.status !== 200) throw new Error(`definition ${String(body.name)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const breaker = await define({ name: 'Breaker', reference: `${D}/GGIO1.Ind1.stVal[ST]`, type: 'state', alarmWhen: true, priority: 5 });
const load = await define({
  name: 'Load',
  reference: `${D}/GGIO1.AnIn1.mag.f[MX]`,
  type: 'analog',
  h: 80,
  l: 10,
  deadband: 5,
  priority: 20,
});
const slow = await define({
  name: 'Slow',
  reference: `${D}/GGIO1.AnIn1.mag.f[MX]`,
  type: 'analog',
  hh: 95,
  onDelayMs: 60_000,
  priority: 30,
});

const stream = await openSse(`${p.url}/api/live?connections=${c.id}&topics=alarms`, viewer.headers);
t.teardown(() => stream.close());
await stream.wait(isEvent('snapshot'));

await c.connect();
const enabled = await c.api('POST', '/reports', { rcb: BRCB, triggers: ['dchg'], optionalFields: ['sequence-number', 'entry-id'] });
t.equal(enabled.status, 204, await enabled.text());

type Transition = {
  alarmId: string;
  from: string;
  to: string;
  by: string | null;
  comment: string | null;
  value: unknown;
  priority: number;
};
const transitions = (alarmId: string) =>
  stream.events.flatMap((e: SseEvent) =>
    'event' in e && e.event === 'alarm' && (e.data as Transition).alarmId === alarmId ? [e.data as Transition] : [],
  );
/** Waits for the alarm's next transition to `to` after the `seen` it had. */
async function next(alarmId: string, to: string, seen: number): Promise<Transition> {
  await until(`${alarmId} to ${to}`, async () => transitions(alarmId).length > seen, 15_000);
  const got = transitions(alarmId)[seen]!;
  if (got.to !== to) throw new Error(`expected ${to}, got ${JSON.stringify(got)}`);
  return got;
}
const setBreaker = (on: boolean) => sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: on });
const q = sim.value(`${D}/GGIO1$MX$AnIn1$q`);
const setLoad = (f: number) =>
  sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
    type: 'structure',
    value: [
      { type: 'structure', value: [{ type: 'float', value: f, double: false }] },
      q,
      { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
    ],
  });
const state = async (alarmId: string) => {
  const active = (await api(viewer, 'GET', '/api/alarms/active')).body as { alarmId: string; state: string }[];
  return active.find((a) => a.alarmId === alarmId)?.state ?? 'normal';
};

t.test('the lifecycle: raised, acknowledged, cleared; cleared unacknowledged, acknowledged', async (t) => {
  setBreaker(true);
  const raised = await next(breaker, 'unacknowledged', 0);
  t.match(raised, { from: 'normal', by: null, value: true, priority: 5, connectionId: c.id, groupId: group.id, projectId });
  const active = (await api(viewer, 'GET', '/api/alarms/active')).body;
  t.match(active, [{ alarmId: breaker, state: 'unacknowledged', active: true, message: 'Breaker!', priority: 5 }]);

  t.equal((await api(viewer, 'POST', `/api/alarms/${breaker}/ack`, {})).status, 403, 'a viewer does not acknowledge');
  const acked = await api(operator, 'POST', `/api/alarms/${breaker}/ack`, { comment: 'crew sent' });
  t.equal(acked.status, 200);
  t.match(acked.body, { state: 'acknowledged', active: true, by: operator.username });
  t.match(await next(breaker, 'acknowledged', 1), { from: 'unacknowledged', by: operator.username, comment: 'crew sent' });
  const again = await api(operator, 'POST', `/api/alarms/${breaker}/ack`, {});
  t.equal(again.status, 409, 'an acknowledged alarm is not acknowledged again');
  t.match(again.body.detail, /acknowledged cannot be acknowledged/);

  setBreaker(false);
  t.match(await next(breaker, 'normal', 2), { from: 'acknowledged', by: null, value: false });
  t.equal(await state(breaker), 'normal', 'a normal alarm leaves the active list');

  setBreaker(true);
  await next(breaker, 'unacknowledged', 3);
  setBreaker(false);
  t.match(await next(breaker, 'rtn_unacknowledged', 4), { from: 'unacknowledged' });
  t.equal(await state(breaker), 'rtn_unacknowledged', 'returned to normal, it waits for its acknowledgement');
  setBreaker(true);
  t.match(await next(breaker, 'unacknowledged', 5), { from: 'rtn_unacknowledged' }, 'and comes back unacknowledged');
  setBreaker(false);
  await next(breaker, 'rtn_unacknowledged', 6);
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/ack`, {})).body.state, 'normal', 'acknowledged, it is normal');
  t.match(await next(breaker, 'normal', 7), { from: 'rtn_unacknowledged', comment: null });
});

t.test('deadband and on-delay: a value wandering around a limit raises and clears once', async (t) => {
  setLoad(50);
  setLoad(81);
  t.match(await next(load, 'unacknowledged', 0), { value: 81 });
  for (const f of [79, 76, 80.5, 77, 81, 75.5]) setLoad(f);
  setLoad(74);
  t.match(await next(load, 'rtn_unacknowledged', 1), { value: 74 }, 'it clears only 5 below the limit');
  setLoad(96);
  setLoad(90);
  setLoad(9);
  await next(load, 'unacknowledged', 2);
  t.same(
    transitions(load).map((x) => x.to),
    ['unacknowledged', 'rtn_unacknowledged', 'unacknowledged'],
    'nothing in between: the values inside the deadband changed nothing',
  );
  t.same(transitions(slow), [], 'a condition that went within its on-delay raised nothing');

  setLoad(97);
  await until('the on-delay to start', async () => {
    const { rows } = await p.proc.store!.query<{ pending: boolean }>(
      'select pending_since is not null as pending from protocol.alarm_states where alarm_id = $1',
      [slow],
    );
    return rows[0]?.pending;
  });
  t.same(transitions(slow), [], 'pending while the on-delay runs');
  // A minute passes for the evaluator: its on-delay began a minute ago.
  await p.proc.store!.query(`update protocol.alarm_states set pending_since = pending_since - interval '61 seconds' where alarm_id = $1`, [
    slow,
  ]);
  t.match(await next(slow, 'unacknowledged', 0), { value: 97, priority: 30 }, 'held for the whole delay, it raises');
  setLoad(50);
  await next(slow, 'rtn_unacknowledged', 1);
  await next(load, 'rtn_unacknowledged', 3);
});

t.test('shelving: for a limited time with a reason, back unacknowledged when the shelf expires while still active', async (t) => {
  const seen = transitions(breaker).length;
  setBreaker(true);
  await next(breaker, 'unacknowledged', seen);
  t.equal((await api(viewer, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 10, reason: 'r' })).status, 403);
  const tooLong = await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 481, reason: 'maintenance' });
  t.equal(tooLong.status, 400, 'longer than ALARM_SHELVE_MAX_MINUTES is 400');
  t.match(tooLong.body.detail, /at most 480 minutes/);
  for (const body of [
    { minutes: 10 },
    { minutes: 0, reason: 'x' },
    { minutes: 10, reason: '' },
    { minutes: 1.5, reason: 'x' },
    { minutes: 10, reason: 'x', extra: 1 },
  ]) {
    t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, body)).status, 400, JSON.stringify(body));
  }
  const shelved = await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 30, reason: 'maintenance on bay 1' });
  t.equal(shelved.status, 200);
  t.match(shelved.body, { state: 'shelved', shelveReason: 'maintenance on bay 1' });
  const until30 = Date.parse(shelved.body.shelvedUntil) - Date.now();
  t.ok(until30 > 29 * 60_000 && until30 <= 30 * 60_000, 'shelved for 30 minutes');
  t.match(await next(breaker, 'shelved', seen + 1), { from: 'unacknowledged', comment: 'maintenance on bay 1', by: operator.username });
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 5, reason: 'again' })).status, 409);
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/ack`, {})).status, 409, 'a shelved alarm is not acknowledged');

  // The condition goes and comes while shelved: nothing is raised, the state stays.
  // Each value is waited for in turn: the condition already held when shelved, so a wait for `true` alone
  // could pass before the reports of the change arrive, and they would then land after the shelf's end.
  const valueSeen = (v: boolean) =>
    until(`the value ${v} seen while shelved`, async () => {
      const { rows } = await p.proc.store!.query<{ v: unknown }>('select value as v from protocol.alarm_states where alarm_id = $1', [
        breaker,
      ]);
      return rows[0]?.v === v;
    });
  setBreaker(false);
  await valueSeen(false);
  setBreaker(true);
  await valueSeen(true);
  t.equal(transitions(breaker).length, seen + 2, 'no transition while shelved');

  // Thirty minutes pass: the shelf's end is now in the past.
  await p.proc.store!.query(`update protocol.alarm_states set shelved_until = now() - interval '1 second' where alarm_id = $1`, [breaker]);
  t.match(await next(breaker, 'unacknowledged', seen + 2), { from: 'shelved', by: null }, 'back unacknowledged: still active');

  // Shelved while normal, it expires to normal; unshelved by hand likewise.
  await api(operator, 'POST', `/api/alarms/${breaker}/ack`, {});
  setBreaker(false);
  await next(breaker, 'normal', seen + 4);
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 1, reason: 'test' })).status, 200);
  const off = await api(operator, 'POST', `/api/alarms/${breaker}/unshelve`, {});
  t.match(off.body, { state: 'normal', shelvedUntil: null });
  t.equal(
    (await api(operator, 'POST', `/api/alarms/${breaker}/unshelve`, {})).status,
    409,
    'an alarm that is not shelved is not unshelved',
  );
  // The stream has both: the next test counts from here.
  await next(breaker, 'shelved', seen + 5);
  await next(breaker, 'normal', seen + 6);
});

t.test('out of service by an editor, back in service as what it is then', async (t) => {
  const seen = transitions(breaker).length;
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/out-of-service`, {})).status, 403, 'an operator may not');
  const out = await api(editor, 'POST', `/api/alarms/${breaker}/out-of-service`, { comment: 'sensor replaced' });
  t.equal(out.status, 200);
  t.equal(out.body.state, 'out_of_service');
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 5, reason: 'x' })).status, 409);
  setBreaker(true);
  await until('the value seen out of service', async () => {
    const { rows } = await p.proc.store!.query<{ a: boolean }>('select active as a from protocol.alarm_states where alarm_id = $1', [
      breaker,
    ]);
    return rows[0]?.a === true;
  });
  const back = await api(editor, 'POST', `/api/alarms/${breaker}/in-service`, {});
  t.match(back.body, { state: 'unacknowledged', active: true }, 'its condition holds: unacknowledged');
  await next(breaker, 'unacknowledged', seen + 1);
  t.same(
    transitions(breaker)
      .slice(seen)
      .map((x) => [x.from, x.to]),
    [
      ['normal', 'out_of_service'],
      ['out_of_service', 'unacknowledged'],
    ],
  );
  t.equal((await api(editor, 'POST', `/api/alarms/${breaker}/in-service`, {})).status, 409);
});

t.test('the active list sorts and filters; the bulk acknowledgement; the project status', async (t) => {
  setLoad(85);
  await until('load raised', async () => (await state(load)) === 'unacknowledged');
  const active = (await api(viewer, 'GET', '/api/alarms/active')).body as { alarmId: string; priority: number }[];
  t.same(
    active.map((a) => a.priority),
    [...active.map((a) => a.priority)].sort((x, y) => x - y),
    'by priority',
  );
  t.same(
    (await api(viewer, 'GET', '/api/alarms/active?priority=10')).body.map((a: { alarmId: string }) => a.alarmId),
    [breaker],
  );
  t.same((await api(viewer, 'GET', `/api/alarms/active?groupId=${group.id}&state=unacknowledged`)).body.length, 2);
  t.same((await api(viewer, 'GET', '/api/alarms/active?projectId=00000000-0000-4000-8000-000000000000')).body, []);
  t.equal((await api(viewer, 'GET', '/api/alarms/active?state=loud')).status, 400);
  t.equal((await api(viewer, 'GET', '/api/alarms/active?priority=0')).status, 400);

  const status = (await api(viewer, 'GET', `/api/projects/${projectId}/status`)).body;
  t.same(status.alarmGroupStatuses, { [group.id]: 'Active' }, 'a group with an alarm that is not normal is Active');

  const unknown = '00000000-0000-4000-8000-000000000000';
  const refused = await api(operator, 'POST', '/api/alarms/ack', { alarmIds: [breaker, unknown] });
  t.equal(refused.status, 404, 'an unknown id: 404, nothing acknowledged');
  t.equal(await state(breaker), 'unacknowledged');
  const bulk = await api(operator, 'POST', '/api/alarms/ack', { alarmIds: [breaker, load, slow], comment: 'all seen' });
  t.equal(bulk.status, 200);
  t.same(bulk.body.acknowledged.map((a: { alarmId: string }) => a.alarmId).sort(), [breaker, load, slow].sort());
  t.match(bulk.body.acknowledged, [{ comment: undefined }], 'each acknowledged');
  t.same(bulk.body.skipped, []);
  const twice = await api(operator, 'POST', '/api/alarms/ack', { alarmIds: [breaker, slow] });
  t.same(
    twice.body,
    {
      acknowledged: [],
      skipped: [
        { alarmId: breaker, state: 'acknowledged' },
        { alarmId: slow, state: 'normal' },
      ],
    },
    'what waits for no acknowledgement is skipped',
  );
  t.equal((await api(operator, 'POST', '/api/alarms/ack', { alarmIds: [] })).status, 400);

  setBreaker(false);
  setLoad(50);
  await until('all normal', async () => (await api(viewer, 'GET', '/api/alarms/active')).body.length === 0);
  // A transition is on the stream once it is stored: the next test compares the two.
  const stored = (await api(viewer, 'GET', `/api/alarms/journal?alarmId=${breaker}&limit=1000`)).body.rows.length;
  await until('the stream has every stored transition', async () => transitions(breaker).length >= stored);
  t.same((await api(viewer, 'GET', `/api/projects/${projectId}/status`)).body.alarmGroupStatuses, { [group.id]: 'Not Active' });
});

t.test('the journal: every transition once, in order, paged, as CSV', async (t) => {
  const all = (await api(viewer, 'GET', `/api/alarms/journal?alarmId=${breaker}&limit=1000`)).body;
  t.equal(all.next, null);
  t.same(
    all.rows.map((r: { from: string; to: string }) => [r.from, r.to]),
    transitions(breaker).map((x) => [x.from, x.to]),
    'the journal and the live stream tell the same transitions',
  );
  t.match(all.rows[1], { to: 'acknowledged', by: operator.username, comment: 'crew sent' });
  const live = stream.events.flatMap((e: SseEvent) =>
    'event' in e && e.event === 'alarm' && (e.data as Transition).alarmId === breaker ? [(e.data as { at: string }).at] : [],
  );
  t.same(
    live,
    all.rows.map((r: { at: string }) => r.at),
    'each event says when its transition happened, as its journal row',
  );
  const first = (await api(viewer, 'GET', '/api/alarms/journal?limit=2')).body;
  t.equal(first.rows.length, 2);
  const second = (await api(viewer, 'GET', `/api/alarms/journal?limit=2&after=${first.next}`)).body;
  t.ok(BigInt(second.rows[0].seq) > BigInt(first.rows[1].seq), 'the next page goes on after the cursor');
  const future = (await api(viewer, 'GET', '/api/alarms/journal?from=2999-01-01T00:00:00Z')).body;
  t.same(future.rows, []);
  t.equal((await api(viewer, 'GET', '/api/alarms/journal?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z')).status, 400);
  t.equal((await api(viewer, 'GET', '/api/alarms/journal?limit=1001')).status, 400);
  t.equal((await api(viewer, 'GET', '/api/alarms/journal?from=yesterday')).status, 400);

  const csv = await api(viewer, 'GET', `/api/alarms/journal?alarmId=${breaker}&format=csv&limit=1000`);
  t.equal(csv.status, 200);
  t.match(csv.type, /^text\/csv/);
  const lines = String(csv.body).trim().split('\r\n');
  t.equal(lines[0], 'seq,alarmId,from,to,at,by,value,comment');
  t.equal(lines.length, all.rows.length + 1);
  t.match(lines[2], new RegExp(`,${breaker},unacknowledged,acknowledged,.*,${operator.username},true,crew sent$`));
});

t.test('quality and stale alarms', async (t) => {
  const quality = await define({ name: 'Quality', reference: `${D}/GGIO1.AnIn1[MX]`, type: 'quality', priority: 40 });
  const stale = await define({ name: 'Silent', reference: `${D}/GGIO1.AnIn1.mag.f[MX]`, type: 'stale', staleSeconds: 60, priority: 41 });
  const invalid = { type: 'bit-string', value: { bitLength: 13, bytes: Uint8Array.of(0x40, 0) } } as const;
  const withQuality = (f: number, quality: unknown) =>
    sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value: f, double: false }] },
        quality as never,
        { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      ],
    });
  // Each definition taken up before the values that test it: the first value after it changes the row.
  await until('the definitions taken up', async () => {
    withQuality(41, q);
    await new Promise((r) => setTimeout(r, 200));
    const { rows } = await p.proc.store!.query<{ n: number }>(
      'select count(*)::int as n from protocol.alarm_states where alarm_id = any($1::uuid[]) and last_value_at is not null',
      [[quality, stale]],
    );
    return rows[0]?.n === 2;
  });
  withQuality(42, invalid);
  t.match(await next(quality, 'unacknowledged', 0), { from: 'normal', priority: 40 }, 'an invalid value raises the quality alarm');
  withQuality(43, q);
  t.match(await next(quality, 'rtn_unacknowledged', 1), { from: 'unacknowledged' }, 'a good one clears it');

  t.same(transitions(stale), [], 'values keep coming: not stale');
  // A minute passes without a value for the evaluator: the last one arrived 61 s ago.
  await p.proc.store!.query(`update protocol.alarm_states set last_value_at = last_value_at - interval '61 seconds' where alarm_id = $1`, [
    stale,
  ]);
  t.match(await next(stale, 'unacknowledged', 0), { from: 'normal', priority: 41 }, 'no value for staleSeconds raises the stale alarm');
  setLoad(44);
  t.match(await next(stale, 'rtn_unacknowledged', 1), { value: 44 }, 'the next value clears it');
  const bulk = await api(operator, 'POST', '/api/alarms/ack', { alarmIds: [quality, stale] });
  t.equal(bulk.body.acknowledged.length, 2);
});

t.test('a value read from the device is evaluated as a reported one', async (t) => {
  // SPCSO2 is in no data set: only a read brings its value.
  const reference = `${D}/GGIO1.SPCSO2.stVal[ST]`;
  const switched = await define({ name: 'Switch', reference, type: 'state', alarmWhen: true, priority: 50 });
  const setSwitch = (on: boolean) => sim.setValue(`${D}/GGIO1$ST$SPCSO2$stVal`, { type: 'boolean', value: on });
  setSwitch(true);
  await until('raised by a read', async () => {
    t.equal((await c.api('POST', '/read', { references: [reference] })).status, 200);
    return transitions(switched).length > 0;
  });
  t.match(transitions(switched)[0], { from: 'normal', to: 'unacknowledged', value: true }, 'raised by the read');
  await api(operator, 'POST', `/api/alarms/${switched}/ack`, {});
  setSwitch(false);
  await c.api('POST', '/read', { references: [reference] });
  t.match(await next(switched, 'normal', 2), { from: 'acknowledged', value: false }, 'cleared by the next');
});

t.test('another space sees none of it and acts on none of it', async (t) => {
  const other = await createSpace(p, 'other plant');
  const outsider = await signIn(p, { role: 'editor', spaces: [other] });
  setBreaker(true);
  await until('raised', async () => (await state(breaker)) === 'unacknowledged');
  t.same((await api(outsider, 'GET', '/api/alarms/active', undefined, other)).body, []);
  t.same((await api(outsider, 'GET', '/api/alarms/journal', undefined, other)).body.rows, []);
  for (const action of ['ack', 'unshelve', 'out-of-service', 'in-service']) {
    t.equal((await api(outsider, 'POST', `/api/alarms/${breaker}/${action}`, {}, other)).status, 404, action);
  }
  t.equal((await api(outsider, 'POST', `/api/alarms/${breaker}/shelve`, { minutes: 1, reason: 'x' }, other)).status, 404);
  t.equal((await api(outsider, 'POST', '/api/alarms/ack', { alarmIds: [breaker] }, other)).status, 404);
  t.equal(await state(breaker), 'unacknowledged', 'still as it was');
  const theirs = await openSse(`${p.url}/api/live?space=${other}&topics=alarms`, outsider.headers);
  t.teardown(() => theirs.close());
  await theirs.wait(isEvent('snapshot'));
  await api(operator, 'POST', `/api/alarms/${breaker}/ack`, {});
  setBreaker(false);
  await until('normal', async () => (await state(breaker)) === 'normal');
  t.same(
    theirs.events.filter((e) => 'event' in e && e.event === 'alarm'),
    [],
    "no alarm event of this space on another space's stream",
  );
  t.equal((await c.api('POST', '/stop')).status, 204);
});
