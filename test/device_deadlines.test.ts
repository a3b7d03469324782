/**
 * A device request carries its caller's deadline down to the MMS client: against a simulator that takes
 * `answerDelayMs` to answer each request, a caller whose deadline passes in the middle of an operation of
 * several MMS requests (a browse, a read of data sets, a select and its operate) is answered 504, and the
 * device sees no request of that operation afterwards; one waiting for a turn behind the association's
 * outstanding requests leaves the wait at its caller's deadline, long before MMS_QUEUE_WAIT_MS. Through the
 * bus contract of the protocol service with a short deadline of the caller's (the gateway gives a device
 * operation 30 s).
 */
import t from 'tap';
import {
  browseConnectionDevice,
  operateConnectionControl,
  readConnectionValues,
  type Operation,
  type ProblemError,
} from '@scada/contracts';
import { call } from '@scada/platform';
import { startSimulator, type Faults } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection } from '@scada/testkit/live';

const D = 'SIMLD0';
/** How long the slow device takes to answer each request. */
const answerDelayMs = 600;
/**
 * The caller's deadline: between one answer and two, so that an operation's first request is answered in
 * time and its second (sent at the first answer) is not; a third would go out at the second answer, after it.
 */
const deadlineMs = 1000;
const faults: Faults = {};
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
t.teardown(() => sim.stop());
const sent: { service: string; item: string }[] = [];
sim.on('request', ({ request }) => {
  const r = request as { service: string; variables?: { kind: string; names?: { item?: string }[] } };
  sent.push({ service: r.service, item: r.variables?.names?.[0]?.item ?? '' });
});
const p = await startTestPlatform({
  // far longer than the caller waits: only the caller's deadline can end a wait for a turn here
  MMS_QUEUE_WAIT_MS: '10000',
  MMS_REQUEST_TIMEOUT_MS: '10000',
});
t.teardown(() => p.stop());

t.test(`the MMS requests of a device operation stop at its caller's deadline (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  await c.connect();
  // the types of what is read and operated are learnt once, at full speed
  t.equal((await c.api('POST', '/read', { references: [`${D}/GGIO1.AnIn1.mag.f[MX]`] })).status, 200);
  t.equal((await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO2`, value: true })).status, 204);

  /** Calls `op` with the short deadline; answers the problem it failed with and how many requests the device had seen then. */
  const late = async (op: Operation, body: unknown) => {
    faults.answerDelayMs = answerDelayMs;
    const before = sent.length;
    const problem = await call(p.proc.bus, op, { params: { connectionId: c.id }, query: {}, body } as never, {
      requestId: `deadline-${op.operationId}`,
      space: 'default',
      actor: null,
      timeoutMs: deadlineMs,
    }).then(
      () => null,
      (err: unknown) => err as ProblemError,
    );
    const atAnswer = sent.length;
    // Long enough for the device to answer what was sent before the deadline, and for the operation, were it
    // to go on, to send its next requests (each goes out when the one before is answered).
    await new Promise((r) => setTimeout(r, 3 * answerDelayMs));
    faults.answerDelayMs = 0;
    return { problem, during: sent.slice(before, atAnswer), after: sent.slice(atAnswer) };
  };

  t.test('a browse stops between its requests', async (t) => {
    const { problem, during, after } = await late(browseConnectionDevice, undefined);
    t.equal(problem?.code, 'upstream_timeout');
    t.ok(during.length >= 2, `the device saw the requests sent before the deadline (${during.map((s) => s.service).join(', ')})`);
    t.same(after, [], 'and none after the caller was answered');
  });

  t.test('requests waiting for a turn leave the wait at their caller’s deadline and are never sent', async (t) => {
    // twenty data sets at once: the association sends 5 (what the simulator settles), the rest wait
    const { problem, during, after } = await late(readConnectionValues, { dataSets: Array(20).fill(`${D}/LLN0.Events`) });
    t.equal(problem?.code, 'upstream_timeout');
    t.same(after, [], 'nothing was sent after the caller was answered');
    const attributes = during.filter((s) => s.service === 'getNamedVariableListAttributes').length;
    t.ok(attributes < 20, `only the requests that had a turn before the deadline reached the device (${attributes} of 20)`);
  });

  t.test('a select whose answer comes after the deadline is not followed by its operate', async (t) => {
    const operates: unknown[] = [];
    const count = (n: { action: string }) => void (n.action === 'select' || operates.push(n));
    sim.on('control', count);
    // sbo-with-normal-security: the control model is read, then SBO (the select), then Oper would be written
    const { problem, during, after } = await late(operateConnectionControl, { reference: `${D}/GGIO1.SPCSO2`, value: false });
    sim.off('control', count);
    t.equal(problem?.code, 'upstream_timeout');
    t.ok(
      during.some((s) => s.item.endsWith('SPCSO2$SBO')),
      'the select was sent',
    );
    t.same(
      [...during, ...after].filter((s) => s.service === 'write'),
      [],
      'the operate was never written',
    );
    t.same(operates, [], 'and the device operated nothing (it was selected)');
    // the association lives on
    t.equal((await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: true })).status, 204);
  });
});
