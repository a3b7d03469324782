/**
 * The live channel end to end with the IEC 61850 simulator on loopback: a device report travels from
 * the simulator through the protocol service and the bus to the gateway and an SSE client, and the
 * session events tell the client when the device goes away and comes back.
 */
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { isEvent, openSse } from '@scada/testkit/sse';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '500',
  MMS_REQUEST_TIMEOUT_MS: '2000',
  MMS_IDLE_PROBE_MS: '2000',
});
t.teardown(() => p.stop());
const D = 'SIMLD0';

t.test(`device report → protocol service → bus → gateway → client (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const viewer = await signIn(p, { role: 'viewer' });
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: `live-device-${Date.now()}`, isActive: true }),
    })
  ).json()) as { id: string };
  const form = new FormData();
  form.set('connection', JSON.stringify({ name: 'sim', ip: '127.0.0.1', port: sim.port, projectId: project.id, protocol: 'IEC 61850' }));
  const id = (
    (await (
      await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers: editor.headers, body: form })
    ).json()) as { id: string }
  ).id;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${p.url}/api/connections/${id}${path}`, {
      method,
      headers: body === undefined ? editor.headers : json,
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const stream = await openSse(`${p.url}/api/live?connections=${id}`, viewer.headers);
  t.teardown(() => stream.close());
  t.match(await stream.wait(isEvent('snapshot')), { data: { sessions: [{ connectionId: id, state: 'stopped' }], values: [] } });

  t.equal((await api('POST', '/start')).status, 204);
  await stream.wait(
    isEvent('session', (d) => d.connectionId === id && d.state === 'connected'),
    15_000,
  );
  t.pass('the session event says the device is connected');
  t.equal(
    (await api('POST', '/reports', { rcb: `${D}/LLN0$RP$urcb01`, generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] })).status,
    204,
  );
  const from = stream.events.length;
  sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
  const value = await stream.wait(
    isEvent('value', (d) => String(d.reference).includes('Ind1') && d.value === true),
    15_000,
    from,
  );
  t.match(value, { data: { connectionId: id, rcb: `${D}/LLN0$RP$urcb01` } }, 'the reported value reaches the client');
  t.ok(Date.parse((value as { data: { receivedAt: string } }).data.receivedAt) > 0, 'with when the platform received it');

  const later = await openSse(`${p.url}/api/live?connections=${id}&topics=values`, viewer.headers);
  t.teardown(() => later.close());
  const snapshot = await later.wait(isEvent('snapshot'));
  t.ok(
    (snapshot as { data: { values: { reference: string; value: unknown; stale: boolean }[] } }).data.values.some(
      (v) => v.reference.includes('Ind1') && v.value === true && v.stale === false,
    ),
    'a later client finds it in its snapshot, not stale',
  );

  const gone = stream.events.length;
  await sim.restart();
  await stream.wait(
    isEvent('session', (d) => d.state === 'waiting' || d.state === 'connecting'),
    15_000,
    gone,
  );
  await stream.wait(
    isEvent('session', (d) => d.state === 'connected'),
    15_000,
    gone,
  );
  t.pass('the device went away and came back, and the client was told both');
  t.equal((await api('POST', '/stop')).status, 204);
});
