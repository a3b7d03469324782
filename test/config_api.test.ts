/**
 * The configuration API through the gateway, as its users meet it: an editor doing every operation, a
 * viewer who may only read, a user of another space who finds nothing, the body limits and content types
 * of the gateway, script code kept byte for byte, and the events each change publishes.
 */
import t, { type Test } from 'tap';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, createSpace, login, signIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());

// Until the auth service signs users in, no login can succeed and these tests wait (the lead's sessions work).
const probe = await login(p, 'admin', testAdminPassword);
const waiting = probe.status === 503 || probe.status === 404 ? 'waiting for sessions: the auth service does not sign in yet' : false;

type Who = { headers: Record<string, string> };
type Sent = { json?: unknown; text?: string; bytes?: Uint8Array<ArrayBuffer>; type?: string; space?: string };

/** One request as `who`; JSON unless told otherwise. */
function api(who: Who, method: string, path: string, sent: Sent = {}): Promise<Response> {
  const headers: Record<string, string> = { ...who.headers };
  if (sent.space) headers['x-space'] = sent.space;
  let body: BodyInit | undefined;
  if (sent.json !== undefined) [body, headers['content-type']] = [JSON.stringify(sent.json), sent.type ?? 'application/json'];
  if (sent.text !== undefined) [body, headers['content-type']] = [sent.text, sent.type ?? 'text/plain; charset=utf-8'];
  if (sent.bytes !== undefined) [body, headers['content-type']] = [sent.bytes, sent.type ?? 'text/plain'];
  return fetch(`${p.url}${path}`, { method, headers, body });
}

/** The answer's JSON, after checking its status. */
async function expect(t: Test, res: Promise<Response>, status: number, what: string): Promise<any> {
  const r = await res;
  const text = await r.text();
  t.equal(r.status, status, `${what}: ${status}${r.status === status ? '' : ` (got ${r.status} ${text.slice(0, 300)})`}`);
  return text === '' ? null : JSON.parse(text);
}

