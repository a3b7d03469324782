/**
 * What the alarm screens ask of the API beyond the lifecycle (`alarms_device.test.ts`): the journal
 * filtered by group, priority, state and text, in JSON and CSV, with bad filters answered 400; and the
 * shelving limit a client offers its choices within (`GET /api/alarms/settings`).
 */
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { signIn, type SignedIn } from '@scada/testkit/session';

const D = 'SIMLD0';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({ ALARM_SHELVE_MAX_MINUTES: '90' });
t.teardown(() => p.stop());

const editor = await signIn(p, { role: 'editor' });
const operator = await signIn(p, { role: 'operator' });
const viewer = await signIn(p, { role: 'viewer' });

async function api(who: SignedIn, method: string, path: string, body?: unknown) {
  const res = await fetch(`${p.url}${path}`, {
    method,
    headers: { ...who.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // CSV
  }
  return { status: res.status, body: parsed, type: res.headers.get('content-type') };
}

const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL, editor });
const projectId = ((await (await c.api('GET', '')).json()) as { projectId: string }).projectId;
const groupOf = async (name: string) =>
  (await api(editor, 'POST', '/api/alarm-groups', { name, projectId, minPriority: 1, maxPriority: 100 })).body.id as string;
const bay1 = await groupOf('Bay 1');
const bay2 = await groupOf('Bay 2');
const define = async (body: Record<string, unknown>) => {
  const res = await api(editor, 'POST', '/api/alarm-definitions', { connectionId: c.id, type: 'state', alarmWhen: true, ...body });
  if (res.status !== 200) throw new Error(`definition: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const breaker = await define({
  name: 'Breaker',
  groupId: bay1,
  reference: `${D}/GGIO1.Ind1.stVal[ST]`,
  priority: 5,
  message: 'Breaker tripped',
});
const door = await define({
  name: 'Door',
  groupId: bay2,
  reference: `${D}/GGIO1.SPCSO1.stVal[ST]`,
  priority: 40,
  message: 'Cabinet door open',
});

await c.connect();
const enabled = await c.api('POST', '/reports', { rcb: `${D}/LLN0$BR$brcb`, triggers: ['dchg'] });
if (enabled.status !== 204) throw new Error(`enabling reports answered ${enabled.status}: ${await enabled.text()}`);

const journal = async (query: string) => (await api(viewer, 'GET', `/api/alarms/journal?limit=1000&${query}`)).body.rows as any[];
const waitFor = (alarmId: string, to: string) =>
  until(`${alarmId} ${to}`, async () => (await journal(`alarmId=${alarmId}`)).some((r) => r.to === to));

t.test('two alarms raised at the device; one acknowledged with a comment and cleared', async (t) => {
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
  sim.setValue(`${D}/GGIO1$ST$SPCSO1$stVal`, { type: 'boolean', value: true });
  await waitFor(breaker, 'unacknowledged');
  await waitFor(door, 'unacknowledged');
  t.equal((await api(operator, 'POST', `/api/alarms/${breaker}/ack`, { comment: 'Crew 100% on_site' })).status, 200);
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: false });
  await waitFor(breaker, 'normal');
});

t.test('the journal filtered by group, priority, state and text', async (t) => {
  const ids = (rows: any[]) => [...new Set(rows.map((r) => r.alarmId))].sort();
  t.same(ids(await journal(`groupId=${bay1}`)), [breaker], 'by group');
  t.same(ids(await journal(`groupId=${bay2.toUpperCase()}`)), [door], 'a group id in capitals is the same group');
  t.same(ids(await journal('priority=5')), [breaker], 'by priority: this one or a more urgent one');
  t.same(ids(await journal('priority=40')), [breaker, door].sort(), 'both within 40');
  t.same(
    (await journal('state=acknowledged')).map((r) => [r.alarmId, r.from, r.to, r.by, r.comment]),
    [[breaker, 'unacknowledged', 'acknowledged', operator.username, 'Crew 100% on_site']],
    'by the state a transition went into',
  );
  t.same(ids(await journal('text=CABINET')), [door], "text in the alarm's message, in any case");
  t.same(ids(await journal('text=breaker')), [breaker], "text in the alarm's name");
  t.same(
    (await journal('text=100%25 on_')).map((r) => r.to),
    ['acknowledged'],
    'text in a comment, % and _ taken as themselves',
  );
  t.same(await journal('text=100%25%25'), [], 'a % matches only a %');
  t.same(
    (await journal(`text=${encodeURIComponent(operator.username)}`)).map((r) => r.to),
    ['acknowledged'],
    'text in the user',
  );
  t.same(await journal(`groupId=${bay2}&state=normal`), [], 'filters combine');

  const csv = await api(viewer, 'GET', `/api/alarms/journal?format=csv&groupId=${bay1}&state=normal`);
  t.equal(csv.status, 200);
  t.match(csv.type, /^text\/csv/);
  const lines = String(csv.body).trim().split('\r\n');
  t.equal(lines[0], 'seq,alarmId,from,to,at,by,value,comment');
  t.equal(lines.length, 2, 'the CSV holds what the filters hold');
  t.match(lines[1], new RegExp(`,${breaker},acknowledged,normal,`));
});

t.test('bad filters of the journal are 400 naming the parameter', async (t) => {
  for (const [query, name] of [
    ['groupId=bay-1', 'groupId'],
    ['priority=0', 'priority'],
    ['priority=256', 'priority'],
    ['priority=high', 'priority'],
    ['state=raised', 'state'],
    ['text=', 'text'],
    [`text=${'x'.repeat(201)}`, 'text'],
    ['text=a%00b', 'text'],
    ['format=xml', 'format'],
  ]) {
    const res = await api(viewer, 'GET', `/api/alarms/journal?${query}`);
    t.equal(res.status, 400, query);
    t.match(JSON.stringify(res.body.errors ?? res.body.detail), name, `${query} names ${name}`);
  }
});

t.test('the shelving limit is told, and enforced as told', async (t) => {
  const settings = await api(viewer, 'GET', '/api/alarms/settings');
  t.equal(settings.status, 200);
  t.same(settings.body, { shelveMaxMinutes: 90 }, 'ALARM_SHELVE_MAX_MINUTES as set');
  t.equal((await api(viewer, 'GET', '/api/alarms/settings?x=1')).status, 400, 'it takes no parameter');
  t.equal((await api(operator, 'POST', `/api/alarms/${door}/shelve`, { minutes: 91, reason: 'work' })).status, 400);
  const shelved = await api(operator, 'POST', `/api/alarms/${door}/shelve`, { minutes: 90, reason: 'work' });
  t.equal(shelved.status, 200);
  t.equal(shelved.body.state, 'shelved');
  const anonymous = await fetch(`${p.url}/api/alarms/settings`);
  t.equal(anonymous.status, 401, 'only for a signed-in user');
});
