/**
 * A device's log (IEC 61850-7-2 LOG, an MMS journal) through the gateway, against the simulator's: entries
 * by time and after an entry, with their values, reasons and times, page by page following `next`; queries
 * the device cannot answer refused with 400, an unknown log 404, the device's refusal 502.
 */
import t from 'tap';
import { startSimulator, type Faults } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';

const D = 'SIMLD0';
const faults: Faults = {};
const sim = await startSimulator({
  model: await fixtureModel(),
  port: 0,
  faults,
  journalPageSize: 3,
  logs: [{ name: `${D}/LLN0$EventLog`, dataSet: `${D}/LLN0$Events` }],
});
t.teardown(() => sim.stop());
const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '1000' });
t.teardown(() => p.stop());

type Entry = { entryId: string; time: string; values: { reference: string; value: unknown; reason: string[] | null }[] };
type Page = { log: string; entries: Entry[]; moreFollows: boolean; next: { after: string; entryTime: string; to?: string } | null };
type Problem = { status: number; code: string; deviceError?: { service: string; error: string }; errors?: { path: string }[] };

t.test(`a device's log (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  const viewer = await signIn(p, { role: 'viewer' });
  const log = encodeURIComponent(`${D}/LLN0.EventLog`);
  const query = (params: Record<string, string>, who = viewer) =>
    fetch(`${p.url}/api/connections/${c.id}/logs/${log}?${new URLSearchParams(params)}`, { headers: who.headers });
  await c.connect();

  const before = new Date(Date.now() - 1000).toISOString();
  for (let i = 0; i < 5; i++) {
    sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: i % 2 === 0 });
    await new Promise((r) => setTimeout(r, 5));
  }
  sim.setValue(`${D}/GGIO1$ST$Ind1$q`, { type: 'bit-string', value: { bitLength: 13, bytes: Uint8Array.of(0x40, 0) } });
  const kept = sim.logEntries(`${D}/LLN0$EventLog`);

  t.test('entries by time, a page at a time, following next', async (t) => {
    const res = await query({ from: before, to: new Date(Date.now() + 1000).toISOString() });
    t.equal(res.status, 200);
    const first = (await res.json()) as Page;
    t.equal(first.log, `${D}/LLN0$EventLog`);
    t.equal(first.entries.length, 3, "the device's page");
    t.ok(first.moreFollows);
    t.same(first.entries[0]?.values, [{ reference: `${D}/GGIO1.Ind1.stVal[ST]`, value: true, reason: ['data-change'] }]);
    t.same(
      first.entries.map((e) => e.entryId),
      kept.slice(0, 3).map((e) => Buffer.from(e.entryId).toString('hex')),
      "the device's EntryIDs, in hex",
    );
    t.ok(
      first.entries.every((e) => Date.parse(e.time) >= Date.parse(before)),
      'each with its time',
    );
    t.match(first.next, { after: first.entries[2]?.entryId, entryTime: first.entries[2]?.time });
    const second = (await (await query(first.next!)).json()) as Page;
    t.equal(second.entries.length, 3);
    t.notOk(second.moreFollows);
    t.equal(second.next, null);
    t.same(
      second.entries.at(-1)?.values,
      [{ reference: `${D}/GGIO1.Ind1.q[ST]`, value: { validity: 'invalid', flags: [], source: 'process' }, reason: ['quality-change'] }],
      'a quality change, with its reason',
    );
  });

  t.test('entries after one, with its time (QueryLogAfter)', async (t) => {
    const third = ((await (await query({})).json()) as Page).entries[2]!;
    const page = (await (await query({ after: third.entryId, entryTime: third.time })).json()) as Page;
    t.same(
      page.entries.map((e) => e.entryId),
      kept.slice(3).map((e) => Buffer.from(e.entryId).toString('hex')),
      'the three after the third',
    );
    const upTo = (await (await query({ after: third.entryId, entryTime: third.time, to: page.entries[0]!.time })).json()) as Page;
    t.same(
      upTo.entries.map((e) => e.entryId),
      [page.entries[0]!.entryId],
      '`to` bounds a query after an entry too',
    );
  });

  t.test('a query without bounds reads from the start of the log', async (t) => {
    const page = (await (await query({})).json()) as Page;
    t.equal(page.entries.length, 3);
    t.ok(page.moreFollows);
  });

  t.test('queries the device cannot answer are 400 before it is asked', async (t) => {
    const asked: string[] = [];
    const count = (e: { request: { service: string } }) => void asked.push(e.request.service);
    sim.on('request', count);
    for (const [params, path] of [
      [{ after: '0000000000000001' }, '/query/entryTime'],
      [{ entryTime: before }, '/query/after'],
      [{ after: '01', entryTime: before, from: before }, '/query/from'],
      [{ from: new Date().toISOString(), to: before }, '/query/from'],
      [{ from: '1970-01-01T00:00:00Z' }, '/query/from'],
      [{ after: 'xyz', entryTime: before }, '/query/after'],
    ] as const) {
      const res = await query(params);
      t.equal(res.status, 400, JSON.stringify(params));
      t.equal(((await res.json()) as Problem).errors?.[0]?.path, path);
    }
    const badLog = await fetch(`${p.url}/api/connections/${c.id}/logs/${encodeURIComponent('no-slash')}`, { headers: viewer.headers });
    t.equal(badLog.status, 400);
    sim.off('request', count);
    t.same(asked, []);
  });

  t.test('a log the device does not have is 404; its refusal 502 device_refused', async (t) => {
    const missing = await fetch(`${p.url}/api/connections/${c.id}/logs/${encodeURIComponent(`${D}/LLN0$Nothing`)}`, {
      headers: viewer.headers,
    });
    t.equal(missing.status, 404);
    faults.refuseJournals = true;
    const refused = await query({});
    t.equal(refused.status, 502);
    t.match((await refused.json()) as Problem, {
      code: 'device_refused',
      deviceError: { service: 'read-journal', error: 'access: object-access-denied' },
    });
    delete faults.refuseJournals;
  });
});