t.test(`configuration API through the gateway (${p.mode})`, { skip: waiting }, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const viewer = await signIn(p, { role: 'viewer' });
  const plantB = await createSpace(p, `plant-b-${Date.now()}`);
  const outsider = await signIn(p, { role: 'editor', spaces: [plantB] });
  const admin = await asAdmin(p);

  t.test('an editor does every operation, with the statuses of the reference', async (t) => {
    const e = (method: string, path: string, status: number, sent?: Sent) =>
      expect(t, api(editor, method, path, sent), status, `${method} ${path}`);
    const project = await e('POST', '/api/projects', 200, { json: { name: 'Water plant', isActive: true, dsc: 'North' } });
    t.match(project, { name: 'Water plant', createdBy: editor.username, lastModifiedBy: editor.username });
    const pid = project.id;
    t.same(
      (await e('GET', '/api/projects', 200)).map((x: { id: string }) => x.id),
      [pid],
    );
    t.match(await e('GET', `/api/projects/${pid}`, 200), { id: pid });
    await e('PUT', `/api/projects/${pid}`, 204, { json: { name: 'Water plant', isActive: false } });

    const group = await e('POST', '/api/dashboard', 200, { json: { name: 'Main', rank: 1, color: '#336699' } });
    const gid = group.id;
    t.equal((await e('GET', '/api/dashboard', 200)).length, 1);
    t.match(await e('GET', `/api/dashboard/${gid}`, 200), { color: '#336699' });
    await e('PUT', `/api/dashboard/${gid}`, 204, { json: { name: 'Main', rank: 2 } });
    const board = await e('POST', `/api/dashboard/${gid}/boards`, 200, {
      json: { name: 'Overview', type: 'Iframe', header: true, x: 0, y: 0, width: 4, height: 3, iframeUrl: 'https://hmi.example/' },
    });
    t.match(board, { boardGroupId: gid, type: 'Iframe', width: 4 }, 'createBoard answers 200 with the board');
    t.equal((await e('GET', `/api/dashboard/${gid}/boards`, 200)).length, 1);
    t.match(await e('GET', `/api/dashboard/${gid}/boards/${board.id}`, 200), { name: 'Overview' });
    await e('PUT', `/api/dashboard/${gid}/boards/${board.id}`, 204, { json: { name: 'Overview', type: 'Html', header: false } });

    const fp = await e('POST', '/api/faceplates', 200, { json: { name: 'Pump', projectId: pid, color: '#00ff00' } });
    t.equal((await e('GET', '/api/faceplates', 200)).length, 1);
    t.match(await e('GET', `/api/faceplates/${fp.id}`, 200), { projectId: pid });
    await e('PUT', `/api/faceplates/${fp.id}`, 204, { json: { name: 'Pump 2', projectId: pid } });
    const ph = await e('POST', `/api/faceplates/${fp.id}/placeholders`, 200, { json: { name: 'speed', type: 'number', order: 1 } });
    t.equal((await e('GET', `/api/faceplates/${fp.id}/placeholders`, 200)).length, 1);
    t.match(await e('GET', `/api/faceplates/${fp.id}/placeholders/${ph.id}`, 200), { type: 'number' });
    await e('PUT', `/api/faceplates/${fp.id}/placeholders/${ph.id}`, 204, { json: { name: 'speed', type: 'tag' } });

    const script = await e('POST', '/api/scripts', 200, {
      json: { name: 'tick', projectId: pid, type: 'Periodic', log: true, code: 'a()', period: 1000 },
    });
    t.equal((await e('GET', '/api/scripts', 200)).length, 1);
    t.match(await e('GET', `/api/scripts/${script.id}`, 200), { code: 'a()' });
    await e('PUT', `/api/scripts/${script.id}`, 204, { json: { name: 'tick', projectId: pid, type: 'None', log: false, code: 'b()' } });
    await e('PATCH', `/api/scripts/${script.id}/code`, 204, { text: 'c()' });
    t.match(await e('GET', `/api/scripts/${script.id}`, 200), { code: 'c()', type: 'None' });

    t.match(
      await e('DELETE', `/api/projects/${pid}`, 409),
      { code: 'conflict', children: [{ entity: 'faceplate' }, { entity: 'script' }] },
      'a project with children stays',
    );
    await e('DELETE', `/api/scripts/${script.id}`, 204);
    await e('DELETE', `/api/faceplates/${fp.id}/placeholders/${ph.id}`, 204);
    await e('DELETE', `/api/faceplates/${fp.id}`, 204);
    await e('DELETE', `/api/projects/${pid}`, 204);
    await e('DELETE', `/api/dashboard/${gid}/boards/${board.id}`, 204);
    await e('DELETE', `/api/dashboard/${gid}`, 204);
    t.match(await e('GET', `/api/projects/${pid}`, 404), { code: 'not_found' });
  });

  t.test('a viewer reads, and every write is 403', async (t) => {
    const project = await expect(
      t,
      api(editor, 'POST', '/api/projects', { json: { name: 'Viewer sees', isActive: true } }),
      200,
      'arrange',
    );
    const group = await expect(t, api(editor, 'POST', '/api/dashboard', { json: { name: 'Viewer group' } }), 200, 'arrange');
    t.ok((await expect(t, api(viewer, 'GET', '/api/projects'), 200, 'viewer lists')).some((x: { id: string }) => x.id === project.id));
    await expect(t, api(viewer, 'GET', `/api/dashboard/${group.id}/boards`), 200, 'viewer lists boards');
    const id = project.id;
    const writes: [string, string, Sent][] = [
      ['POST', '/api/projects', { json: { name: 'x', isActive: true } }],
      ['PUT', `/api/projects/${id}`, { json: { name: 'x', isActive: true } }],
      ['DELETE', `/api/projects/${id}`, {}],
      ['POST', '/api/dashboard', { json: { name: 'x' } }],
      ['PUT', `/api/dashboard/${group.id}`, { json: { name: 'x' } }],
      ['DELETE', `/api/dashboard/${group.id}`, {}],
      ['POST', `/api/dashboard/${group.id}/boards`, { json: { name: 'x', type: 'Html', header: true } }],
      ['PUT', `/api/dashboard/${group.id}/boards/${id}`, { json: { name: 'x', type: 'Html', header: true } }],
      ['DELETE', `/api/dashboard/${group.id}/boards/${id}`, {}],
      ['POST', '/api/faceplates', { json: { name: 'x', projectId: id } }],
      ['PUT', `/api/faceplates/${id}`, { json: { name: 'x', projectId: id } }],
      ['DELETE', `/api/faceplates/${id}`, {}],
      ['POST', `/api/faceplates/${id}/placeholders`, { json: { name: 'x', type: 'text' } }],
      ['PUT', `/api/faceplates/${id}/placeholders/${id}`, { json: { name: 'x', type: 'text' } }],
      ['DELETE', `/api/faceplates/${id}/placeholders/${id}`, {}],
      ['POST', '/api/scripts', { json: { name: 'x', projectId: id, type: 'None', log: true, code: '' } }],
      ['PUT', `/api/scripts/${id}`, { json: { name: 'x', projectId: id, type: 'None', log: true, code: '' } }],
      ['DELETE', `/api/scripts/${id}`, {}],
      ['PATCH', `/api/scripts/${id}/code`, { text: 'x' }],
    ];
    for (const [method, path, sent] of writes)
      t.match(await expect(t, api(viewer, method, path, sent), 403, `viewer ${method} ${path}`), { code: 'forbidden' });
    t.equal((await expect(t, api(viewer, 'GET', `/api/projects/${id}`), 200, 'unchanged')).name, 'Viewer sees');
  });

  t.test("another space's resources are 404, its space 403; an admin works in both", async (t) => {
    const project = await expect(
      t,
      api(editor, 'POST', '/api/projects', { json: { name: 'Default only', isActive: true } }),
      200,
      'arrange',
    );
    const theirs = await expect(
      t,
      api(outsider, 'POST', '/api/projects', { json: { name: 'Plant B', isActive: true } }),
      200,
      'outsider creates in plant B',
    );
    t.match(await expect(t, api(outsider, 'GET', `/api/projects/${project.id}`), 404, 'read across spaces'), { code: 'not_found' });
    await expect(
      t,
      api(outsider, 'PUT', `/api/projects/${project.id}`, { json: { name: 'Mine', isActive: true } }),
      404,
      'write across spaces',
    );
    await expect(t, api(outsider, 'DELETE', `/api/projects/${project.id}`), 404, 'delete across spaces');
    await expect(
      t,
      api(outsider, 'POST', '/api/faceplates', { json: { name: 'F', projectId: project.id } }),
      404,
      "a faceplate on another space's project",
    );
    await expect(t, api(editor, 'GET', `/api/projects/${theirs.id}`), 404, 'and the other way round');
    t.notOk((await expect(t, api(outsider, 'GET', '/api/projects'), 200, 'list')).some((x: { id: string }) => x.id === project.id));
    t.match(await expect(t, api(outsider, 'GET', '/api/projects', { space: 'default' }), 403, 'a space the user is not in'), {
      code: 'space_forbidden',
    });
    await expect(t, api(admin, 'GET', `/api/projects/${project.id}`, { space: 'default' }), 200, 'admin in default');
    await expect(t, api(admin, 'GET', `/api/projects/${theirs.id}`, { space: plantB }), 200, 'admin in plant B');
    await expect(t, api(admin, 'GET', `/api/projects/${theirs.id}`, { space: 'default' }), 404, 'admin, but asking in the wrong space');
  });

  t.test('bad input: validation names the field; malformed ids 400; missing ids 404', async (t) => {
    const group = await expect(t, api(editor, 'POST', '/api/dashboard', { json: { name: `Bad input ${Date.now()}` } }), 200, 'arrange');
    const boards = `/api/dashboard/${group.id}/boards`;
    const refused = async (json: unknown, path: string) =>
      t.match(await expect(t, api(editor, 'POST', boards, { json }), 400, `${JSON.stringify(json).slice(0, 80)}`), {
        code: 'validation_failed',
        errors: [{ path }],
      });
    await refused({ type: 'Html', header: true }, '/body/name');
    await refused({ name: 'b', type: 'Html', header: true, x: '1' }, '/body/x');
    await refused({ name: 'b', type: 'Html', header: 'yes' }, '/body/header');
    await refused({ name: 'b', type: 'Html', header: true, width: 2 ** 31 }, '/body/width');
    await refused({ name: 'b', type: 'Html', header: true, y: -1 }, '/body/y');
    await refused({ name: 'n'.repeat(101), type: 'Html', header: true }, '/body/name');
    await refused({ name: 'b', type: 'Iframe', header: true, iframeUrl: 'javascript:alert(1)' }, '/body/iframeUrl');
    await refused({ name: 'b', type: 'Iframe', header: true, iframeUrl: 'data:text/html,hi' }, '/body/iframeUrl');
    await refused({ name: 'b', type: 'Video', header: true }, '/body/type');
    await expect(t, api(editor, 'GET', '/api/projects/not-a-uuid'), 400, 'malformed id');
    await expect(t, api(editor, 'GET', '/api/projects/00000000-0000-4000-8000-000000000000'), 404, 'missing id');
    await expect(
      t,
      api(editor, 'POST', '/api/dashboard/00000000-0000-4000-8000-000000000000/boards', {
        json: { name: 'b', type: 'Html', header: true },
      }),
      404,
      'missing group',
    );
    await expect(t, api(editor, 'POST', '/api/projects', { text: '{"name":"x","isActive":true}' }), 415, 'text/plain on a JSON route');
  });

  t.test('script code: text/plain only, UTF-8 only, 65,535 characters, kept byte for byte, 1 MiB body limit', async (t) => {
    const project = await expect(
      t,
      api(editor, 'POST', '/api/projects', { json: { name: `Code ${Date.now()}`, isActive: true } }),
      200,
      'arrange',
    );
    const script = await expect(
      t,
      api(editor, 'POST', '/api/scripts', { json: { name: 's', projectId: project.id, type: 'None', log: false, code: '' } }),
      200,
      'arrange',
    );
    const code = `/api/scripts/${script.id}/code`;
    const read = async () => (await expect(t, api(editor, 'GET', `/api/scripts/${script.id}`), 200, 'read back')).code as string;

    const sent = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('// ünï 😀\r\nx = "\\u0000";\n\t end  ')]);
    await expect(t, api(editor, 'PATCH', code, { bytes: sent }), 204, 'BOM, CRLF, astral');
    t.match(await expect(t, api(editor, 'PATCH', code, { text: 'x = "\u0000"' }), 400, 'a NUL character'), { code: 'validation_failed' });
    t.same(new TextEncoder().encode(await read()), sent, 'the bytes read back are the bytes sent');
    await expect(t, api(editor, 'PATCH', code, { text: '' }), 204, 'an empty script');
    t.equal(await read(), '');
    await expect(t, api(editor, 'PATCH', code, { text: '😀'.repeat(65535) }), 204, '65,535 astral characters');
    t.match(await expect(t, api(editor, 'PATCH', code, { text: 'a'.repeat(65536) }), 400, '65,536 characters'), {
      code: 'validation_failed',
    });
    t.match(await expect(t, api(editor, 'PATCH', code, { bytes: new Uint8Array([0x61, 0xff, 0xfe, 0x62]) }), 400, 'invalid UTF-8'), {
      code: 'malformed_body',
    });
    t.match(await expect(t, api(editor, 'PATCH', code, { bytes: new Uint8Array([0xed, 0xa0, 0x80]) }), 400, 'an encoded surrogate'), {
      code: 'malformed_body',
    });
    t.match(await expect(t, api(editor, 'PATCH', code, { json: 'x = 1' }), 415, 'application/json'), { code: 'unsupported_media_type' });
    await expect(t, api(editor, 'PATCH', code, { text: 'x', type: 'text/plain; charset=iso-8859-1' }), 415, 'another charset');
    t.match(await expect(t, api(editor, 'PATCH', code, { text: 'a'.repeat(2 * 1024 * 1024) }), 413, '2 MiB of code'), {
      code: 'payload_too_large',
    });
    const big = { name: 'p', isActive: true, properties: 'x'.repeat(2 * 1024 * 1024) };
    t.match(await expect(t, api(editor, 'POST', '/api/projects', { json: big }), 413, '2 MiB of JSON'), { code: 'payload_too_large' });
    t.equal((await read()).length, 131070, 'refused bodies changed nothing');
  });

  t.test('concurrent replacements of one placeholder all answer 204', async (t) => {
    const project = await expect(
      t,
      api(editor, 'POST', '/api/projects', { json: { name: `Conc ${Date.now()}`, isActive: true } }),
      200,
      'arrange',
    );
    const fp = await expect(t, api(editor, 'POST', '/api/faceplates', { json: { name: 'F', projectId: project.id } }), 200, 'arrange');
    const ph = await expect(
      t,
      api(editor, 'POST', `/api/faceplates/${fp.id}/placeholders`, { json: { name: 'p', type: 'text' } }),
      200,
      'arrange',
    );
    const path = `/api/faceplates/${fp.id}/placeholders/${ph.id}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api(editor, 'PUT', path, { json: { name: 'p', type: 'text', dsc: `v${i}` } })),
    );
    t.same(
      answers.map((r) => r.status),
      answers.map(() => 204),
    );
    t.match((await expect(t, api(editor, 'GET', path), 200, 'read')).dsc, /^v[0-7]$/, 'one of them won');
  });

  t.test('a list larger than one bus message still answers whole', async (t) => {
    // Notes of 255 characters (their limit) of three bytes each in UTF-8, the encoding of a bus message:
    // enough projects that the list is a quarter over 1 MiB by the notes alone.
    const note = '€'.repeat(255);
    const count = Math.ceil((1.25 * 1024 * 1024) / (2 * Buffer.byteLength(note)) / 50) * 50;
    const names: string[] = [];
    for (let batch = 0; batch < count; batch += 50) {
      const made = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api(editor, 'POST', '/api/projects', {
            json: { name: `Bulk ${batch + i} ${Date.now()}`, isActive: true, dsc: note, address: note },
          }),
        ),
      );
      for (const r of made) names.push(((await r.json()) as { name: string }).name);
    }
    const res = await api(editor, 'GET', '/api/projects');
    t.equal(res.status, 200);
    const text = await res.text();
    const bytes = Buffer.byteLength(text);
    t.ok(bytes > 1024 * 1024, `the answer is ${(bytes / 1e6).toFixed(2)} MB, over the 1 MiB a bus message carries`);
    const listed = new Set((JSON.parse(text) as { name: string }[]).map((p) => p.name));
    t.ok(
      names.every((n) => listed.has(n)),
      'every project is in it',
    );
  });

  t.test('each change publishes events.config.<entity>.<verb> with the space, the id and the actor', async (t) => {
    const seen: { subject: string; body: Record<string, unknown> }[] = [];
    const sub = p.proc.bus.subscribe(
      'events.config.>',
      (m) => void seen.push({ subject: m.subject, body: JSON.parse(new TextDecoder().decode(m.data)) }),
    );
    t.teardown(() => sub.unsubscribe());
    await p.proc.bus.flush();
    const group = await expect(t, api(editor, 'POST', '/api/dashboard', { json: { name: `Events ${Date.now()}` } }), 200, 'create');
    const board = await expect(
      t,
      api(editor, 'POST', `/api/dashboard/${group.id}/boards`, { json: { name: 'b', type: 'Html', header: true } }),
      200,
      'createBoard',
    );
    await expect(t, api(editor, 'DELETE', `/api/dashboard/${group.id}/boards/${board.id}`), 204, 'delete');
    for (let i = 0; i < 100 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    t.same(
      seen.map((e) => [e.subject, e.body.id]),
      [
        ['events.config.board_group.created', group.id],
        ['events.config.board.created', board.id],
        ['events.config.board.deleted', board.id],
      ],
    );
    for (const e of seen) t.match(e.body, { space: 'default', actor: editor.username });
  });
});

t.test('the OpenAPI document states the rules of the configuration API', { skip: waiting }, async (t) => {
  const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const createBoard = doc.paths['/api/dashboard/{boardGroupId}/boards']?.post;
  t.equal(createBoard?.operationId, 'createBoard');
  t.ok(createBoard?.responses['200'], 'createBoard answers 200');
  const body = createBoard?.requestBody.content['application/json'].schema;
  t.equal(body.additionalProperties, false);
  t.match(body.description, /Unknown fields are rejected/);
  t.same(body.properties.type.enum, ['Animation', 'Html', 'Iframe']);
  t.match(body.properties.x.anyOf[0], { type: 'integer', minimum: 0, maximum: 2147483647 });
  const code = doc.paths['/api/scripts/{scriptId}/code']?.patch;
  t.same(Object.keys(code.requestBody.content), ['text/plain']);
  t.match(code.requestBody.content['text/plain'].schema, { type: 'string', maxLength: 65535 });
  t.ok(code.responses['204'] && code.responses['415'] && code.responses['413']);
  t.match(doc.paths['/api/projects/{projectId}']?.delete.description, /409/);
  t.match(doc.paths['/api/projects']?.get.description, /Ordered by name/);
  t.ok(doc.paths['/api/faceplates/{faceplateId}/placeholders/{placeholderId}']?.put.responses['204']);
});

t.test('the reference wrapped bodies: {project: …} as JSON and as a multipart part are accepted too', async (t) => {
  // The file's platform: no other test here names a project 'wrapped' or 'renamed'.
  const q = p;
  const editor = await signIn(q, { role: 'editor' });
  const wrapped = await fetch(`${q.url}/api/projects`, {
    method: 'POST',
    headers: { ...editor.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ project: { name: 'wrapped', isActive: true } }),
  });
  t.equal(wrapped.status, 200);
  const project = (await wrapped.json()) as { id: string; name: string };
  t.equal(project.name, 'wrapped');
  const form = new FormData();
  form.set('project', JSON.stringify({ name: 'renamed', isActive: false }));
  const put = await fetch(`${q.url}/api/projects/${project.id}`, { method: 'PUT', headers: editor.headers, body: form });
  t.equal(put.status, 204);
  t.match(await (await fetch(`${q.url}/api/projects/${project.id}`, { headers: editor.headers })).json(), {
    name: 'renamed',
    isActive: false,
  });
  const broken = new FormData();
  broken.set('project', '{not json');
  t.equal((await fetch(`${q.url}/api/projects/${project.id}`, { method: 'PUT', headers: editor.headers, body: broken })).status, 400);
  const withFile = await fetch(`${q.url}/api/faceplates`, {
    method: 'POST',
    headers: { ...editor.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ faceplate: { name: 'f', projectId: project.id }, file: 'x' }),
  });
  t.equal(withFile.status, 400, 'a file beside the entity is refused');
});
