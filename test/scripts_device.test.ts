/**
 * What a script does to a device, against the simulator through the HTTP API: a read, a computation and a
 * write; controls with their truth (a select where the control model asks for one, the device's refusal
 * with its reason); every write and control in the control log under the actor `script:<id>`; the last
 * reported values; and host calls counting toward the run's deadline.
 */
import t from 'tap';
import { startSimulator, type Faults } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';
import { scriptsApi } from '@scada/testkit/scripts';

const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  SESSION_LEASE_SECONDS: '3',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '1000',
  SCRIPT_MANUAL_DEADLINE_MS: '3000',
});
t.teardown(() => p.stop());

const D = 'SIMLD0';

t.test(`scripts on a device (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const c = await liveConnection(p, sim.port, { editor });
  await c.connect();
  const s = await scriptsApi(p, editor);
  const conn = JSON.stringify(c.id);
  type LogEntry = { userId: string | null; username: string | null; action: string; reference: string; value: unknown; outcome: string };
  const controlLog = async (size: number) =>
    ((await (await c.api('GET', `/control-log?size=${size}`)).json()) as { content: LogEntry[] }).content;

  t.test('read, compute, write: the device holds what the script computed', async (t) => {
    const id = await s.create(
      `const { value, quality } = await ins.read(${conn}, "${D}/GGIO1.AnIn1.mag.f[MX]");
       const timeout = Math.round(value * 1000);
       await ins.write(${conn}, "${D}/GGIO1.SPCSO2.sboTimeout[CF]", timeout);
       const back = await ins.read(${conn}, "${D}/GGIO1.SPCSO2.sboTimeout[CF]");
       return { read: value, wrote: timeout, back: back.value, quality: typeof quality }`,
      { name: 'setpoint from measurement' },
    );
    const { status, body } = await s.run(id);
    t.equal(status, 200);
    t.match(body, { outcome: 'ok', result: { read: 1.5, wrote: 1500, back: 1500 } });
    const [entry] = await controlLog(1);
    t.match(
      entry,
      {
        userId: `script:${id}`,
        username: 'setpoint from measurement',
        action: 'write',
        reference: `${D}/GGIO1.SPCSO2.sboTimeout[CF]`,
        value: 1500,
        outcome: 'ok',
      },
      'the control log names the script as the actor',
    );
  });

  t.test('controls follow the control model, and a script that expected another is refused before anything is sent', async (t) => {
    const id = await s.create(
      `const out = [];
       await ins.operate(${conn}, "${D}/GGIO1.SPCSO1", true); out.push("direct");
       await ins.operate(${conn}, "${D}/GGIO1.SPCSO1", false, { select: false }); out.push("direct, as expected");
       await ins.operate(${conn}, "${D}/GGIO1.SPCSO2", true, { select: true }); out.push("selected");
       await ins.operate(${conn}, "${D}/GGIO1.SPCSO4", true, { select: true, test: false }); out.push("selected, enhanced");
       try { await ins.operate(${conn}, "${D}/GGIO1.SPCSO1", true, { select: true }) } catch (e) { out.push(e.status + " " + e.message) }
       try { await ins.operate(${conn}, "${D}/GGIO1.SPCSO5", true) } catch (e) { out.push(e.status + " " + e.code) }
       out.push((await ins.read(${conn}, "${D}/GGIO1.SPCSO2.stVal[ST]")).value);
       return out`,
      { name: 'controls' },
    );
    const before = (await controlLog(50)).length;
    const { body } = await s.run(id);
    t.match(body.result, [
      'direct',
      'direct, as expected',
      'selected',
      'selected, enhanced',
      /^400 .*SPCSO1 is direct-with-normal-security: it takes no select; nothing was sent/,
      /^400 /,
      true,
    ]);
    const log = await controlLog(50);
    t.equal(log.length - before, 5, 'four controls and the status-only refusal are logged, the refused expectation is not');
    t.ok(
      log.slice(0, 5).every((e) => e.userId === `script:${id}` && e.username === 'controls' && e.action === 'control'),
      'each under the script',
    );
  });

  t.test("the device's refusal reaches the script with its reason", async (t) => {
    faults.refuseControls = true;
    t.teardown(() => void (faults.refuseControls = false));
    const r = await s.runCode(
      `try { await ins.operate(${conn}, "${D}/GGIO1.SPCSO1", true) } catch (e) { return { name: e.name, code: e.code, status: e.status, message: e.message, deviceError: e.deviceError } }`,
    );
    t.match(r.result, {
      name: 'HostError',
      code: 'device_refused',
      status: 502,
      message: /Blocked-by-process/,
      deviceError: { service: 'operate', error: 'object-access-denied', addCause: 'Blocked-by-process' },
    });
    const [entry] = await controlLog(1);
    t.match(entry, { action: 'control', outcome: 'device_refused' }, 'and the refusal is logged');
    t.match(entry.userId, /^script:/);
  });

  t.test('a write the device refuses, and a connection that is not there', async (t) => {
    faults.refuseWrites = { [`${D}/LLN0$DC$NamPlt$vendor`]: 3 };
    t.teardown(() => void delete faults.refuseWrites);
    const r = await s.runCode(
      `const out = [];
       try { await ins.write(${conn}, "${D}/LLN0.NamPlt.vendor[DC]", "x") } catch (e) { out.push(e.code + " " + e.deviceError.error) }
       try { await ins.read("00000000-0000-4000-8000-000000000000", "${D}/GGIO1.AnIn1.mag.f[MX]") } catch (e) { out.push(e.status) }
       try { await ins.read(${conn}, "${D}/GGIO1.Nothing.stVal[ST]") } catch (e) { out.push(e.code) }
       return out`,
    );
    t.same(r.result, ['device_refused object-access-denied', 404, 'device_refused']);
  });

  t.test('the last reported values', async (t) => {
    const enabled = await c.api('POST', '/reports', {
      rcb: `${D}/LLN0$RP$urcb01`,
      generalInterrogation: true,
      triggers: ['dchg', 'qchg', 'gi'],
    });
    t.equal(enabled.status, 204);
    const r = await s.runCode(
      `for (let i = 0; i < 500; i++) {
         const values = await ins.values(${conn});
         const found = values.find((v) => v.reference.includes("AnIn1"));
         if (found) return { reference: found.reference, value: found.value, stale: found.stale };
       }
       return null`,
    );
    t.match(r, { outcome: 'ok', result: { reference: /AnIn1/, stale: false } });
  });

  t.test('host calls count toward the deadline', async (t) => {
    const r = await s.runCode(`let n = 0; for (;;) { await ins.read(${conn}, "${D}/GGIO1.AnIn1.mag.f[MX]"); n++; ins.state.set(n) }`);
    t.equal(r.outcome, 'timeout');
    t.ok(r.durationMs >= 2990 && r.durationMs < 4500, `ended at the deadline of 3 s (${r.durationMs} ms) while waiting for reads`);
  });
});
