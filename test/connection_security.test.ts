/**
 * Security of device connections through the HTTP API (IEC 62351-3 TLS, ACSE password), against simulated
 * devices: the right password connects and a wrong one is the session's lastError; a device certificate
 * signed by the configured CA connects and another CA is the lastError; a replacement without the fields
 * keeps them and null removes them, and a started connection associates again with what changed. Secrets
 * are never answered (connection, list, browse, the live snapshot) and sit sealed in the store.
 */
import { X509Certificate } from 'node:crypto';
import { secretBox } from '@scada/auth';
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import { testPki } from '@scada/testkit/certificates';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { secretsKeyOf, startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { until } from '@scada/testkit/live';
import { openSse, type SseEvent } from '@scada/testkit/sse';

const pki = await testPki();
const model = await fixtureModel();
const password = 'feeder-7-secret';
const passwordDevice = await startSimulator({ model, port: 0, authentication: { password } });
const tlsDevice = await startSimulator({
  model,
  port: 0,
  tls: { cert: pki.device.cert, key: pki.device.key, ca: pki.ca.cert, requireClientCert: true },
});
t.teardown(() => Promise.all([passwordDevice.stop(), tlsDevice.stop()]));
const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '1000', MMS_REQUEST_TIMEOUT_MS: '5000' });
t.teardown(() => p.stop());

/** Lines of the client key's PEM body: none of them may appear anywhere but sealed. */
const keyLines = pki.client.key.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
/** Whether a text shows a secret: the password, or any part of the client key. */
const showsSecret = (text: string) => text.includes(password) || text.includes('PRIVATE KEY') || keyLines.some((l) => text.includes(l));
const subjectOf = (pem: string) => new X509Certificate(pem).subject.replace(/\n/g, ', ');

