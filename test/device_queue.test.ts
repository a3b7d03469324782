/**
 * The device requests of one connection are bounded in number and in waiting, through the gateway against
 * a simulator that answers slowly: a flood past DEVICE_REQUESTS_PER_CONNECTION is answered 503
 * `overloaded` with `Retry-After` at once while the device works through the rest; the places come free
 * and later requests are answered; an MMS request that waits longer than MMS_QUEUE_WAIT_MS for a turn
 * behind the association's outstanding ones is answered 504 and never sent; a connection's file downloads
 * under way are bounded too.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startSimulator, type Faults } from '@scada/simulator';
import { maxDownloadsPerConnection } from '@scada/contracts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';

// as many as the simulator lets out on the association (each read that has a place is sent at once), and
// more than a connection's downloads (each may have a chunk on its way while its client reads nothing)
const places = 5;
const queueWaitMs = 1000;
/** How long the slow device takes to answer each request: well past the queue wait, well within the request timeout. */
const answerDelayMs = 3000;
const faults: Faults = {};
/** Larger than what the gateway and the sockets read ahead of a client that reads nothing: its download stays under way. */
const bigFile = randomBytes(8 * 1024 * 1024);
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults, files: { 'big.bin': { data: bigFile } } });
t.teardown(() => sim.stop());
const sent: string[] = [];
sim.on('request', ({ request }) => sent.push(request.service));
const p = await startTestPlatform({
  DEVICE_REQUESTS_PER_CONNECTION: String(places),
  MMS_QUEUE_WAIT_MS: String(queueWaitMs),
  MMS_REQUEST_TIMEOUT_MS: '10000',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '500',
});
t.teardown(() => p.stop());

type Answer = { status: number; code?: string; detail?: string; retryAfter: string | null; ms: number };

t.test(`a slow device's requests are bounded in number and in waiting (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  await c.connect();
  const value = { references: ['SIMLD0/GGIO1.AnIn1.mag.f[MX]'] };
  const read = async (body: unknown = value): Promise<Answer> => {
    const start = performance.now();
    const res = await c.api('POST', '/read', body);
    const problem = res.status === 200 ? {} : ((await res.json()) as { code: string; detail: string });
    return { status: res.status, ...problem, retryAfter: res.headers.get('retry-after'), ms: performance.now() - start };
  };
  // the variable's type is learnt once: from here on each read is one MMS request
  t.equal((await read()).status, 200);

  t.test('a flood past the bound is refused at once with 503 overloaded; the places come free and later reads answer', async (t) => {
    faults.answerDelayMs = answerDelayMs;
    const answers = await Promise.all(Array.from({ length: places * 3 }, () => read()));
    const refused = answers.filter((a) => a.status === 503);
    const taken = answers.filter((a) => a.status === 200);
    t.same(
      answers.filter((a) => a.status !== 200 && a.status !== 503),
      [],
      'every read is answered 200 or 503: never 500 or 504',
    );
    t.ok(taken.length >= places, `the ${places} places were used (${taken.length} answered 200)`);
    t.ok(refused.length > 0, `${refused.length} reads past the bound were refused`);
    t.ok(
      refused.every((a) => a.code === 'overloaded' && a.retryAfter === '1'),
      'each refusal is 503 overloaded with Retry-After',
    );
    // a read that got a place waits answerDelayMs for the device; a refusal waits for nothing
    t.ok(
      refused.every((a) => a.ms < answerDelayMs),
      `each refusal came before the device could have answered (slowest ${Math.round(Math.max(...refused.map((a) => a.ms)))} ms)`,
    );
    faults.answerDelayMs = 0;
    const after = await Promise.all(Array.from({ length: places }, () => read()));
    t.same(
      after.map((a) => a.status),
      Array(places).fill(200),
      'as many reads as there are places, all answered',
    );
  });

  t.test('an MMS request that waits past MMS_QUEUE_WAIT_MS behind the outstanding ones is answered 504 and not sent', async (t) => {
    faults.answerDelayMs = answerDelayMs;
    const before = sent.length;
    // one API read of many data sets asks the device for all of them at once: the association sends 5
    // (what the simulator settles) and the rest wait for a turn
    const answer = await read({ dataSets: Array(20).fill('SIMLD0/LLN0.Events') });
    t.equal(answer.status, 504);
    t.equal(answer.code, 'upstream_timeout');
    t.match(answer.detail, /was not sent: the device is busy/);
    t.ok(answer.ms < answerDelayMs, 'answered when the wait ran out, not when the device answered');
    const attributes = sent.slice(before).filter((s) => s === 'getNamedVariableListAttributes');
    t.equal(attributes.length, 5, 'only the requests that had a turn reached the device');
    faults.answerDelayMs = 0;
    await until('the device answers again', async () => (await read()).status === 200);
    t.equal((await read({ dataSets: ['SIMLD0/LLN0.Events'] })).status, 200);
  });

  t.test(`a connection has at most ${maxDownloadsPerConnection} downloads under way; one more is 503 overloaded at once`, async (t) => {
    const download = () => c.api('GET', '/files/content?path=big.bin');
    const held = [];
    for (let i = 0; i < maxDownloadsPerConnection; i++) {
      const res = await download();
      t.equal(res.status, 200);
      held.push(res);
    }
    const refused = await download();
    t.equal(refused.status, 503);
    t.equal(((await refused.json()) as { code: string }).code, 'overloaded');
    t.equal(refused.headers.get('retry-after'), '5');
    // a client that leaves ends its download: the file is closed on the device, and the place is free
    await Promise.all(held.map((res) => res.body?.cancel()));
    const whole = await until('a download is taken again', async () => {
      const res = await download();
      if (res.status === 200) return res;
      await res.body?.cancel();
      return undefined;
    });
    t.equal(Buffer.compare(Buffer.from(await whole.arrayBuffer()), bigFile), 0, 'and it is the whole file');
  });
});
