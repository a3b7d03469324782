/**
 * A link to an attribute's history (the console's CSV download) cannot send `X-Space`: `?space=` names the
 * space instead, under the header's rule (the caller's space only, once, 1 to 64 characters), and the
 * header wins when both are sent. Events are published by hand as the protocol service publishes them.
 */
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';
import { liveConnection, until } from '@scada/testkit/live';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const reference = 'SIMLD0/GGIO1.AnIn1.mag.f[MX]';
const north = await createSpace(p, 'north');
const editor = await signIn(p, { role: 'editor', spaces: ['default', north] });
const viewer = await signIn(p, { role: 'viewer', spaces: ['default', north] });
const outsider = await signIn(p, { role: 'viewer', spaces: ['default'] });
const c = await liveConnection(p, 1, { editor: { ...editor, headers: { ...editor.headers, 'x-space': north } } });

const at = new Date(Date.now() - 60_000).toISOString();
const rcb = 'SIMLD0/LLN0$RP$urcb01';
p.proc.bus.publish(
  'events.protocol.report',
  new TextEncoder().encode(
    JSON.stringify({
      space: north,
      connectionId: c.id,
      rcb,
      rptId: 'r',
      seqNum: 1,
      entryId: null,
      at,
      values: [
        {
          connectionId: c.id,
          reference,
          value: 42.5,
          quality: null,
          timestamp: at,
          timestampSource: 'attribute',
          receivedAt: at,
          rcb,
          reason: ['data-change'],
          seqNum: 1,
        },
      ],
    }),
  ),
);
await until('the value recorded', async () => {
  const res = await fetch(`${p.url}/api/connections/${c.id}/history/summary`, { headers: { ...viewer.headers, 'x-space': north } });
  return res.status === 200 && ((await res.json()) as unknown[]).length > 0;
});

const history = (query: string, headers: Record<string, string> = viewer.headers) =>
  fetch(`${p.url}/api/connections/${c.id}/history?reference=${encodeURIComponent(reference)}&${query}`, { headers });

t.test('?space= names the space of a link to the CSV and of the JSON answer', async (t) => {
  const csv = await history(`format=csv&space=${north}`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /text\/csv/);
  t.match(await csv.text(), /,42\.5,/, 'the recorded value');
  const json = await history(`space=${north}`);
  t.equal(json.status, 200);
  t.same(
    ((await json.json()) as { points: { value: unknown }[] }).points.map((pt) => pt.value),
    [42.5],
  );
});

t.test('without it, the caller default space is asked: the connection is not there', async (t) => {
  t.equal((await history('format=csv')).status, 404);
});

t.test('X-Space wins over ?space=', async (t) => {
  t.equal((await history(`format=csv&space=${north}`, { ...viewer.headers, 'x-space': 'default' })).status, 404);
});

t.test("a space that is not the caller's is 403, as with the header", async (t) => {
  const res = await history(`format=csv&space=${north}`, outsider.headers);
  t.equal(res.status, 403);
  t.equal(((await res.json()) as { code: string }).code, 'space_forbidden');
});

t.test('an empty, repeated or over-long space is 400', async (t) => {
  for (const query of ['space=', `space=${north}&space=default`, `space=${'x'.repeat(65)}`]) {
    const res = await history(`format=csv&${query}`);
    t.equal(res.status, 400, query);
    t.match(res.headers.get('content-type'), /application\/problem\+json/);
  }
});