t.test(`connection security (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: `sec-${Date.now()}`, isActive: true }),
    })
  ).json()) as { id: string };
  const base = (name: string, port: number) => ({ name, ip: '127.0.0.1', port, projectId: project.id, protocol: 'IEC 61850' });
  const get = async (path: string) => {
    const res = await fetch(`${p.url}${path}`, { headers: editor.headers });
    return { status: res.status, text: await res.text() };
  };
  const connection = async (id: string) => JSON.parse((await get(`/api/connections/${id}`)).text) as Record<string, any>;
  const session = async (id: string) => JSON.parse((await get(`/api/connections/${id}/session`)).text) as Record<string, any>;
  const start = async (id: string) =>
    t.equal((await fetch(`${p.url}/api/connections/${id}/start`, { method: 'POST', headers: editor.headers })).status, 204);
  const put = (id: string, body: unknown) =>
    fetch(`${p.url}/api/connections/${id}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
  const lastError = (id: string, pattern: RegExp) =>
    until(`lastError ${pattern}`, async () => pattern.test((await session(id)).lastError ?? '') && (await session(id)), 30_000);
  const connected = (id: string) => until('connected', async () => (await session(id)).state === 'connected', 30_000);
  const answers: string[] = [];

  let pwId = '';
  t.test('a connection with the right password connects; answers say only that it has one', async (t) => {
    const res = await fetch(`${p.url}/api/connections`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ ...base('pw', passwordDevice.port), authentication: { password } }),
    });
    t.equal(res.status, 201);
    const created = (await res.json()) as Record<string, any>;
    pwId = created.id;
    t.match(created, { hasPassword: true, tls: null });
    await start(pwId);
    await connected(pwId);
    t.match(await connection(pwId), { hasPassword: true });
    answers.push((await get(`/api/connections/${pwId}`)).text, (await get('/api/connections')).text);
    const browsed = await get(`/api/connections/${pwId}/browse`);
    t.match(JSON.parse(browsed.text), { source: 'device' }, 'browse reaches the device through the association');
    answers.push(browsed.text);
  });

  t.test('a wrong password is the session lastError; a replacement without it keeps it; null removes it', async (t) => {
    t.equal((await put(pwId, { ...base('pw', passwordDevice.port), authentication: { password: 'not-it' } })).status, 204);
    const s = await lastError(pwId, /the device refused the association: authentication failed/);
    t.not(s.state, 'connected', 'the started connection associated again with the new password');
    t.equal((await put(pwId, { ...base('pw', passwordDevice.port), dsc: 'renamed' })).status, 204);
    t.match(await connection(pwId), { hasPassword: true, dsc: 'renamed' }, 'kept without the field');
    t.equal((await put(pwId, { ...base('pw', passwordDevice.port), authentication: null })).status, 204);
    t.match(await connection(pwId), { hasPassword: false }, 'removed by null');
    await lastError(pwId, /authentication required/);
    t.equal((await put(pwId, { ...base('pw', passwordDevice.port), authentication: { password } })).status, 204);
    await connected(pwId);
    t.equal((await session(pwId)).lastError, null, 'the right password again: connected');
  });

  let tlsId = '';
  t.test('TLS with a device certificate the configured CA signed, and a client certificate, connects (multipart upload)', async (t) => {
    const form = new FormData();
    const tls = { caCert: pki.ca.cert, clientCert: pki.client.cert, clientKey: pki.client.key };
    form.set('connection', new Blob([JSON.stringify({ ...base('tls', tlsDevice.port), tls })], { type: 'application/json' }), 'c.json');
    const res = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
      method: 'POST',
      headers: editor.headers,
      body: form,
    });
    t.equal(res.status, 200);
    const text = await res.text();
    answers.push(text);
    tlsId = JSON.parse(text).id;
    t.match(JSON.parse(text), {
      hasPassword: false,
      tls: {
        caSubject: subjectOf(pki.ca.cert),
        clientCertSubject: subjectOf(pki.client.cert),
        clientCertExpires: new Date(new X509Certificate(pki.client.cert).validTo).toISOString(),
        serverName: null,
      },
    });
    await start(tlsId);
    await connected(tlsId);
    answers.push((await get(`/api/connections/${tlsId}`)).text, (await get(`/api/connections/${tlsId}/browse`)).text);
  });

  t.test('another CA, or a name the certificate lacks, is the lastError; the name is checked only when given', async (t) => {
    const keep = { clientCert: pki.client.cert, clientKey: pki.client.key };
    t.equal((await put(tlsId, { ...base('tls', tlsDevice.port), tls: { caCert: pki.otherCa.cert, ...keep } })).status, 204);
    await lastError(tlsId, /^TLS: the device's certificate is not signed by the configured CA$/);
    t.equal(
      (await put(tlsId, { ...base('tls', tlsDevice.port), tls: { caCert: pki.ca.cert, ...keep, serverName: 'feeder.example' } })).status,
      204,
    );
    await lastError(tlsId, /^TLS: the device's certificate is not for feeder\.example/);
    t.equal(
      (await put(tlsId, { ...base('tls', tlsDevice.port), tls: { caCert: pki.ca.cert, ...keep, serverName: 'localhost' } })).status,
      204,
    );
    await connected(tlsId);
    t.match((await connection(tlsId)).tls, { serverName: 'localhost' });
    t.equal((await put(tlsId, { ...base('tls', tlsDevice.port), tls: { caCert: pki.ca.cert } })).status, 204);
    await lastError(tlsId, /^TLS: the device .*client certificate/);
    t.equal((await put(tlsId, { ...base('tls', tlsDevice.port), tls: { caCert: pki.ca.cert, ...keep } })).status, 204);
    await connected(tlsId);
  });

  t.test('certificates and keys that do not fit are refused before anything is stored', async (t) => {
    const refused = async (tls: unknown, path: string) => {
      const res = await fetch(`${p.url}/api/connections`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ ...base(`bad-${path}`, 3782), tls }),
      });
      t.equal(res.status, 400, path);
      const problem = (await res.json()) as { errors: { path: string }[] };
      t.match(problem.errors, [{ path: `/body/tls/${path}` }], `names ${path}`);
    };
    await refused({ caCert: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' }, 'caCert');
    await refused({ caCert: pki.ca.cert, clientCert: pki.client.cert, clientKey: pki.device.key }, 'clientKey');
    await refused({ caCert: pki.ca.cert, clientCert: pki.client.cert }, 'clientKey');
    const names = (JSON.parse((await get('/api/connections')).text) as { name: string }[]).map((c) => c.name);
    t.notOk(
      names.some((n) => n.startsWith('bad-')),
      'none of them was stored',
    );
  });

  t.test('secrets appear in no answer: connection, list, browse, the live snapshot', async (t) => {
    answers.push((await get('/api/connections')).text, (await get(`/api/connections/by-project?projectId=${project.id}`)).text);
    const live = await openSse(`${p.url}/api/live?connections=${pwId},${tlsId}&topics=sessions,values`, editor.headers);
    t.teardown(() => live.close());
    const snapshot = await live.wait((e: SseEvent) => 'event' in e && e.event === 'snapshot', 20_000);
    answers.push(JSON.stringify(snapshot));
    t.equal(answers.filter(showsSecret).length, 0, `none of ${answers.length} answers shows the password or the key`);
    t.ok(
      answers.some((a) => a.includes('hasPassword')),
      'while they do describe the settings',
    );
    t.notOk(showsSecret(JSON.stringify(p.logs)), 'nor does any log line');
  });

  t.test('the store holds them sealed: a dump alone shows neither password nor key', async (t) => {
    const { rows } = await p.proc.store!.query<Record<string, any>>('select * from protocol.connections where id = any($1::uuid[])', [
      [pwId, tlsId],
    ]);
    const dump = JSON.stringify(rows);
    t.notOk(showsSecret(dump), 'no plain password or key in the rows');
    const pw = rows.find((r) => r.id === pwId)!;
    const tls = rows.find((r) => r.id === tlsId)!;
    t.match(pw.password_sealed, /^enc:v1:/);
    t.match(tls.tls_sealed, /^enc:v1:/);
    const box = secretBox(secretsKeyOf(p));
    t.equal(box.open(pw.password_sealed, `iec61850-password:${pw.space}/${pwId}`), password, 'SECRETS_KEY opens the password');
    t.throws(() => box.open(pw.password_sealed, `iec61850-password:${tls.space}/${tlsId}`), 'bound to its connection');
    t.match(JSON.parse(box.open(tls.tls_sealed, `iec61850-tls:${tls.space}/${tlsId}`)), { key: pki.client.key }, 'and the key');
  });
});
