/**
 * Any space can be followed: the live channel's opening snapshot is fetched in pages and written at the
 * client's pace, never counted against `LIVE_CLIENT_BUFFER_BYTES`. Here a space of 250 connections (two
 * pages, some 40 KiB of snapshot) opens with a buffer of 4 KiB, the smallest allowed, and the stream
 * carries on from the snapshot without a gap; `bench/live.bench.ts` measures a space of 10,000
 * connections and 50,000 values.
 */
import { protocolEvents } from '@scada/contracts';
import { publishEvent } from '@scada/platform';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn, type SignedIn } from '@scada/testkit/session';
import { isEvent, openSse } from '@scada/testkit/sse';

const p = await startTestPlatform({ LIVE_CLIENT_BUFFER_BYTES: '4096' });
t.teardown(() => p.stop());

const count = 250;

/** Creates `n` connections in one project of `space`, several requests at a time; answers their ids. */
async function createConnections(who: SignedIn, space: string, n: number): Promise<string[]> {
  const headers = { ...who.headers, 'content-type': 'application/json', 'x-space': space };
  const project = (await (
    await fetch(`${p.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'many', isActive: true }) })
  ).json()) as { id: string };
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const body = { name: `c-${String(i).padStart(5, '0')}`, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' };
      const res = await fetch(`${p.url}/api/connections`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`creating a connection answered ${res.status}: ${await res.text()}`);
      ids.push(((await res.json()) as { id: string }).id);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids;
}

function report(space: string, connectionId: string, value: number): void {
  const at = new Date().toISOString();
  const v = {
    connectionId,
    reference: 'LD0/GGIO1.AnIn1.mag.f',
    value,
    quality: null,
    timestamp: null,
    timestampSource: null,
    receivedAt: at,
    rcb: 'r',
    reason: null,
    seqNum: value,
  };
  const body = { space, connectionId, rcb: 'r', rptId: 'r', seqNum: value, entryId: null, values: [v] };
  publishEvent(p.proc.bus, protocolEvents.report, body, { requestId: 'test' });
}

t.test(`a space of ${count} connections opens with a 4 KiB client buffer (${p.mode})`, async (t) => {
  const space = await createSpace(p, `many-${Date.now()}`);
  const editor = await signIn(p, { role: 'editor', spaces: [space] });
  const ids = await createConnections(editor, space, count);
  const viewer = await signIn(p, { role: 'viewer', spaces: [space] });

  t.test('the whole snapshot comes, then live events without a gap', async (t) => {
    // Reports keep coming while the stream opens: those after the snapshot must all arrive, in order.
    let published = 0;
    const feed = setInterval(() => report(space, ids[0]!, published++), 5);
    const s = await openSse(`${p.url}/api/live?space=${space}&topics=sessions,values`, viewer.headers);
    t.teardown(() => s.close());
    t.equal(s.res.status, 200);
    const snapshot = (await s.wait(isEvent('snapshot'), 20_000)) as { data: { sessions: { connectionId: string }[]; values: unknown[] } };
    await new Promise((r) => setTimeout(r, 300));
    clearInterval(feed);
    const last = published - 1;
    await s.wait(isEvent('value', (d) => d.value === last));
    t.equal(snapshot.data.sessions.length, count, 'every session of the space');
    t.same(new Set(snapshot.data.sessions.map((x) => x.connectionId)), new Set(ids), 'each once');
    const after = s.events.filter(isEvent('value')).map((e) => (e as { data: { value: number } }).data.value);
    const from = after[0]!;
    t.same(
      after,
      Array.from({ length: last - from + 1 }, (_, i) => from + i),
      `every report from the first after the snapshot (${from}) to the last (${last}), in order`,
    );
    t.notOk(s.events.some(isEvent('end')), 'and the stream goes on');
  });

  t.test('a filter on connections pages through just those', async (t) => {
    const some = [...ids].sort().filter((_, i) => i % 3 === 0);
    const s = await openSse(`${p.url}/api/live?space=${space}&topics=sessions&connections=${some.join(',')}`, viewer.headers);
    t.teardown(() => s.close());
    const snapshot = (await s.wait(isEvent('snapshot'), 20_000)) as { data: { sessions: { connectionId: string }[] } };
    t.same(
      snapshot.data.sessions.map((x) => x.connectionId),
      some,
      'the connections named, in id order',
    );
  });
});
