/**
 * What the gateway refuses at the edge, so that no service ever sees it: U+0000 and unpaired surrogates
 * anywhere, JSON that is not UTF-8 or nests past 64 levels, content codings a route does not take or
 * bodies that do not decode under theirs, and file parts where no file is taken (nothing of them on
 * disk). Every case through the gateway's HTTP API, with a look at the store afterwards.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { generateScd } from '@scada/testkit/scd';
import { asAdmin, signIn } from '@scada/testkit/session';

// Temporary upload files of this platform land here, so the test can see that none is left behind; the
// temp folder the process had comes back with the teardown, for the files run after this one in its process.
const temp = process.env.TMPDIR;
process.env.TMPDIR = await mkdtemp(join(tmpdir(), 'scada-edge-'));
const uploads = async () => (await readdir(process.env.TMPDIR as string)).filter((f) => f.startsWith('scada-upload-'));

// With its TLS listener too, for the HSTS test: one platform for the file instead of a second one for that test.
const p = await startTestPlatform({}, { tls: true });
// The folder goes with the platform: nothing of a test run is left in the temp folder.
t.teardown(async () => {
  await p.stop();
  await rm(process.env.TMPDIR as string, { recursive: true, force: true });
  if (temp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = temp;
});
const admin = await asAdmin(p);
const editor = await signIn(p, { role: 'editor' });
const json = { ...editor.headers, 'content-type': 'application/json' };
const send = (path: string, init: RequestInit & { headers?: Record<string, string> }) => fetch(`${p.url}${path}`, init);
const projectNames = async () =>
  ((await (await send('/api/projects', { headers: editor.headers })).json()) as { name: string }[]).map((x) => x.name);

async function refused(t: Test, res: Response, status: number, code: string, what: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  t.equal(res.status, status, `${what}: ${status}`);
  t.notMatch(text, /at \w+ \(|node:internal|\.ts:\d+|SELECT |INSERT |relation "/, `${what}: no stack or SQL`);
  const body = JSON.parse(text) as Record<string, unknown>;
  t.equal(body.code, code, `${what}: ${code}`);
  return body;
}

t.test(`strings with U+0000 or an unpaired surrogate answer 400 wherever they are (${p.mode})`, async (t) => {
  for (const body of [
    { username: 'ad\u0000min', password: 'x' },
    { username: 'admin', password: 'x\u0000' },
  ]) {
    await refused(
      t,
      await send('/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      400,
      'validation_failed',
      'NUL in a JSON /login',
    );
  }
  await refused(
    t,
    await send('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=ad%00min&password=x',
    }),
    400,
    'validation_failed',
    'NUL in an urlencoded /login',
  );
  const form = new FormData();
  form.set('username', 'ad\u0000min');
  form.set('password', 'x');
  await refused(t, await send('/login', { method: 'POST', body: form }), 400, 'validation_failed', 'NUL in a multipart /login');
  await refused(
    t,
    await send('/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'a\u0000', otp_code: '123456', otp_token: 'x' }),
    }),
    400,
    'validation_failed',
    'NUL in /validate',
  );
  const lone = '{"name":"pump \\ud800","isActive":true}';
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: json, body: lone }),
    400,
    'validation_failed',
    'an unpaired surrogate in a body',
  );
  const key = '{"name":"p","isActive":true,"a\\u0000":1}';
  await refused(t, await send('/api/projects', { method: 'POST', headers: json, body: key }), 400, 'validation_failed', 'NUL in a key');
  await refused(
    t,
    await send('/api/spaces', {
      method: 'POST',
      headers: { ...admin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sp\u0000ce' }),
    }),
    400,
    'validation_failed',
    'NUL in a space name',
  );
  await refused(
    t,
    await send('/api/auth/lockedUsers/ad%00min', { method: 'DELETE', headers: admin.headers }),
    400,
    'validation_failed',
    'NUL in a path',
  );
  await refused(
    t,
    await send('/api/auth/lockedUsers/ad%C0%AFmin', { method: 'DELETE', headers: admin.headers }),
    400,
    'validation_failed',
    'a path that is not UTF-8',
  );
  await refused(
    t,
    await send('/api/auth/lockedUsers/%ED%A0%80', { method: 'DELETE', headers: admin.headers }),
    400,
    'validation_failed',
    'an encoded surrogate in a path',
  );
  await refused(t, await send('/api/echo?text=a%00b', {}), 400, 'validation_failed', 'NUL in a query');
  await refused(t, await send('/api/echo?text=%FF', {}), 400, 'validation_failed', 'a query that is not UTF-8');
  t.same(
    (await projectNames()).filter((n) => n.startsWith('pump')),
    [],
    'nothing was stored',
  );
  const ok = await send('/api/echo?text=%C3%BCber+alles', {});
  t.equal(ok.status, 200, 'well-formed text still passes');
  t.match(await ok.json(), { text: 'über alles' });
});

t.test('JSON that is not UTF-8 answers 400 malformed_body and is not stored', async (t) => {
  for (const bad of [[0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80]]) {
    const body = Buffer.concat([Buffer.from('{"name":"bytes'), Buffer.from(bad), Buffer.from('","isActive":true}')]);
    await refused(
      t,
      await send('/api/projects', { method: 'POST', headers: json, body }),
      400,
      'malformed_body',
      `bytes ${Buffer.from(bad).toString('hex')}`,
    );
  }
  t.same(
    (await projectNames()).filter((n) => n.startsWith('bytes')),
    [],
    'nothing was stored',
  );
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ name: `bom ${Date.now()}`, isActive: true }))]);
  t.equal(
    (await send('/api/projects', { method: 'POST', headers: json, body: bom })).status,
    200,
    'a byte order mark before JSON is skipped',
  );
});

t.test('values nested past 64 levels answer 400, also as a device write or control value', async (t) => {
  const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const id = '00000000-0000-4000-8000-000000000000';
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: json, body: `{"name":"deep","isActive":true,"properties":${nest(70)}}` }),
    400,
    'validation_failed',
    '70 levels in a project',
  );
  await refused(
    t,
    await send(`/api/connections/${id}/write`, {
      method: 'POST',
      headers: json,
      body: `{"reference":"LD0/GGIO1.SPCSO1.stVal","fc":"ST","value":${nest(5000)}}`,
    }),
    400,
    'validation_failed',
    'a write value 5,000 levels deep',
  );
  await refused(
    t,
    await send(`/api/connections/${id}/control`, {
      method: 'POST',
      headers: json,
      body: `{"reference":"LD0/GGIO1.SPCSO1","value":${nest(100_000)}}`,
    }),
    400,
    'validation_failed',
    'a control value 100,000 levels deep',
  );
  const res = await send('/api/projects', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: `nested ${Date.now()}`, isActive: true, properties: JSON.stringify(JSON.parse(nest(60))) }),
  });
  t.equal(res.status, 200, '60 levels inside a string are just text');
});

t.test('content codings: gzip and deflate are read; others 415; bytes that do not decode 400', async (t) => {
  const entity = (name: string) => Buffer.from(JSON.stringify({ name, isActive: true }));
  const gz = `gz ${Date.now()}`;
  t.equal(
    (await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(entity(gz)) })).status,
    200,
    'gzip',
  );
  const df = `df ${Date.now()}`;
  t.equal(
    (await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': 'deflate' }, body: deflateSync(entity(df)) }))
      .status,
    200,
    'deflate',
  );
  t.ok((await projectNames()).includes(gz) && (await projectNames()).includes(df), 'both stored');
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': 'deflate' }, body: entity('garbage-df') }),
    400,
    'malformed_body',
    'deflate that is not deflate',
  );
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: Buffer.from('not gzip at all') }),
    400,
    'malformed_body',
    'gzip that is not gzip',
  );
  await refused(
    t,
    await send('/api/projects', {
      method: 'POST',
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipSync(entity('cut')).subarray(0, 20),
    }),
    400,
    'malformed_body',
    'gzip cut short',
  );
  for (const coding of ['br', 'compress', 'zstd', 'gzip, gzip', 'x-unknown']) {
    await refused(
      t,
      await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': coding }, body: entity('coded') }),
      415,
      'unsupported_media_type',
      `Content-Encoding: ${coding}`,
    );
  }
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: bomb }),
    413,
    'payload_too_large',
    '64 MiB expanding from a small gzip',
  );
  await refused(
    t,
    await send('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
      body: Buffer.from('{"username":"a"}'),
    }),
    400,
    'malformed_body',
    'a /login that does not inflate',
  );
  t.same(
    (await projectNames()).filter((n) => ['garbage-df', 'cut', 'coded'].includes(n)),
    [],
    'nothing refused was stored',
  );
});

t.test('file parts where no file is taken answer 400 and leave nothing on disk', async (t) => {
  const withFile = new FormData();
  withFile.set('project', JSON.stringify({ name: 'with a file', isActive: true }));
  withFile.set('file', new Blob([Buffer.alloc(200_000, 1)]), 'picture.png');
  await refused(
    t,
    await send('/api/projects', { method: 'POST', headers: editor.headers, body: withFile }),
    400,
    'validation_failed',
    'a file part on POST /api/projects',
  );
  const loginFile = new FormData();
  loginFile.set('username', 'admin');
  loginFile.set('password', new Blob(['secret']), 'password.txt');
  await refused(t, await send('/login', { method: 'POST', body: loginFile }), 400, 'validation_failed', 'a file part on /login');
  t.same(await uploads(), [], 'no temporary file');
  t.notOk((await projectNames()).includes('with a file'), 'nothing was stored');
  const blob = new FormData();
  blob.set('project', new Blob([JSON.stringify({ name: `blob ${Date.now()}`, isActive: true })], { type: 'application/json' }), 'blob');
  t.equal(
    (await send('/api/projects', { method: 'POST', headers: editor.headers, body: blob })).status,
    200,
    'a JSON Blob part is text, not a file',
  );
});

t.test('SCL uploads: the connection part as a field or as a JSON Blob; other parts 400; no file left behind', async (t) => {
  const base = '/api/protocols/iec61850/connections/with-file';
  const projectId = (
    (await (
      await send('/api/projects', { method: 'POST', headers: json, body: JSON.stringify({ name: `scl ${Date.now()}`, isActive: true }) })
    ).json()) as { id: string }
  ).id;
  const connection = (name: string) => JSON.stringify({ name, ip: '10.0.0.5', port: 102, projectId, protocol: 'IEC 61850' });
  const scl = generateScd(1) as Uint8Array<ArrayBuffer>;
  const upload = (build: (f: FormData) => void) => {
    const f = new FormData();
    build(f);
    return send(base, { method: 'POST', headers: editor.headers, body: f });
  };
  const asBlob = await upload((f) => {
    f.set('connection', new Blob([connection('as blob')], { type: 'application/json' }), 'blob');
    f.set('file', new Blob([scl]), 'station.scd');
  });
  t.equal(asBlob.status, 200, 'a JSON Blob with a file name, as a browser sends it');
  t.match(await asBlob.json(), { name: 'as blob', sclFile: { name: 'station.scd', size: scl.length } });
  t.equal(
    (
      await upload((f) =>
        f.set('connection', new Blob([connection('blob, no file')], { type: 'application/json; charset=utf-8' }), 'c.json'),
      )
    ).status,
    200,
    'a JSON Blob alone',
  );
  await refused(
    t,
    await upload((f) => {
      f.set('connection', connection('extra field'));
      f.set('comment', 'hello');
    }),
    400,
    'validation_failed',
    'an extra text field',
  );
  await refused(
    t,
    await upload((f) => {
      f.set('connection', new Blob([connection('octets')]), 'c.bin');
      f.set('file', new Blob([scl]), 'station.scd');
    }),
    400,
    'validation_failed',
    'a connection part of another type',
  );
  await refused(
    t,
    await upload((f) => {
      f.set('connection', connection('nul\u0000'));
      f.set('file', new Blob([scl]), 'station.scd');
    }),
    400,
    'validation_failed',
    'NUL in the connection name, with a file',
  );
  await refused(
    t,
    await upload((f) => {
      f.set('connection', connection('gone'));
      f.set('file', new Blob(['<SCL><broken']), 'broken.icd');
    }),
    400,
    'scl_invalid',
    'a broken file',
  );
  t.same(await uploads(), [], 'no temporary file after refused and accepted uploads alike');
  const names = ((await (await send('/api/connections', { headers: editor.headers })).json()) as { name: string }[]).map((c) => c.name);
  t.same(
    names.filter((n) => ['extra field', 'octets', 'gone'].includes(n) || n.startsWith('nul')),
    [],
    'nothing refused was stored',
  );
});

t.test('security headers: nosniff on every answer, HSTS only over HTTPS, no-store on API answers', async (t) => {
  for (const [path, init] of [
    ['/healthz', {}],
    ['/api/projects', { headers: editor.headers }],
    ['/api/nothing', {}],
    ['/openapi.json', {}],
  ] as const) {
    const res = await send(path, init);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${path}: nosniff`);
    t.equal(res.headers.get('strict-transport-security'), null, `${path}: no HSTS over HTTP`);
  }
  t.equal((await send('/api/projects', { headers: editor.headers })).headers.get('cache-control'), 'no-store', 'user data: no-store');
  t.equal(
    (await send('/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).headers.get('cache-control'),
    'no-store',
    'a refused sign-in: no-store',
  );
  const forwarded = await send('/healthz', { headers: { 'x-forwarded-proto': 'https' } });
  t.equal(forwarded.headers.get('strict-transport-security'), null, 'X-Forwarded-Proto from an untrusted peer changes nothing');
});

t.test('over HTTPS every answer carries Strict-Transport-Security', async (t) => {
  const { request } = await import('node:https');
  for (const path of ['/healthz', '/api/nothing', '/api/projects']) {
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      request(`${p.tlsUrl}${path}`, { rejectUnauthorized: false }, (r) => {
        r.resume();
        resolve(r.headers);
      })
        .on('error', reject)
        .end();
    });
    t.equal(headers['strict-transport-security'], 'max-age=31536000', `${path}: HSTS`);
    t.equal(headers['x-content-type-options'], 'nosniff', `${path}: nosniff`);
  }
});

t.test('CSRF: an Origin of another scheme, host or port is cross-site; the own origin passes', async (t) => {
  const res = await send('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: editor.username, password: editor.password }),
  });
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const host = new URL(p.url).host;
  const post = (origin: string) =>
    send('/api/projects', {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `csrf ${origin} ${Date.now()}`, isActive: true }),
    });
  for (const origin of [`https://${host}`, `http://${host.replace(/:\d+$/, ':1')}`, 'http://evil.example', 'null']) {
    await refused(t, await post(origin), 403, 'csrf_rejected', `Origin ${origin}`);
  }
  t.equal((await post(`http://${host}`)).status, 200, 'the own origin');
  t.equal((await post(`HTTP://${host.toUpperCase()}`)).status, 200, 'the own origin, written in capitals');
});
