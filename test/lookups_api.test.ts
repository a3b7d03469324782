/**
 * The configuration lookups HMI clients of the reference product make, through the gateway: a project by
 * name, projects by active flag, a project's status, faceplates and scripts of a project, and the bulk
 * deletion of scripts, all bounded by the caller's space.
 */
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

t.test(`lookups, project status and bulk script deletion (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const viewer = await signIn(p, { role: 'viewer' });
  const elsewhere = await createSpace(p, `lookups-${Date.now()}`);
  const stranger = await signIn(p, { role: 'editor', spaces: [elsewhere] });
  const get = (path: string, who = editor) => fetch(`${p.url}${path}`, { headers: who.headers });
  const post = async <T>(path: string, body: unknown, who = editor): Promise<T> => {
    const res = await fetch(`${p.url}${path}`, { method: 'POST', headers: json(who.headers), body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  const name = `Pumping station ${Date.now()} 😀`;
  const project = await post<{ id: string }>('/api/projects', { name, isActive: true });
  const idle = await post<{ id: string }>('/api/projects', { name: `idle-${Date.now()}`, isActive: false });
  const theirs = await post<{ id: string }>('/api/projects', { name, isActive: true }, stranger);
  const pump = await post<{ id: string }>('/api/faceplates', { name: 'Pump, main', projectId: project.id });
  const valve = await post<{ id: string }>('/api/faceplates', { name: 'Valve', projectId: project.id });
  await post('/api/faceplates', { name: 'Other', projectId: idle.id });
  const scripts = await Promise.all(
    ['a', 'b', 'c'].map((n) =>
      post<{ id: string }>('/api/scripts', { name: n, projectId: project.id, type: 'None', log: false, code: 'return 1;' }),
    ),
  );
  const theirScript = await post<{ id: string }>(
    '/api/scripts',
    { name: 'x', projectId: theirs.id, type: 'None', log: false, code: '' },
    stranger,
  );

  t.test("a project by its exact name, in the caller's space only", async (t) => {
    const found = await get(`/api/projects/by-name?name=${encodeURIComponent(name)}`, viewer);
    t.equal(found.status, 200);
    t.match(await found.json(), { id: project.id, name });
    t.equal((await get(`/api/projects/by-name?name=${encodeURIComponent(name.toUpperCase())}`)).status, 404, 'compared exactly');
    t.equal((await get('/api/projects/by-name?name=nothing-like-it')).status, 404);
    t.match(
      await (await get(`/api/projects/by-name?name=${encodeURIComponent(name)}`, stranger)).json(),
      { id: theirs.id },
      'the same name in another space is another project',
    );
    t.equal((await get('/api/projects/by-name')).status, 400);
    t.equal((await get(`/api/projects/by-name?name=${'n'.repeat(101)}`)).status, 400, 'longer than a name can be');
    t.equal((await get('/api/projects/by-name?name=a%00b')).status, 400);
  });

  t.test('projects by active flag', async (t) => {
    const active = (await (await get('/api/projects/by-active?isActive=true')).json()) as { id: string }[];
    const inactive = (await (await get('/api/projects/by-active?isActive=false')).json()) as { id: string }[];
    t.ok(active.some((x) => x.id === project.id) && !active.some((x) => x.id === idle.id));
    t.ok(inactive.some((x) => x.id === idle.id) && !inactive.some((x) => x.id === project.id));
    t.notOk(
      active.some((x) => x.id === theirs.id),
      "never another space's",
    );
    t.equal((await get('/api/projects/by-active?isActive=maybe')).status, 400);
    t.equal((await get('/api/projects/by-active')).status, 400);
  });

  t.test('faceplates of a project, all or by names', async (t) => {
    const all = (await (await get(`/api/faceplates/by-project?projectId=${project.id}`, viewer)).json()) as { id: string }[];
    t.same(
      all.map((f) => f.id),
      [pump.id, valve.id],
      'by name',
    );
    const some = await get(
      `/api/faceplates/by-project-and-names?projectId=${project.id}&names=${encodeURIComponent('Pump, main')}&names=Nope`,
    );
    t.same(
      ((await some.json()) as { id: string }[]).map((f) => f.id),
      [pump.id],
      'repeated: a name may hold a comma; an unknown name is left out',
    );
    const split = await get(`/api/faceplates/by-project-and-names?projectId=${project.id}&names=Valve,Nope`);
    t.same(
      ((await split.json()) as { id: string }[]).map((f) => f.id),
      [valve.id],
      'given once: comma separated',
    );
    t.equal((await get(`/api/faceplates/by-project?projectId=${theirs.id}`)).status, 404, "another space's project");
    t.equal((await get(`/api/faceplates/by-project-and-names?projectId=${theirs.id}&names=x`)).status, 404);
    t.equal((await get(`/api/faceplates/by-project-and-names?projectId=${project.id}`)).status, 400, 'names are required');
    t.equal((await get('/api/faceplates/by-project?projectId=not-a-uuid')).status, 400);
  });

  t.test('scripts of a project', async (t) => {
    const list = (await (await get(`/api/scripts/by-project?projectId=${project.id}`, viewer)).json()) as { id: string; code: string }[];
    t.same(
      list.map((s) => s.id),
      scripts.map((s) => s.id),
    );
    t.equal(list[0]?.code, 'return 1;', 'code included');
    t.same(await (await get(`/api/scripts/by-project?projectId=${idle.id}`)).json(), []);
    t.equal((await get(`/api/scripts/by-project?projectId=${theirs.id}`)).status, 404);
  });

  t.test('the project status: connections as they are, scripts not scheduled, the rest empty', async (t) => {
    const form = new FormData();
    form.set('connection', JSON.stringify({ name: 'feeder', ip: '127.0.0.1', port: 1, projectId: project.id, protocol: 'IEC 61850' }));
    const conn = (await (
      await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers: editor.headers, body: form })
    ).json()) as { id: string };
    const status = await get(`/api/projects/${project.id}/status`, viewer);
    t.equal(status.status, 200);
    t.same(await status.json(), {
      connectionStatuses: { [conn.id]: 'Disconnected' },
      scriptStatuses: Object.fromEntries(scripts.map((s) => [s.id, 'Not Scheduled'])),
      alarmGroupStatuses: {},
      reportStatuses: {},
      dataTransferStatuses: {},
    });
    t.same(await (await get(`/api/projects/${idle.id}/status`)).json(), {
      connectionStatuses: {},
      scriptStatuses: {},
      alarmGroupStatuses: {},
      reportStatuses: {},
      dataTransferStatuses: {},
    });
    t.equal((await get(`/api/projects/${theirs.id}/status`)).status, 404, "another space's project");
    t.equal((await get('/api/projects/2b0a6a55-56bd-4b1f-9a43-3a3d1c0c1a11/status')).status, 404);
    t.equal((await get('/api/projects/by-name/status')).status, 400, 'not an id');
  });

  t.test('bulk script deletion is all or nothing within the space', async (t) => {
    const del = (ids: string[], who = editor) =>
      fetch(`${p.url}/api/scripts/multi/by-ids?${ids.map((id) => `scriptIds=${id}`).join('&')}`, {
        method: 'DELETE',
        headers: who.headers,
      });
    const count = async () => ((await (await get(`/api/scripts/by-project?projectId=${project.id}`)).json()) as unknown[]).length;
    const foreign = await del([scripts[0]!.id, theirScript.id]);
    t.equal(foreign.status, 404, "another space's script is missing here");
    t.match(await foreign.json(), { code: 'not_found', missing: [theirScript.id] });
    t.equal(await count(), 3, 'nothing was deleted');
    t.equal((await del([scripts[0]!.id, '2b0a6a55-56bd-4b1f-9a43-3a3d1c0c1a11'])).status, 404);
    t.equal(await count(), 3);
    t.equal((await del([scripts[0]!.id], viewer)).status, 403, 'a viewer cannot delete');
    t.equal((await del([scripts[0]!.id, 'nope'])).status, 400);
    t.equal((await del([scripts[0]!.id.toUpperCase(), scripts[1]!.id, scripts[0]!.id])).status, 204, 'any case; a repeat counts once');
    t.equal(await count(), 1);
    t.equal(
      (await fetch(`${p.url}/api/scripts/${theirScript.id}`, { headers: stranger.headers })).status,
      200,
      'the other space kept its script',
    );
    t.equal((await fetch(`${p.url}/api/scripts/multi/by-ids`, { method: 'DELETE', headers: editor.headers })).status, 400);
  });
});
