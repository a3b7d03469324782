/**
 * Live IEC 61850 sessions through the gateway, against the device simulator on loopback: start and stop,
 * the session view, read, write, report blocks whose reports arrive as bus events, each control model,
 * a device restart, a takeover by another replica, and the refusals.
 */
import t from 'tap';
import { protocolService } from '@scada/protocol';
import { startService } from '@scada/platform';
import { startSimulator } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { secretsKeyOf, startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';
import { until } from '@scada/testkit/live';
import { testBusKeys } from '@scada/testkit/bus_keys';
import { platformNatsEnv } from '@scada/testkit/nats_auth';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '1000',
  MMS_IDLE_PROBE_MS: '2000',
  MMS_REQUEST_TIMEOUT_MS: '2000',
});
t.teardown(() => p.stop());

const D = 'SIMLD0';

t.test(`live sessions with a simulated device (${p.mode})`, async (t) => {
  const outer = t;
  const editor = await signIn(p, { role: 'editor' });
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: `live-${Date.now()}`, isActive: true }),
    })
  ).json()) as { id: string };
  const form = new FormData();
  form.set('connection', JSON.stringify({ name: 'sim', ip: '127.0.0.1', port: sim.port, projectId: project.id, protocol: 'IEC 61850' }));
  const created = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
    method: 'POST',
    headers: editor.headers,
    body: form,
  });
  t.equal(created.status, 200);
  const id = ((await created.json()) as { id: string }).id;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${p.url}/api/connections/${id}${path}`, {
      method,
      headers: body === undefined ? editor.headers : json,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const status = async () => (await (await api('GET', '/status')).json()) as string;
  const session = async () =>
    (await (await api('GET', '/session')).json()) as {
      state: string;
      started: boolean;
      reconnects: number;
      identity: { vendor: string } | null;
      heldBy: string | null;
    };
  const reports: { connectionId: string; values: { reference: string; value: unknown }[] }[] = [];
  p.proc.bus.subscribe('events.protocol.report', (m) => void reports.push(JSON.parse(new TextDecoder().decode(m.data))));

  t.test('start connects; the session says with whom', async (t) => {
    t.equal(await status(), 'Disconnected', 'not started yet');
    t.match(await session(), { started: false, state: 'stopped', heldBy: null });
    t.equal((await api('POST', '/read', { references: [`${D}/GGIO1.AnIn1.mag.f[MX]`] })).status, 409, 'reading needs a connection');
    t.equal((await api('POST', '/start')).status, 204);
    await until('Connected', async () => (await status()) === 'Connected');
    t.match(await session(), { started: true, state: 'connected', identity: { vendor: 'ACME' } });
    t.equal((await api('POST', '/start')).status, 204, 'starting again changes nothing');
    t.equal(sim.connections(), 1, 'one association');
    const browsed = (await (await api('GET', '/browse')).json()) as {
      source: string;
      logicalDevices: { name: string; logicalNodes: { name: string }[] }[];
    };
    t.equal(browsed.source, 'device', 'browse asks the connected device');
    t.ok(
      browsed.logicalDevices.some((ld) => ld.name === D && ld.logicalNodes.some((ln) => ln.name === 'GGIO1')),
      'and lists its logical devices and nodes',
    );
  });

  t.test('read and write values', async (t) => {
    const read = await api('POST', '/read', {
      references: [`${D}/GGIO1.AnIn1.mag.f[MX]`, `${D}/GGIO1$MX$AnIn1$mag$f`, `${D}/GGIO9.Nothing.stVal[ST]`],
    });
    t.equal(read.status, 200);
    const values = (await read.json()) as { reference: string; value?: unknown; error?: string }[];
    t.equal(values[0].value, 1.5, 'in IEC 61850 notation');
    t.equal(values[1].value, 1.5, 'in MMS notation');
    t.ok(values[2].error, 'an object that does not exist answers its error');
    t.equal((await api('POST', '/read', { references: ['no-slash'] })).status, 400, 'a malformed reference');
    t.equal((await api('POST', '/read', { references: [] })).status, 400, 'nothing to read');
    t.equal(
      (await api('POST', '/write', { reference: `${D}/GGIO1.AnIn1.mag.f[MX]`, value: 2 })).status,
      400,
      'a measurement is read-only by the model',
    );
    t.equal((await api('POST', '/write', { reference: `${D}/LLN0.NamPlt.vendor[DC]`, value: 'Plant' })).status, 204);
    const back = (await (await api('POST', '/read', { references: [`${D}/LLN0.NamPlt.vendor[DC]`] })).json()) as { value: unknown }[];
    t.equal(back[0].value, 'Plant', 'the write reads back');
    t.equal(
      (await api('POST', '/write', { reference: `${D}/LLN0.NamPlt.vendor[DC]`, value: { x: 1 } })).status,
      400,
      'a value of the wrong type',
    );
  });

  t.test('a report block kept enabled: its reports arrive as bus events and as last values', async (t) => {
    t.equal(
      (await api('POST', '/reports', { rcb: `${D}/LLN0$RP$urcb01`, generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] })).status,
      204,
    );
    await until('the general interrogation report', async () => reports.some((r) => r.connectionId === id));
    t.match(await (await api('GET', '/reports')).json(), [{ rcb: `${D}/LLN0$RP$urcb01`, generalInterrogation: true }]);
    const before = reports.length;
    sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
    const changed = await until('a change report', async () =>
      reports.slice(before).find((r) => r.values.some((v) => v.reference.includes('Ind1') && v.value === true)),
    );
    t.ok(changed, 'the change is reported');
    const last = (await (await api('GET', '/values')).json()) as { reference: string; value: unknown }[];
    t.ok(
      last.some((v) => v.reference.includes('Ind1') && v.value === true),
      'and remembered as the last value',
    );
    const rcb = encodeURIComponent(`${D}/LLN0$RP$urcb01`);
    t.equal((await api('POST', '/reports', { rcb: `${D}/LLN0$RP$nothing01` })).status, 404, 'a block the device does not have is refused');
    t.notOk(
      ((await (await api('GET', '/reports')).json()) as { rcb: string }[]).some((r) => r.rcb.includes('nothing')),
      'and not kept',
    );
    t.equal((await api('DELETE', `/reports?rcb=${rcb}`)).status, 204, 'disabled');
    t.same(await (await api('GET', '/reports')).json(), [], 'no longer kept');
    t.equal((await api('DELETE', `/reports?rcb=${rcb}`)).status, 404, 'disabling it twice: not enabled');
    const quiet = reports.length;
    sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: false });
    await new Promise((r) => setTimeout(r, 300));
    t.equal(reports.length, quiet, 'the device reports no more');
    t.equal(
      (await api('POST', '/reports', { rcb: `${D}/LLN0$RP$urcb01`, generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] })).status,
      204,
      'enabled again',
    );
  });

  t.test('controls in each model; a status-only object refuses', async (t) => {
    for (const [n, model] of [
      [1, 'direct'],
      [2, 'select before operate'],
      [3, 'direct, enhanced security'],
      [4, 'select before operate, enhanced security'],
    ] as const) {
      const res = await api('POST', '/control', { reference: `${D}/GGIO1.SPCSO${n}`, value: true });
      t.equal(res.status, 204, `${model}: ${res.status === 204 ? 'operated' : await res.text()}`);
      t.same(sim.value(`${D}/GGIO1$ST$SPCSO${n}$stVal`), { type: 'boolean', value: true }, `${model}: the device's state follows`);
    }
    const refused = await api('POST', '/control', { reference: `${D}/GGIO1.SPCSO5`, value: true });
    t.equal(refused.status, 400, 'status-only cannot be operated');
  });

  t.test('the device restarts: the session reconnects and re-enables its report block', async (t) => {
    const { reconnects } = await session();
    await sim.restart();
    await until('reconnected', async () => {
      const s = await session();
      return s.state === 'connected' && s.reconnects > reconnects;
    });
    const before = reports.length;
    sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
    await until('a report after the reconnect', async () => reports.slice(before).some((r) => r.connectionId === id));
    t.pass('reports flow again');
  });

  t.test('another replica takes the connection over when the holder stops', async (t) => {
    const first = p.proc.services.find((s) => s.name === 'protocol')!;
    const holder = (await session()).heldBy;
    t.equal(holder, first.instance);
    const second = await startService(protocolService, {
      bus: p.proc.bus,
      store: p.proc.store!,
      log: p.proc.log,
      config: p.proc.config.services.protocol as never,
      instance: 'replica-two',
    });
    outer.teardown(() => second.stop());
    await first.stop();
    await until('held by the other replica', async () => {
      const s = await session();
      return s.heldBy === 'replica-two' && s.state === 'connected';
    });
    t.equal(sim.connections(), 1, 'still one association');
    const read = (await (await api('POST', '/read', { references: [`${D}/GGIO1.AnIn1.mag.f[MX]`] })).json()) as { value: unknown }[];
    t.equal(read[0].value, 1.5, 'requests reach the new holder');
  });

  t.test('stop ends the association; a hundred start and stop calls leave nothing behind', async (t) => {
    for (let i = 0; i < 50; i++) {
      const started = await api('POST', '/start');
      t.equal(started.status, 204);
      t.equal((await api('POST', '/stop')).status, 204);
    }
    await until('the association ended', async () => sim.connections() === 0 && (await status()) === 'Disconnected');
    t.match(await session(), { started: false });
    const browse = await api('GET', '/browse');
    t.equal(browse.status, 409, 'a stopped connection without a file has no model to browse');
    t.match(await browse.json(), { code: 'no_scl_file' });
  });

  t.test('another space: its connections do not exist for the caller', async (t) => {
    const other = await createSpace(p, `elsewhere-${Date.now()}`);
    const outsider = await signIn(p, { role: 'editor', spaces: [other] });
    t.equal((await fetch(`${p.url}/api/connections/${id}/start`, { method: 'POST', headers: outsider.headers })).status, 404);
    t.equal((await fetch(`${p.url}/api/connections/${id}/session`, { headers: outsider.headers })).status, 404);
  });
});

