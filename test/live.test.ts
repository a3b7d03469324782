/**
 * The live channel (`GET /api/live`) through the gateway: the snapshot, each kind of event, filters and
 * their refusals, space isolation, resuming by Last-Event-ID (also through another gateway replica),
 * heartbeats, the per-user cap, HEAD, the stream ending with a last `event: end` when its session does
 * (logout, revocation, a disabled user, a space taken away) and with its gateway, and a slow reader
 * dropped without slowing a fast one. Expiry, the IP filter and lost events: `live_access.test.ts`;
 * large spaces: `live_snapshot.test.ts`.
 * Reports and session changes are published on the bus as the protocol service publishes them; the
 * simulator's end to end run is in `live_device.test.ts`.
 */
import http from 'node:http';
import { protocolEvents, type SessionEvent } from '@scada/contracts';
import { publishEvent } from '@scada/platform';
import t from 'tap';
import { startTestPlatform, secondGateway } from '@scada/testkit/platform';
import { asAdmin, createSpace, signIn, type SignedIn } from '@scada/testkit/session';
import { isEvent, openSse, type SseEvent } from '@scada/testkit/sse';

const p = await startTestPlatform({ LIVE_HEARTBEAT_MS: '200', LIVE_STREAMS_PER_USER: '3', LIVE_CLIENT_BUFFER_BYTES: '65536' });
t.teardown(() => p.stop());

const json = (who: SignedIn) => ({ ...who.headers, 'content-type': 'application/json' });

