/**
 * Telling the operator the truth about a device, through the gateway against the simulator: the device's
 * own reasons for a refusal, what the model rules out before the device is asked, one control per object
 * at a time, and a connection that is not connected.
 */
import t from 'tap';
import { operateConnectionControl, type ProblemError } from '@scada/contracts';
import { call } from '@scada/platform';
import { startSimulator, type Faults } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';

const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '1000',
  MMS_REQUEST_TIMEOUT_MS: '2000',
});
t.teardown(() => p.stop());

const D = 'SIMLD0';
type Problem = { status: number; code: string; detail: string; deviceError?: { service: string; error: string; addCause?: string } };

t.test(`the device's truth (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  const problem = async (res: Response) => (await res.json()) as Problem;

  t.test('a connection that is not connected answers 409 not_connected', async (t) => {
    const res = await c.api('POST', '/write', { reference: `${D}/LLN0.NamPlt.vendor[DC]`, value: 'x' });
    t.equal(res.status, 409);
    t.equal((await problem(res)).code, 'not_connected');
    await c.connect();
  });

  t.test('a write the device refuses carries its reason', async (t) => {
    for (const [code, error] of [
      [11, 'object-value-invalid'],
      [2, 'temporarily-unavailable'],
      [3, 'object-access-denied'],
    ] as const) {
      faults.refuseWrites = { [`${D}/LLN0$DC$NamPlt$vendor`]: code };
      const res = await c.api('POST', '/write', { reference: `${D}/LLN0.NamPlt.vendor[DC]`, value: 'Plant' });
      t.equal(res.status, 502, error);
      const body = await problem(res);
      t.match(body, { code: 'device_refused', deviceError: { service: 'write', error } });
      t.match(body.detail, error, 'the detail names the reason');
    }
    delete faults.refuseWrites;
    const refusals = p.logs.filter((l) => l.msg === 'device refused');
    t.ok(refusals.length >= 3, 'each refusal is logged');
    t.ok(
      refusals.every((l) => l.level === 40 && !('err' in l) && !('stack' in l)),
      'at warn, without a stack',
    );
    t.notOk(
      p.logs.some((l) => l.level >= 50 && String(l.msg).includes('refused')),
      'and never at error',
    );
  });

  t.test('the model rules out before the device is asked: read-only 400, unknown 404', async (t) => {
    let writes = 0;
    const count = (e: { request: { service: string } }) => void (e.request.service === 'write' && writes++);
    sim.on('request', count);
    const readOnly = await c.api('POST', '/write', { reference: `${D}/GGIO1.AnIn1.mag.f[MX]`, value: 2 });
    t.equal(readOnly.status, 400, 'a measurement is read-only');
    t.equal((await c.api('POST', '/write', { reference: `${D}/GGIO1.Ind1.stVal[ST]`, value: true })).status, 400, 'so is a status');
    const unknown = await c.api('POST', '/write', { reference: `${D}/GGIO1.Nothing.stVal[SP]`, value: 1 });
    t.equal(unknown.status, 404, 'an object the device does not have');
    t.equal(
      (await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO5`, value: true })).status,
      400,
      'a status-only object cannot be operated',
    );
    t.equal((await c.api('POST', '/control', { reference: `${D}/GGIO1.Nothing`, value: true })).status, 404, 'an unknown control object');
    sim.off('request', count);
    t.equal(writes, 0, 'the device was asked to write nothing');
  });

  t.test('a refused control carries the AddCause', async (t) => {
    faults.refuseControls = true;
    const direct = await problem(await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: true }));
    t.match(direct, {
      status: 502,
      code: 'device_refused',
      deviceError: { service: 'operate', error: 'object-access-denied', addCause: 'Blocked-by-process' },
    });
    const select = await problem(await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO4`, value: true }));
    t.match(
      select,
      { code: 'device_refused', deviceError: { service: 'select', addCause: 'Blocked-by-process' } },
      'a refused select says so',
    );
    const sbo = await problem(await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO2`, value: true }));
    t.match(
      sbo,
      { code: 'device_refused', deviceError: { service: 'select', error: 'select-refused' } },
      'a normal-security select the device refuses',
    );
    faults.refuseControls = false;
    faults.negativeTermination = 10;
    const ended = await problem(await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO3`, value: true }));
    t.match(
      ended,
      {
        code: 'device_refused',
        deviceError: { service: 'operate', error: 'negative-command-termination', addCause: 'Blocked-by-interlocking' },
      },
      'a negative CommandTermination',
    );
    delete faults.negativeTermination;
  });

  t.test('two controls on one object at once: the second answers 409 at once, each its own outcome', async (t) => {
    // The device ends the first operation 3 s after it: the second is asked once the device has the first,
    // so while the first is under way.
    faults.terminationDelayMs = 3000;
    let operates = 0;
    let operated: () => void = () => {};
    const reached = new Promise<void>((r) => (operated = r));
    const count = (n: { action: string; reference: string }) => {
      if (n.action === 'operate' && n.reference.endsWith('SPCSO3')) {
        operates++;
        operated();
      }
    };
    sim.on('control', count);
    let firstDone = false;
    const first = c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO3`, value: false }).finally(() => (firstDone = true));
    await reached;
    const second = await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO3`, value: true });
    t.equal(second.status, 409);
    t.equal((await problem(second)).code, 'control_in_progress');
    t.notOk(firstDone, 'at once, not after the first');
    t.equal((await first).status, 204, 'the first gets its own outcome');
    const other = await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: true });
    t.equal(other.status, 204, 'another object is not held up');
    t.equal(
      (await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO3`, value: true })).status,
      204,
      'once done, the object takes the next',
    );
    sim.off('control', count);
    t.equal(operates, 2, 'the device operated the object only for the two that were answered 204');
    delete faults.terminationDelayMs;
  });

  t.test('a termination later than the deadline answers within the deadline', async (t) => {
    faults.terminationDelayMs = 60_000;
    const started = Date.now();
    // Through the bus contract, with a short deadline of the caller's (the gateway's is 30 s).
    const answer = await call(
      p.proc.bus,
      operateConnectionControl,
      { params: { connectionId: c.id }, query: {}, body: { reference: `${D}/GGIO1.SPCSO3`, value: true } } as never,
      {
        requestId: 'deadline-test',
        space: 'default',
        actor: null,
        timeoutMs: 1500,
      },
    ).then(
      () => null,
      (err: unknown) => err as ProblemError,
    );
    delete faults.terminationDelayMs;
    t.equal(answer?.code, 'upstream_timeout', answer?.detail ?? 'answered');
    t.ok(Date.now() - started < 3000, 'answered near the deadline');
    t.equal(
      (await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: false })).status,
      204,
      'and the association lives on',
    );
  });

  t.test('every write and control is in the control log, newest first, for editors of the space', async (t) => {
    faults.refuseWrites = { [`${D}/LLN0$DC$NamPlt$vendor`]: 11 };
    t.equal((await c.api('POST', '/write', { reference: `${D}/LLN0.NamPlt.vendor[DC]`, value: 'Refused' })).status, 502);
    delete faults.refuseWrites;
    t.equal((await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: true })).status, 204);
    const res = await c.api('GET', '/control-log?size=2');
    t.equal(res.status, 200);
    type Entry = {
      at: string;
      username: string;
      action: string;
      reference: string;
      value: unknown;
      outcome: string;
      status: number;
      deviceError: unknown;
    };
    const page = (await res.json()) as { content: Entry[]; totalElements: number; totalPages: number; number: number; size: number };
    t.equal(page.content.length, 2, 'a page of two');
    t.match(
      page.content[0],
      {
        username: c.editor.username,
        action: 'control',
        reference: `${D}/GGIO1.SPCSO1`,
        value: true,
        outcome: 'ok',
        status: 204,
        deviceError: null,
      },
      'the newest first',
    );
    t.match(
      page.content[1],
      {
        action: 'write',
        value: 'Refused',
        outcome: 'device_refused',
        status: 502,
        deviceError: { service: 'write', error: 'object-value-invalid' },
      },
      "with the device's reason",
    );
    t.ok(page.totalElements >= 15, `every write and control so far (${page.totalElements})`);
    const outcomes = new Set<string>();
    for (let n = 0; n < page.totalPages; n++) {
      const more = (await (await c.api('GET', `/control-log?size=2&page=${n}`)).json()) as { content: Entry[] };
      for (const e of more.content) outcomes.add(e.outcome);
    }
    for (const o of ['ok', 'device_refused', 'bad_request', 'not_found', 'control_in_progress', 'not_connected', 'upstream_timeout'])
      t.ok(outcomes.has(o), `an outcome ${o} is kept`);
    const viewer = await signIn(p, { role: 'viewer' });
    t.equal(
      (await fetch(`${p.url}/api/connections/${c.id}/control-log`, { headers: viewer.headers })).status,
      403,
      'a viewer may not read it',
    );
    t.equal((await c.api('GET', '/control-log?size=0')).status, 400, 'a page size of 0');
  });
});