t.test(
  'a holder killed with SIGKILL: another replica takes the connection over within 15 s',
  {
    skip: process.env.NATS_URL && process.env.DATABASE_URL ? false : 'needs NATS_URL and DATABASE_URL (replicas in processes of their own)',
  },
  async (t) => {
    const { startMain } = await import('@scada/testkit/processes');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const q = await startTestPlatform({ SESSION_LEASE_SECONDS: '3', MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '1000' });
    t.teardown(() => q.stop());
    const editor = await signIn(q, { role: 'editor' });
    const json = { ...editor.headers, 'content-type': 'application/json' };
    const project = (await (
      await fetch(`${q.url}/api/projects`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: `kill-${Date.now()}`, isActive: true }),
      })
    ).json()) as { id: string };
    const form = new FormData();
    form.set('connection', JSON.stringify({ name: 'sim', ip: '127.0.0.1', port: sim.port, projectId: project.id, protocol: 'IEC 61850' }));
    const id = (
      (await (
        await fetch(`${q.url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers: editor.headers, body: form })
      ).json()) as { id: string }
    ).id;
    const session = async () =>
      (await (await fetch(`${q.url}/api/connections/${id}/session`, { headers: editor.headers })).json()) as {
        state: string;
        heldBy: string | null;
      };

    // A protocol replica in a process of its own, and the in-process one stopped: the process holds it.
    const dataDir = await mkdtemp(join(tmpdir(), 'scada-kill-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const replica = startMain({
      SERVICES: 'protocol',
      ...platformNatsEnv(),
      ...testBusKeys,
      DATABASE_URL: q.proc.config.platform.databaseUrl!,
      // The protocol service seals connection secrets under the platform's key, as the auth service does.
      SECRETS_KEY: secretsKeyOf(q).toString('base64'),
      BUS_SUBJECT_PREFIX: q.proc.config.platform.busSubjectPrefix!,
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      LOG_LEVEL: 'warn',
      SESSION_LEASE_SECONDS: '3',
      MMS_RECONNECT_MIN_MS: '100',
      MMS_RECONNECT_MAX_MS: '1000',
    });
    t.teardown(() => void replica.child.kill('SIGKILL'));
    const inProcess = q.proc.services.find((s) => s.name === 'protocol')!;
    // The process answers the protocol service's ping once it runs; then the in-process replica steps down.
    const { call } = await import('@scada/platform');
    const { protocolPing } = await import('@scada/contracts');
    await until(
      'the replica process to serve',
      async () => {
        const pong = await call(q.proc.bus, protocolPing, { params: {}, query: {} } as never, {
          requestId: 'kill-test',
          timeoutMs: 1000,
        }).catch(() => null);
        return pong !== null && (pong as { instance: string }).instance !== inProcess.instance;
      },
      60_000,
    );
    await inProcess.stop();
    t.equal((await fetch(`${q.url}/api/connections/${id}/start`, { method: 'POST', headers: editor.headers })).status, 204);
    const held = await until('held by the replica process', async () => {
      const s = await session();
      return s.state === 'connected' && s.heldBy ? s : undefined;
    });
    t.not(held.heldBy, inProcess.instance, 'the process holds it');

    // A new replica here; the process killed without a chance to give its lease up.
    const successor = await startService(protocolService, {
      bus: q.proc.bus,
      store: q.proc.store!,
      log: q.proc.log,
      config: q.proc.config.services.protocol as never,
      instance: 'successor',
    });
    t.teardown(() => successor.stop());
    const killedAt = Date.now();
    replica.child.kill('SIGKILL');
    await replica.exited;
    await until(
      'taken over',
      async () => {
        const s = await session();
        return s.heldBy === 'successor' && s.state === 'connected';
      },
      20_000,
    );
    const ms = Date.now() - killedAt;
    t.ok(ms <= 15_000, `taken over ${ms} ms after the kill`);
    await until('one association', async () => sim.connections() === 1);
    t.equal((await fetch(`${q.url}/api/connections/${id}/stop`, { method: 'POST', headers: editor.headers })).status, 204);
  },
);