async function createConnection(who: SignedIn, space = 'default'): Promise<string> {
  const headers = { ...json(who), 'x-space': space };
  const project = (await (
    await fetch(`${p.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: `p-${Math.random()}`, isActive: true }) })
  ).json()) as { id: string };
  const form = new FormData();
  form.set(
    'connection',
    JSON.stringify({ name: `c-${Math.random()}`, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' }),
  );
  const res = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
    method: 'POST',
    headers: { ...who.headers, 'x-space': space },
    body: form,
  });
  if (res.status !== 200) throw new Error(`connection: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

let seq = 0;
function report(space: string, connectionId: string, value: unknown, reference = 'LD0/GGIO1.AnIn1.mag.f'): void {
  const at = new Date().toISOString();
  const body = {
    space,
    connectionId,
    rcb: 'LD0/LLN0$RP$urcb01',
    rptId: 'r',
    seqNum: ++seq,
    entryId: null,
    values: [
      {
        connectionId,
        reference,
        value,
        quality: null,
        timestamp: null,
        timestampSource: null,
        receivedAt: at,
        rcb: 'LD0/LLN0$RP$urcb01',
        reason: ['data-change' as const],
        seqNum: seq,
      },
    ],
  };
  publishEvent(p.proc.bus, protocolEvents.report, body, { requestId: 'test' });
}

function sessionChange(space: string, connectionId: string, state: SessionEvent['state']): void {
  const since = new Date().toISOString();
  publishEvent(
    p.proc.bus,
    protocolEvents.session,
    { space, connectionId, state, since, lastError: null, warnings: [] },
    { requestId: 'test' },
  );
}

const live = (who: SignedIn, query = '', headers: Record<string, string> = {}) =>
  openSse(`${p.url}/api/live${query}`, { ...who.headers, ...headers });
const isValue = (connectionId: string, value?: unknown) =>
  isEvent('value', (d) => d.connectionId === connectionId && (value === undefined || d.value === value));
const idOf = (e: SseEvent) => ('id' in e ? e.id : null);

t.test(`the live channel (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const viewer = await signIn(p, { role: 'viewer' });
  const a = await createConnection(editor);
  const b = await createConnection(editor);

  t.test('opens with a snapshot of the sessions, then carries value, session and config events, each with an id', async (t) => {
    const s = await live(viewer);
    t.teardown(() => s.close());
    t.equal(s.res.status, 200);
    t.match(s.res.headers.get('content-type'), /^text\/event-stream/);
    t.equal(s.res.headers.get('x-accel-buffering'), 'no');
    t.equal(s.res.headers.get('cache-control'), 'no-store');
    const first = s.events[0] ?? (await s.wait(() => true));
    t.match(first, { event: 'snapshot', data: { values: [] } }, 'the snapshot comes first');
    const sessions = (first as { data: { sessions: { connectionId: string; state: string }[] } }).data.sessions;
    t.match(
      sessions.find((x) => x.connectionId === a),
      { state: 'stopped', warnings: [] },
      'with the sessions of the space',
    );
    t.ok(idOf(first), 'and an id');
    report('default', a, 42);
    const value = await s.wait(isValue(a, 42));
    t.match(value, {
      data: {
        connectionId: a,
        reference: 'LD0/GGIO1.AnIn1.mag.f',
        value: 42,
        quality: null,
        timestamp: null,
        rcb: 'LD0/LLN0$RP$urcb01',
        reason: ['data-change'],
      },
    });
    t.match(idOf(value), /^\d+$/);
    sessionChange('default', a, 'waiting');
    t.match(await s.wait(isEvent('session')), { data: { connectionId: a, state: 'waiting', lastError: null, warnings: [] } });
    const project = (await (
      await fetch(`${p.url}/api/projects`, {
        method: 'POST',
        headers: json(editor),
        body: JSON.stringify({ name: `live-${Date.now()}`, isActive: true }),
      })
    ).json()) as { id: string };
    t.match(await s.wait(isEvent('config', (d) => d.id === project.id)), { data: { entity: 'project', verb: 'created', id: project.id } });
    const form = new FormData();
    form.set(
      'connection',
      JSON.stringify({ name: `renamed-${Date.now()}`, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' }),
    );
    t.equal(
      (await fetch(`${p.url}/api/protocols/iec61850/connections/${b}/with-file`, { method: 'PUT', headers: editor.headers, body: form }))
        .status,
      204,
    );
    t.match(
      await s.wait(isEvent('config', (d) => d.id === b)),
      { data: { entity: 'connection', verb: 'updated', id: b } },
      'connections are configuration too',
    );
    const ids = s.events
      .map(idOf)
      .filter((id): id is string => id !== null)
      .map((id) => Number(id.split(':')[0]));
    t.same(
      ids,
      [...ids].sort((x, y) => x - y),
      'ids grow',
    );
  });

  t.test('filters: connections and topics; a bad filter is 400', async (t) => {
    const s = await live(viewer, `?connections=${b}&topics=values,sessions`);
    t.teardown(() => s.close());
    const snapshot = await s.wait(isEvent('snapshot'));
    t.same(
      (snapshot as { data: { sessions: { connectionId: string }[] } }).data.sessions.map((x) => x.connectionId),
      [b],
      'the snapshot covers the filter',
    );
    report('default', a, 1);
    report('default', b, 2);
    await s.wait(isValue(b, 2));
    t.notOk(s.events.some(isValue(a)), 'another connection is not followed');
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json(editor),
      body: JSON.stringify({ name: `quiet-${Date.now()}`, isActive: true }),
    });
    report('default', b, 3);
    await s.wait(isValue(b, 3));
    t.notOk(s.events.some(isEvent('config')), 'nor configuration');
    for (const query of ['?topics=weather', '?connections=not-an-id', '?other=1', `?topics=`.padEnd(20, ',') + 'x']) {
      const res = await fetch(`${p.url}/api/live${query}`, { headers: viewer.headers });
      t.equal(res.status, 400, query);
      t.match(await res.json(), { code: 'validation_failed' });
    }
  });

  t.test("only the caller's space: X-Space or ?space=, and another space is 403", async (t) => {
    const space = await createSpace(p, `live-${Date.now()}`);
    const outsider = await signIn(p, { role: 'viewer', spaces: [space] });
    const admin = await asAdmin(p);
    const c = await createConnection(admin, space);
    const other = await live(outsider);
    t.teardown(() => other.close());
    await other.wait(isEvent('snapshot'));
    const mine = await live(viewer);
    t.teardown(() => mine.close());
    await mine.wait(isEvent('snapshot'));
    const byQuery = await live(admin, `?space=${space}`);
    t.teardown(() => byQuery.close());
    t.match(await byQuery.wait(isEvent('snapshot')), { data: { sessions: [{ connectionId: c }] } }, '?space= names the space');
    report(space, c, 'theirs');
    report('default', a, 'ours');
    await other.wait(isValue(c, 'theirs'));
    await byQuery.wait(isValue(c, 'theirs'));
    await mine.wait(isValue(a, 'ours'));
    t.notOk(other.events.some(isValue(a)), 'the other space never sees ours');
    t.notOk(mine.events.some(isValue(c)), 'nor we theirs');
    t.equal((await fetch(`${p.url}/api/live?space=${space}`, { headers: viewer.headers })).status, 403, 'a space the caller is not in');
    t.equal((await fetch(`${p.url}/api/live`, { headers: { ...viewer.headers, 'x-space': space } })).status, 403);
    t.equal((await fetch(`${p.url}/api/live`)).status, 401, 'no session');
  });

  t.test('Last-Event-ID resumes without a gap, through this gateway or another; an id no longer held gets a snapshot', async (t) => {
    const s = await live(viewer, `?connections=${a}`);
    await s.wait(isEvent('snapshot'));
    report('default', a, 'before');
    const seen = await s.wait(isValue(a, 'before'));
    const watcher = await live(viewer, `?connections=${a}`);
    t.teardown(() => watcher.close());
    await watcher.wait(isEvent('snapshot'));
    s.close();
    report('default', a, 'missed-1');
    report('default', a, 'missed-2');
    await watcher.wait(isValue(a, 'missed-2'));
    const again = await live(viewer, `?connections=${a}`, { 'last-event-id': idOf(seen)! });
    t.teardown(() => again.close());
    const first = await again.wait(() => true);
    t.match(first, { event: 'value', data: { value: 'missed-1' } }, 'no snapshot: the missed events, in order');
    await again.wait(isValue(a, 'missed-2'));
    const other = await secondGateway(p);
    t.teardown(() => other.stop());
    const elsewhere = await openSse(`${other.url}/api/live?connections=${a}`, { ...viewer.headers, 'last-event-id': idOf(seen)! });
    t.teardown(() => elsewhere.close());
    t.match(await elsewhere.wait(() => true), { event: 'value', data: { value: 'missed-1' } }, 'the same ids on another replica');
    report('default', a, 'after');
    await elsewhere.wait(isValue(a, 'after'));
    const fresh = await live(viewer, `?connections=${a}`, { 'last-event-id': '999999999999' });
    t.teardown(() => fresh.close());
    t.match(await fresh.wait(() => true), { event: 'snapshot' }, 'an id never handed out: a fresh snapshot');
  });

  t.test('a comment line at the heartbeat interval', async (t) => {
    const s = await live(await signIn(p, { role: 'viewer' }), '?topics=config');
    t.teardown(() => s.close());
    await s.wait(isEvent('snapshot'));
    const from = s.events.length;
    await s.wait((e) => 'comment' in e, 2000, from);
    await s.wait((e) => 'comment' in e, 2000, s.events.length);
    t.pass('two heartbeats on a quiet stream');
  });

  t.test('at most LIVE_STREAMS_PER_USER streams per user; one more is 429', async (t) => {
    const user = await signIn(p, { role: 'viewer' });
    const open = await Promise.all([1, 2, 3].map(() => live(user, '?topics=config')));
    t.teardown(() => {
      for (const s of open) s.close();
    });
    const refused = await fetch(`${p.url}/api/live`, { headers: user.headers });
    t.equal(refused.status, 429);
    t.match(await refused.json(), { code: 'rate_limited' });
    t.ok(refused.headers.get('retry-after'));
    open[0]!.close();
    const deadline = Date.now() + 3000;
    let status = 0;
    while (
      Date.now() < deadline &&
      (status = await fetch(`${p.url}/api/live?topics=config`, { headers: user.headers }).then(
        (r) => (void r.body?.cancel(), r.status),
      )) !== 200
    )
      await new Promise((r) => setTimeout(r, 50));
    t.equal(status, 200, 'a closed stream frees its place');
  });

  t.test('HEAD answers the headers at once and holds nothing; other methods are 405', async (t) => {
    const user = await signIn(p, { role: 'viewer' });
    const streamsOpen = async () => Number(/^live_streams_open (\d+)/m.exec(await (await fetch(`${p.url}/metrics`)).text())?.[1]);
    const before = await streamsOpen();
    for (let i = 0; i < 5; i++) {
      // A plain request per HEAD, no keep-alive: the answer must end the exchange, not hold the socket open.
      const answered = await new Promise<{ status: number; type: string | undefined; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const req = http.request(`${p.url}/api/live`, { method: 'HEAD', headers: user.headers, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], ms: Date.now() - started }));
        });
        req.on('error', reject);
        req.end();
      });
      t.equal(answered.status, 200);
      t.match(answered.type, /^text\/event-stream/);
      t.ok(answered.ms < 1000, `answered and ended in ${answered.ms} ms`);
    }
    t.equal(await streamsOpen(), before, 'no stream counted');
    const open = await Promise.all([1, 2, 3].map(() => live(user, '?topics=config')));
    t.teardown(() => {
      for (const s of open) s.close();
    });
    t.same(
      open.map((s) => s.res.status),
      [200, 200, 200],
      'after five HEADs the user still has every place',
    );
    t.equal((await fetch(`${p.url}/api/live`, { method: 'HEAD', headers: user.headers })).status, 429, 'HEAD says what a GET would get');
    t.equal((await fetch(`${p.url}/api/live`, { method: 'HEAD' })).status, 401);
    const post = await fetch(`${p.url}/api/live`, { method: 'POST', headers: user.headers });
    t.equal(post.status, 405);
    t.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  t.test('the stream ends with its session: logout, a disabled user, a space taken away', async (t) => {
    // The contract's bound is a second; each end is waited for up to 5 s, well inside the gateway's periodic
    // check (10 s), so an end that came from the event and not from that check passes on a crowded machine.
    const admin = await asAdmin(p);
    const loggedOut = await signIn(p, { role: 'viewer' });
    const s1 = await live(loggedOut);
    await s1.wait(isEvent('snapshot'));
    t.equal((await fetch(`${p.url}/logout`, { method: 'POST', headers: loggedOut.headers })).status, 200);
    await s1.ended(5000);
    t.match(s1.events.at(-1), { event: 'end', data: { reason: 'session_ended' } }, 'logout ends the stream, with a last event');

    const disabled = await signIn(p, { role: 'viewer' });
    const s2 = await live(disabled);
    await s2.wait(isEvent('snapshot'));
    const put = await fetch(`${p.url}/api/users/${disabled.userId}`, {
      method: 'PUT',
      headers: json(admin),
      body: JSON.stringify({ enabled: false }),
    });
    t.equal(put.status, 204);
    await s2.ended(5000);
    // Disabling also revokes the user's sessions: whichever the gateway hears of first names the end.
    t.match(s2.events.at(-1), { event: 'end', data: { reason: /^(access_ended|session_ended)$/ } }, 'disabling the user ends it');

    const space = await createSpace(p, `taken-${Date.now()}`);
    const moved = await signIn(p, { role: 'viewer', spaces: ['default', space] });
    const s3 = await live(moved, `?space=${space}`);
    await s3.wait(isEvent('snapshot'));
    const keep = await live(moved);
    t.teardown(() => keep.close());
    await keep.wait(isEvent('snapshot'));
    t.equal((await fetch(`${p.url}/api/users/${moved.userId}/spaces/${space}`, { method: 'DELETE', headers: admin.headers })).status, 204);
    await s3.ended(5000);
    t.match(s3.events.at(-1), { event: 'end', data: { reason: 'access_ended' } });
    report('default', a, 'still');
    await keep.wait(isValue(a, 'still'));
    t.pass("taking a space away ends that space's stream and no other");
  });

  t.test('a client that does not read is dropped; a reader on the same events gets every one', async (t) => {
    const reader = await signIn(p, { role: 'viewer' });
    const fast = await live(reader, `?connections=${a}&topics=values`);
    t.teardown(() => fast.close());
    await fast.wait(isEvent('snapshot'));
    const slow = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${p.url}/api/live?connections=${a}&topics=values`, { headers: reader.headers }, resolve);
      req.on('error', reject);
    });
    t.equal(slow.statusCode, 200);
    slow.pause();
    t.teardown(() => slow.destroy());
    // Paced by the reader: each batch of 20 (some 40 KB, under the 64 KiB a client may have unread) once it
    // has the one before, so a reader that reads keeps up however busy the machine; long enough to fill
    // what the kernel buffers for the other, which reads nothing.
    const big = 'x'.repeat(2000);
    const count = 4000;
    let from = fast.events.length;
    for (let i = 0; i < count; i++) {
      report('default', a, `${i}-${big}`);
      if (i % 20 === 19) {
        const last = `${i}-`;
        await fast.wait(
          isEvent('value', (d) => String(d.value).startsWith(last)),
          20_000,
          from,
        );
        from = fast.events.length; // the next batch comes after what the reader has now
      }
    }
    await fast.wait(
      isEvent('value', (d) => String(d.value).startsWith(`${count - 1}-`)),
      20_000,
    );
    t.equal(fast.events.filter(isEvent('value', (d) => String(d.value).endsWith(big))).length, count, 'the reader got every event');
    const deadline = Date.now() + 10_000;
    let metrics = '';
    while (
      !/live_clients_dropped_slow_total [1-9]/.test((metrics = await (await fetch(`${p.url}/metrics`)).text())) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 100));
    t.match(metrics, /live_clients_dropped_slow_total [1-9]/, 'the gateway dropped the slow client');
    t.match(metrics, /live_streams_open \d/);
    t.match(metrics, /live_events_sent_total [1-9]/);
  });

  t.test('a client dropped as slow resumes with Last-Event-ID after the last event it had whole, and misses none', async (t) => {
    const reader = await signIn(p, { role: 'viewer' });
    const droppedBefore = Number(/live_clients_dropped_slow_total (\d+)/.exec(await (await fetch(`${p.url}/metrics`)).text())?.[1] ?? 0);
    const slow = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${p.url}/api/live?connections=${a}&topics=values`, { headers: reader.headers }, resolve);
      req.on('error', reject);
    });
    t.equal(slow.statusCode, 200);
    slow.pause();
    t.teardown(() => slow.destroy());
    // Listened for from the start: a cut can close the response before the wait for it below begins.
    const closed = new Promise<void>((resolve) => {
      slow.once('close', resolve);
      slow.once('error', () => resolve());
    });
    const big = 'y'.repeat(2000);
    const count = 4000;
    for (let i = 0; i < count; i++) {
      report('default', a, `${i}-${big}`);
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5));
    }
    const deadline = Date.now() + 10_000;
    const dropped = async () =>
      Number(/live_clients_dropped_slow_total (\d+)/.exec(await (await fetch(`${p.url}/metrics`)).text())?.[1] ?? 0);
    while ((await dropped()) <= droppedBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // Said here, not found by a wait for a close that would never come: the client was cut as slow.
    if (!t.ok((await dropped()) > droppedBefore, 'the client that did not read was dropped as slow')) slow.destroy();
    // What reached the client before the cut: read to its end, as a browser would, then keep the whole events.
    let text = '';
    slow.setEncoding('utf8');
    slow.on('data', (chunk: string) => (text += chunk));
    slow.resume();
    const ended = await Promise.race([closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 15_000))]);
    if (!t.ok(ended, 'the cut response ends once read')) slow.destroy();
    const got = new Map<number, number>();
    let lastId = '';
    for (const block of text.split('\n\n').slice(0, -1)) {
      const id = /^id: (.*)$/m.exec(block)?.[1];
      if (id !== undefined) lastId = id;
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!/^event: value$/m.test(block) || data === undefined) continue;
      const n = Number(String((JSON.parse(data) as { value: string }).value).split('-')[0]);
      got.set(n, (got.get(n) ?? 0) + 1);
    }
    t.ok(got.size < count, `the client was cut off before the last event (it had ${got.size} of ${count})`);
    t.not(lastId, '', 'after some events with ids');
    const again = await live(reader, `?connections=${a}&topics=values`, { 'last-event-id': lastId });
    t.teardown(() => again.close());
    await again.wait(
      isEvent('value', (d) => String(d.value).startsWith(`${count - 1}-`)),
      20_000,
    );
    t.notOk(again.events.some(isEvent('snapshot')), 'the resumed stream replays from the held events, with no snapshot');
    for (const e of again.events.filter(isEvent('value', (d) => String(d.value).endsWith(big)))) {
      const n = Number(String((e as { data: { value: string } }).data.value).split('-')[0]);
      got.set(n, (got.get(n) ?? 0) + 1);
    }
    const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !got.has(i));
    const twice = [...got].filter(([, n]) => n > 1).map(([i]) => i);
    t.same(missing, [], 'no event is missing across the cut');
    t.same(twice, [], 'and none came twice');
  });

  t.test('the OpenAPI document describes the stream, its events and their data', async (t) => {
    const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as {
      paths: Record<string, any>;
      components: { schemas: Record<string, unknown> };
    };
    const content = doc.paths['/api/live'].get.responses['200'].content['text/event-stream'];
    t.same(Object.keys(content['x-events']).sort(), ['alarm', 'config', 'end', 'script', 'session', 'snapshot', 'value']);
    for (const name of ['LiveSnapshot', 'LiveValue', 'LiveSession', 'LiveConfigChange', 'LiveScriptRun', 'LiveAlarm', 'LiveEnd'])
      t.ok(doc.components.schemas[name], name);
  });

  t.test('a gateway that stops ends its streams with a last event', async (t) => {
    const other = await secondGateway(p);
    const s = await openSse(`${other.url}/api/live?connections=${a}`, viewer.headers);
    // Should a step below fail, the stream and the gateway still go (a gateway left with a stream open keeps the process alive).
    t.teardown(async () => {
      s.close();
      await other.stop();
    });
    const snapshot = await s.wait(isEvent('snapshot'));
    report('default', a, 'before-shutdown');
    await s.wait(isValue(a, 'before-shutdown'));
    await other.stop();
    await s.ended(2000);
    const end = s.events.at(-1)!;
    t.match(end, { event: 'end', id: /^\d+$/, data: { reason: 'shutdown' } }, 'a last event with an id');
    // The id is the position the stream reached in the event log: at least the last event it carried, and
    // further when the log moved on with events this stream does not carry (other spaces, other
    // connections), which a resume need not replay. Resuming from it elsewhere misses nothing and repeats nothing.
    const last = s.events.filter((e) => 'event' in e && e.event !== 'end').at(-1)!;
    t.ok(Number(idOf(end)) >= Number(idOf(last)) && Number(idOf(last)) > Number(idOf(snapshot)), 'with the id to resume after');
    report('default', a, 'after-shutdown');
    const again = await live(viewer, `?connections=${a}`, { 'last-event-id': idOf(end)! });
    t.teardown(() => again.close());
    t.match(
      await again.wait(() => true),
      { event: 'value', data: { value: 'after-shutdown' } },
      'a resume from it through another gateway: the next event, nothing twice',
    );
  });
});
