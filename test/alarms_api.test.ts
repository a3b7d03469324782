/**
 * Alarm definitions through the gateway: alarm groups in a project with their priority range, alarms on a
 * connection's data attribute, each checked beyond its schema (limits in order, the fields of its type,
 * a priority in its group's range, a reference the connection's SCL model holds) with a 400 naming the
 * reason; nothing half-stored; another space's definitions are 404; the operator role reads as a viewer
 * and may not define.
 */
import t from 'tap';
import { FIXTURE_SCL } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, createSpace, signIn, type SignedIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());

const editor = await signIn(p, { role: 'editor' });

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
  return { status: res.status, body: text ? JSON.parse(text) : null } as { status: number; body: any };
}

const project = (await api(editor, 'POST', '/api/projects', { name: 'alarms', isActive: true })).body as { id: string };

/** A connection with the fixture's SCL file (its model known) and one without a file. */
async function connection(name: string, scl?: string): Promise<string> {
  const form = new FormData();
  form.set('connection', JSON.stringify({ name, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' }));
  if (scl) form.set('file', new Blob([scl], { type: 'application/xml' }), 'device.icd');
  const res = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers: editor.headers, body: form });
  if (res.status !== 200) throw new Error(`connection: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}
const withModel = await connection('with-model', FIXTURE_SCL);
const withoutModel = await connection('without-model');

t.test('alarm groups: created, read, listed, replaced, deleted; the priority range in order', async (t) => {
  const created = await api(editor, 'POST', '/api/alarm-groups', {
    name: 'Feeder',
    projectId: project.id,
    minPriority: 1,
    maxPriority: 10,
  });
  t.equal(created.status, 200);
  t.match(created.body, { name: 'Feeder', projectId: project.id, minPriority: 1, maxPriority: 10, createdBy: editor.username });
  const id = created.body.id as string;
  t.same((await api(editor, 'GET', `/api/alarm-groups/${id}`)).body, created.body);

  const reversed = await api(editor, 'POST', '/api/alarm-groups', { name: 'Bad', projectId: project.id, minPriority: 20, maxPriority: 5 });
  t.equal(reversed.status, 400);
  t.match(reversed.body, { code: 'validation_failed', detail: /maxPriority 5 is below minPriority 20/ });
  for (const bad of [0, 256, 1.5, '3', null]) {
    const res = await api(editor, 'POST', '/api/alarm-groups', {
      name: `p${bad}`,
      projectId: project.id,
      minPriority: bad,
      maxPriority: 10,
    });
    t.equal(res.status, 400, `minPriority ${JSON.stringify(bad)} is 400`);
  }
  const missingProject = await api(editor, 'POST', '/api/alarm-groups', {
    name: 'Nowhere',
    projectId: '00000000-0000-4000-8000-000000000000',
    minPriority: 1,
    maxPriority: 2,
  });
  t.equal(missingProject.status, 404);
  t.equal(
    (await api(editor, 'PUT', `/api/alarm-groups/${id}`, { name: 'Feeder', projectId: project.id, minPriority: 9, maxPriority: 3 })).status,
    400,
  );
  t.equal((await api(editor, 'GET', `/api/alarm-groups/${id}`)).body.minPriority, 1, 'a refused replacement changes nothing');
  t.equal(
    (await api(editor, 'PUT', `/api/alarm-groups/${id}`, { name: 'Feeder 1', projectId: project.id, minPriority: 1, maxPriority: 20 }))
      .status,
    204,
  );
  const names = (await api(editor, 'GET', '/api/alarm-groups')).body.map((g: { name: string }) => g.name);
  t.same(names, ['Feeder 1'], 'only the stored groups are listed');
  t.equal((await api(editor, 'DELETE', `/api/alarm-groups/${id}`)).status, 204);
});

t.test('alarms: every type, and each bad definition a 400 naming its reason', async (t) => {
  const group = (await api(editor, 'POST', '/api/alarm-groups', { name: 'Bay', projectId: project.id, minPriority: 5, maxPriority: 50 }))
    .body;
  const base = { groupId: group.id, connectionId: withModel, priority: 10, message: 'Something is wrong' };
  const good = [
    { ...base, name: 'Breaker', reference: 'SIMLD0/GGIO1.Ind1.stVal[ST]', type: 'state', alarmWhen: true },
    {
      ...base,
      name: 'Load',
      reference: 'SIMLD0/GGIO1.AnIn1.mag.f[MX]',
      type: 'analog',
      hh: 90,
      h: 80,
      l: 20,
      ll: 10,
      deadband: 2,
      onDelayMs: 500,
    },
    { ...base, name: 'High only', reference: 'SIMLD0/GGIO1.AnIn1.mag.f[MX]', type: 'analog', h: 80 },
    { ...base, name: 'Quality', reference: 'SIMLD0/GGIO1.AnIn1[MX]', type: 'quality' },
    { ...base, name: 'Silent', reference: 'SIMLD0/GGIO1$MX$AnIn1$mag$f', type: 'stale', staleSeconds: 30 },
    { ...base, name: 'No model', connectionId: withoutModel, reference: 'ANY/GGIO1.Ind1.stVal[ST]', type: 'state', alarmWhen: false },
  ];
  for (const body of good) {
    const res = await api(editor, 'POST', '/api/alarm-definitions', body);
    t.equal(res.status, 200, `${body.name}: ${JSON.stringify(res.body)}`);
    t.match(res.body, body);
  }

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['limits out of order', { type: 'analog', h: 80, hh: 70 }, /out of order: hh \(70\) must be above h \(80\)/],
    ['low limits out of order', { type: 'analog', ll: 30, l: 20 }, /out of order: l \(20\) must be above ll \(30\)/],
    ['equal limits', { type: 'analog', l: 50, h: 50 }, /out of order/],
    ['no limit', { type: 'analog' }, /at least one of hh, h, l, ll/],
    ['a limit on a state alarm', { type: 'state', alarmWhen: true, h: 3 }, /h is not a field of a state alarm/],
    ['a state alarm without alarmWhen', { type: 'state' }, /needs alarmWhen/],
    ['a stale alarm without staleSeconds', { type: 'stale' }, /needs staleSeconds/],
    ['a priority outside the group', { type: 'quality', priority: 4 }, /Priority 4 is outside the range of alarm group "Bay" \(5 to 50\)/],
    ['an unknown logical device', { type: 'quality', reference: 'NOPE/GGIO1.AnIn1[MX]' }, /no logical device NOPE/],
    ['an unknown logical node', { type: 'quality', reference: 'SIMLD0/GGIO9.AnIn1[MX]' }, /no logical node GGIO9/],
    ['an unknown data object', { type: 'quality', reference: 'SIMLD0/GGIO1.AnIn9[MX]' }, /no data object AnIn9/],
    ['an unknown attribute', { type: 'quality', reference: 'SIMLD0/GGIO1.AnIn1.mag.x[MX]' }, /no attribute mag\.x\[MX\]/],
    ['a reference that does not parse', { type: 'quality', reference: 'no slash' }, /expected 'LD\/LN/],
  ];
  for (const [what, change, reason] of bad) {
    const res = await api(editor, 'POST', '/api/alarm-definitions', {
      ...base,
      name: what,
      reference: 'SIMLD0/GGIO1.AnIn1.mag.f[MX]',
      ...change,
    });
    t.equal(res.status, 400, what);
    t.match(res.body, { code: 'validation_failed', detail: reason }, what);
  }
  for (const [what, change] of [
    ['priority 0', { priority: 0 }],
    ['a negative deadband', { deadband: -1 }],
    ['an unknown type', { type: 'expression' }],
    ['an unknown field', { expression: 'x > 1' }],
    ['an on-delay over an hour', { onDelayMs: 3_600_001 }],
    ['a limit that is text', { h: '80' }],
    ['an empty message', { message: '' }],
  ] as const) {
    const res = await api(editor, 'POST', '/api/alarm-definitions', {
      ...base,
      name: what,
      reference: 'SIMLD0/GGIO1.AnIn1.mag.f[MX]',
      type: 'analog',
      h: 1,
      ...change,
    });
    t.equal(res.status, 400, what);
  }
  const missing = await api(editor, 'POST', '/api/alarm-definitions', {
    ...base,
    name: 'x',
    connectionId: '00000000-0000-4000-8000-000000000000',
    reference: 'A/B',
    type: 'quality',
  });
  t.equal(missing.status, 404, 'a connection the space does not hold is 404');
  const noGroup = await api(editor, 'POST', '/api/alarm-definitions', {
    ...base,
    name: 'y',
    groupId: '00000000-0000-4000-8000-000000000000',
    reference: 'A/B',
    type: 'quality',
  });
  t.equal(noGroup.status, 404, 'a group the space does not hold is 404');
  const names = (await api(editor, 'GET', '/api/alarm-definitions')).body.map((a: { name: string }) => a.name).sort();
  t.same(names, good.map((g) => g.name).sort(), 'nothing refused was stored');

  const narrowed = await api(editor, 'PUT', `/api/alarm-groups/${group.id}`, {
    name: 'Bay',
    projectId: project.id,
    minPriority: 11,
    maxPriority: 50,
  });
  t.equal(narrowed.status, 400, "a group's range may not leave out its alarms' priorities");
  t.match(narrowed.body.detail, /leaves out alarms of the group: "Breaker" \(10\)/);
  const held = await api(editor, 'DELETE', `/api/alarm-groups/${group.id}`);
  t.equal(held.status, 409, 'a group with alarms is not deleted');
  t.match(held.body.detail, /still has 6 alarms/);
  t.equal((await api(editor, 'DELETE', `/api/projects/${project.id}`)).status, 409, 'nor a project with alarm groups');
});

t.test('roles and spaces: a viewer and an operator read, only an editor defines; another space sees nothing', async (t) => {
  const group = (await api(editor, 'POST', '/api/alarm-groups', { name: 'Roles', projectId: project.id, minPriority: 1, maxPriority: 9 }))
    .body;
  for (const role of ['viewer', 'operator'] as const) {
    const who = await signIn(p, { role });
    t.equal((await api(who, 'GET', `/api/alarm-groups/${group.id}`)).status, 200, `${role} reads`);
    const res = await api(who, 'POST', '/api/alarm-groups', { name: `by ${role}`, projectId: project.id, minPriority: 1, maxPriority: 2 });
    t.equal(res.status, 403, `${role} may not define`);
  }
  const operator = await signIn(p, { role: 'operator' });
  t.equal(
    (await api(operator, 'POST', '/api/projects', { name: 'by an operator', isActive: true })).status,
    403,
    'an operator changes no configuration',
  );
  t.equal((await api(operator, 'POST', `/api/connections/${withModel}/start`)).status, 403, 'nor starts a connection');
  t.equal((await api(operator, 'GET', '/api/alarms/active')).status, 200, 'and reads the alarms');
  const admin = await asAdmin(p);
  t.same(
    (await api(admin, 'GET', `/api/users/${operator.userId}`)).body.roles,
    ['operator'],
    'the operator role is a role of the platform',
  );
  const other = await createSpace(p, 'elsewhere');
  const outsider = await signIn(p, { role: 'editor', spaces: [other] });
  t.equal((await api(outsider, 'GET', `/api/alarm-groups/${group.id}`, undefined, other)).status, 404);
  t.same((await api(outsider, 'GET', '/api/alarm-definitions', undefined, other)).body, []);
  const foreign = await api(
    outsider,
    'POST',
    '/api/alarm-definitions',
    {
      groupId: group.id,
      connectionId: withModel,
      name: 'foreign',
      reference: 'SIMLD0/GGIO1.AnIn1[MX]',
      type: 'quality',
      priority: 1,
      message: 'm',
    },
    other,
  );
  t.equal(foreign.status, 404, "another space's group is 404");
});
