/**
 * The MMS client against fake servers: the captured libiec61850 answers replayed for association, reads,
 * writes, a data set and reports; then every way a peer can fail.
 */
import t from 'tap';
import { MmsClient, MmsConnectionError, MmsError, type MmsClientOptions } from '../../src/mms/client.ts';
import type { MmsData } from '../../src/mms/mms_data.ts';
import type { InformationReport } from '../../src/mms/mms_pdu.ts';
import { haveCaptures } from '../mms/helpers.ts';
import {
  captureReplay,
  REFUSED_ACCEPT,
  requestKey,
  startFakeServer,
  until,
  type Exchange,
  type FakeServer,
  type FakeServerOptions,
} from './fake_server.ts';
import {
  ccFrame,
  confirmedError,
  drFrame,
  identifyResponse,
  mmsFrame,
  nameListResponse,
  readResponse,
  rejectPdu,
  reportPdu,
  withInvokeId,
  writeResponse,
} from './pdus.ts';

const skipCaptures = haveCaptures ? false : 'the shared captures are absent';
const LD = 'simpleIOGenericIO';

type Teardown = { teardown(fn: () => unknown): void };

async function serverFor(t: Teardown, o: FakeServerOptions = {}): Promise<FakeServer> {
  const server = await startFakeServer(o);
  t.teardown(() => server.close());
  return server;
}

async function clientOf(t: Teardown, server: FakeServer, o: Partial<MmsClientOptions> = {}): Promise<MmsClient> {
  const client = await MmsClient.connect({ host: '127.0.0.1', port: server.port, connectTimeoutMs: 1000, requestTimeoutMs: 1000, ...o });
  t.teardown(() => client.close());
  return client;
}

/** Answers like the captured server: the captured response with the new invoke id, and what followed it. */
function replay(x: Exchange): void {
  const entry = captureReplay().find((e) => e.request === requestKey(x.request));
  if (entry) x.conn.sendFrames(mmsFrame(withInvokeId(entry.response, x.invokeId)), ...entry.then);
  else x.conn.send(confirmedError(x.invokeId, 7, 2));
}

const bits = (bitLength: number, ...bytes: number[]): MmsData => ({
  type: 'bit-string',
  value: { bitLength, bytes: Uint8Array.from(bytes) },
});

async function enableCapturedReport(client: MmsClient): Promise<InformationReport[]> {
  const reports: InformationReport[] = [];
  client.on('report', (r) => reports.push(r));
  const rcb = `${LD}/LLN0$RP$EventsRCB01`;
  const results = await client.writeMany([
    { ref: `${rcb}$TrgOps`, data: bits(6, 0x1c) },
    { ref: `${rcb}$IntgPd`, data: { type: 'unsigned', value: 5000 } },
    { ref: `${rcb}$RptEna`, data: { type: 'boolean', value: true } },
  ]);
  t.same(results, [{ ok: true }, { ok: true }, { ok: true }]);
  await client.write(`${rcb}$GI`, { type: 'boolean', value: true });
  await until(() => reports.length === 2);
  return reports;
}

t.test('with the captured answers: associates, reads AnIn1, writes the vendor, reads the data set', { skip: skipCaptures }, async (t) => {
  const server = await serverFor(t, { handle: replay });
  const client = await clientOf(t, server);
  t.match(client.negotiated, { maxPduSize: 65000, maxOutstanding: 5, tpduSize: 8192 });
  const [mag] = await client.read([`${LD}/GGIO1$MX$AnIn1$mag$f`]);
  t.ok(mag.ok && mag.data.type === 'float' && Math.abs(mag.data.value + 0.6391589) < 1e-6, 'the captured float');
  await client.write(`${LD}/GGIO1$DC$NamPlt$vendor`, { type: 'visible-string', value: 'libiec61850.com' });
  const members = await client.readNamedVariableList(`${LD}/LLN0$Events`);
  t.same(
    members.map((m) => m.ok && m.data.value),
    [true, false, true, false],
  );
  const refused = await client.read([`${LD}/GGIO1$XX$nothing`]).catch((e: unknown) => e);
  t.ok(refused instanceof MmsError && refused.errorClass === 'access', 'an unknown request gets a confirmed error');
});

t.test('the reports the captured server sends after GI arrive as report events', { skip: skipCaptures }, async (t) => {
  const server = await serverFor(t, { handle: replay });
  const client = await clientOf(t, server);
  const reports = await enableCapturedReport(client);
  t.equal(reports[0].variables.kind === 'list' && reports[0].variables.name.item, 'RPT');
  t.equal(reports[0].results.length, 15);
});

t.test('frames cut into one-byte TCP segments are reassembled', { skip: skipCaptures }, async (t) => {
  const server = await serverFor(t, { handle: replay, chunking: (b) => Array.from(b, (x) => Uint8Array.of(x)) });
  const client = await clientOf(t, server, { connectTimeoutMs: 3000, requestTimeoutMs: 3000 });
  const reports = await enableCapturedReport(client);
  t.equal(reports.length, 2);
});

t.test('several frames in one segment, and a frame split across the segment boundary', async (t) => {
  const server = await serverFor(t, {
    handle: (x) => x.conn.send(readResponse(x.invokeId, [{ type: 'integer', value: x.invokeId }]), readResponse(x.invokeId + 100, [])),
    chunking: (b) => [b.subarray(0, 10), b.subarray(10, b.length - 3), b.subarray(b.length - 3)],
  });
  const client = await clientOf(t, server);
  const warnings: Error[] = [];
  client.on('warning', (w) => warnings.push(w));
  const results = await Promise.all([client.read(['a/x']), client.read(['a/y']), client.read(['a/z'])]);
  t.same(
    results.map(([r]) => r.ok && r.data.value),
    [1, 2, 3],
  );
  await until(() => warnings.length === 3);
  t.match(warnings[0].message, /matches no request/);
});

t.test('a device that accepts TCP and never answers: connect times out and the socket is closed', async (t) => {
  const server = await serverFor(t, { cc: 'silent' });
  const started = Date.now();
  const error = await MmsClient.connect({ host: '127.0.0.1', port: server.port, connectTimeoutMs: 150 }).catch((e: unknown) => e);
  t.ok(error instanceof MmsConnectionError && error.code === 'connect_timeout', String(error));
  t.ok(Date.now() - started < 1000);
  await until(() => server.open === 0);
});

t.test('a server that confirms COTP but never answers the association times out too', async (t) => {
  const server = await serverFor(t, { accept: 'silent' });
  const error = await MmsClient.connect({ host: '127.0.0.1', port: server.port, connectTimeoutMs: 150 }).catch((e: unknown) => e);
  t.match(error, { code: 'connect_timeout' });
  await until(() => server.open === 0);
});

t.test('a refused association rejects with the AARE diagnostic', async (t) => {
  const server = await serverFor(t, { accept: REFUSED_ACCEPT });
  const error = await MmsClient.connect({ host: '127.0.0.1', port: server.port }).catch((e: unknown) => e);
  t.ok(error instanceof MmsConnectionError);
  t.match(error, { code: 'association_refused', message: /rejected \(permanent\): authentication failure/ });
  await until(() => server.open === 0);
});

t.test('a COTP disconnect request rejects the connect with its reason', async (t) => {
  const server = await serverFor(t, { cc: drFrame(3) });
  const error = await MmsClient.connect({ host: '127.0.0.1', port: server.port }).catch((e: unknown) => e);
  t.match(error, { code: 'cotp_refused', message: /address unknown/ });
});

t.test('nobody listening: connect_failed', async (t) => {
  const server = await startFakeServer();
  const port = server.port;
  await server.close();
  const error = await MmsClient.connect({ host: '127.0.0.1', port }).catch((e: unknown) => e);
  t.match(error, { code: 'connect_failed', message: /ECONNREFUSED/ });
});

t.test('an aborted signal cancels a connect in progress', async (t) => {
  const server = await serverFor(t, { cc: 'silent' });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 30);
  const error = await MmsClient.connect({ host: '127.0.0.1', port: server.port, signal: controller.signal }).catch((e: unknown) => e);
  t.match(error, { code: 'cancelled' });
  await until(() => server.open === 0);
});

t.test('a server closing mid-read rejects the read, emits close once, and refuses later calls', async (t) => {
  const server = await serverFor(t, { handle: (x) => void x.conn.socket.destroy() });
  const client = await clientOf(t, server);
  const closes: Error[] = [];
  client.on('close', (e) => closes.push(e));
  const error = await client.read(['a/b']).catch((e: unknown) => e);
  t.match(error, { code: 'closed' });
  t.equal(closes.length, 1);
  t.match(await client.identify().catch((e: unknown) => e), { code: 'not_connected' });
});

t.test('a reject PDU becomes an MmsError and the association goes on', async (t) => {
  const server = await serverFor(t, {
    handle: (x) => (x.request.service === 'read' ? rejectPdu(x.invokeId, 1) : identifyResponse(x.invokeId)),
  });
  const client = await clientOf(t, server);
  const error = await client.read(['a/b']).catch((e: unknown) => e);
  t.ok(error instanceof MmsError);
  t.match(error, { kind: 'reject', errorClass: 'confirmed-request', code: 1, message: /unrecognized-service/ });
  t.same(await client.identify(), { vendor: 'acme', model: 'fake', revision: '1.0' });
});

t.test("an answer of another service than the request's is a protocol error of that request; the association goes on", async (t) => {
  let reads = 0;
  const server = await serverFor(t, {
    handle: (x) =>
      x.request.service === 'read' && reads++ === 0
        ? identifyResponse(x.invokeId)
        : x.request.service === 'read'
          ? readResponse(x.invokeId, [{ type: 'boolean', value: true }])
          : identifyResponse(x.invokeId),
  });
  const client = await clientOf(t, server);
  const error = await client.read(['a/b']).catch((e: unknown) => e);
  t.ok(error instanceof MmsConnectionError);
  t.match(error, { code: 'protocol_error', message: 'read answered with a identify response' });
  t.match(await client.read(['a/b']), [{ ok: true, data: { type: 'boolean', value: true } }], 'the same read again, answered as it should');
  t.same(await client.identify(), { vendor: 'acme', model: 'fake', revision: '1.0' });
});

t.test('a read answered in place is still checked: its number of results, and the service it answers', async (t) => {
  let reads = 0;
  const server = await serverFor(t, {
    handle: (x) =>
      x.request.service === 'read' && reads++ === 0
        ? readResponse(x.invokeId, [
            { type: 'boolean', value: true },
            { type: 'boolean', value: false },
          ])
        : readResponse(x.invokeId, [{ type: 'float', value: 0.5, double: false }]),
  });
  const client = await clientOf(t, server);
  const error = await client.read(['a/b']).catch((e: unknown) => e);
  t.match(error, { code: 'protocol_error', message: 'read of 1 variables answered with 2 results' });
  t.match(await client.read(['a/b']), [{ ok: true, data: { type: 'float', value: 0.5 } }], 'the same read again, answered as it should');
  const identify = await client.identify().catch((e: unknown) => e);
  t.match(identify, { code: 'protocol_error', message: 'identify answered with a read response' });
  t.match(await client.read(['a/b', 'a/c']).catch((e: unknown) => e), {
    code: 'protocol_error',
    message: 'read of 2 variables answered with 1 results',
  });
  t.equal(client.outstanding, 0, 'nothing is left waiting');
});

t.test('a confirmed error carries class, code and text; a write refusal carries the data access error', async (t) => {
  const server = await serverFor(t, {
    handle: (x) => (x.request.service === 'read' ? confirmedError(x.invokeId, 2, 1) : writeResponse(x.invokeId, [3])),
  });
  const client = await clientOf(t, server);
  t.match(await client.read(['a/b']).catch((e: unknown) => e), {
    kind: 'service-error',
    errorClass: 'definition',
    code: 1,
    text: 'definition: object-undefined',
  });
  t.match(await client.write('a/b', { type: 'boolean', value: true }).catch((e: unknown) => e), {
    kind: 'access',
    code: 3,
    message: /a\/b: object-access-denied/,
  });
});

t.test('malformed bytes from the server close the connection with a protocol error', async (t) => {
  const server = await serverFor(t, { handle: (x) => x.conn.sendFrames(mmsFrame(Uint8Array.of(0xa1, 0x05, 0x02, 0x01))) });
  const client = await clientOf(t, server);
  t.match(await client.read(['a/b']).catch((e: unknown) => e), { code: 'protocol_error', message: /malformed/ });
  await until(() => server.open === 0);
});

t.test('an unanswered request times out alone; the association stays', async (t) => {
  const server = await serverFor(t, { handle: (x) => (x.request.service === 'identify' ? identifyResponse(x.invokeId) : undefined) });
  const client = await clientOf(t, server, { requestTimeoutMs: 80 });
  t.match(await client.read(['a/b']).catch((e: unknown) => e), { code: 'request_timeout' });
  t.equal(client.outstanding, 0);
  t.equal((await client.identify()).vendor, 'acme');
});

t.test('no more than maxOutstanding requests are in flight; the rest wait their turn', async (t) => {
  let inFlight = 0;
  let most = 0;
  const server = await serverFor(t, {
    handle: (x) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        x.conn.send(readResponse(x.invokeId, [{ type: 'unsigned', value: x.invokeId }]));
      }, 10);
    },
  });
  const client = await clientOf(t, server, { maxOutstanding: 2 });
  const values = await Promise.all(Array.from({ length: 8 }, (_, i) => client.read([`a/v${i}`]).then(([r]) => r.ok && r.data.value)));
  t.same(values, [1, 2, 3, 4, 5, 6, 7, 8]);
  t.equal(most, 2);
});

t.test('a request waits for a turn at most queueTimeoutMs, then fails queue_timeout and is never sent', async (t) => {
  const held: Exchange[] = [];
  const server = await serverFor(t, { handle: (x) => void held.push(x) });
  const client = await clientOf(t, server, { maxOutstanding: 1, queueTimeoutMs: 60, requestTimeoutMs: 2000 });
  const first = client.read(['a/first']);
  const second = client.read(['a/second']).catch((e: unknown) => e);
  t.equal(client.queued, 1);
  t.match(await second, { code: 'queue_timeout' });
  t.equal(client.queued, 0);
  await until(() => held.length === 1);
  held[0].conn.send(readResponse(held[0].invokeId, [{ type: 'integer', value: 1 }]));
  t.match(await first, [{ ok: true }], 'the one sent kept its own timeout');
  t.equal(held.length, 1, 'the request that ran out of waiting was never sent');
});

t.test("a request bound to a caller's deadline that has passed is never sent: deadline_passed", async (t) => {
  const held: Exchange[] = [];
  const server = await serverFor(t, { handle: (x) => void held.push(x) });
  const client = await clientOf(t, server);
  const late = client.within(Date.now() - 1);
  t.match(await late.read(['a/late']).catch((e: unknown) => e), { code: 'deadline_passed', message: /not sent/ });
  t.match(await late.getAllNames({ objectClass: 'domain' }).catch((e: unknown) => e), { code: 'deadline_passed' });
  const at = Date.now() + 60_000;
  t.equal(client.within(at).within(at + 1000).deadline, at, 'a view of a view keeps the earlier deadline');
  t.equal(client.within(at + 1000).within(at).deadline, at);
  t.equal(client.outstanding + client.queued, 0);
  t.same(held, [], 'the device saw nothing');
});

t.test("a request waiting for a turn leaves the queue at its caller's deadline, before its own wait ends, and is never sent", async (t) => {
  const held: Exchange[] = [];
  const server = await serverFor(t, { handle: (x) => void held.push(x) });
  // the queue's own wait is far longer than the caller's: only the caller's deadline can end the wait
  const client = await clientOf(t, server, { maxOutstanding: 1, queueTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  const first = client.read(['a/first']);
  const waited = client
    .within(Date.now() + 50)
    .read(['a/second'])
    .catch((e: unknown) => e);
  // queued behind the second, without a deadline: it keeps its place and is sent once the first is answered
  const third = client.read(['a/third']);
  t.equal(client.queued, 2);
  t.match(await waited, { code: 'deadline_passed', message: /while it waited for a turn/ });
  t.equal(client.queued, 1, 'the one whose caller gave up left the queue; the other waits on');
  await until(() => held.length === 1);
  held[0].conn.send(readResponse(held[0].invokeId, [{ type: 'integer', value: 1 }]));
  t.match(await first, [{ ok: true }]);
  await until(() => held.length === 2);
  held[1].conn.send(readResponse(held[1].invokeId, [{ type: 'integer', value: 3 }]));
  t.match(await third, [{ ok: true, data: { value: 3 } }]);
  const names = held.map((x) =>
    x.request.service === 'read' && x.request.variables.kind === 'variables' ? x.request.variables.names[0] : undefined,
  );
  t.match(names, [{ item: 'first' }, { item: 'third' }], 'the second was never sent');
});

t.test('a request whose caller gives up after it was sent is answered as any other; the next one of its caller is not sent', async (t) => {
  const held: Exchange[] = [];
  const server = await serverFor(t, { handle: (x) => void held.push(x) });
  const client = await clientOf(t, server, { requestTimeoutMs: 60_000 });
  const caller = client.within(Date.now() + 50);
  const sent = caller.read(['a/sent']);
  await until(() => held.length === 1);
  // the deadline passes while the device works on it: the answer still belongs to its invoke id
  await new Promise((r) => setTimeout(r, 60));
  held[0].conn.send(readResponse(held[0].invokeId, [{ type: 'integer', value: 1 }]));
  t.match(await sent, [{ ok: true }]);
  t.match(await caller.read(['a/next']).catch((e: unknown) => e), { code: 'deadline_passed' });
  t.equal(held.length, 1);
});

t.test('the request timeout counts from the sending, not from the wait for a turn', async (t) => {
  // each answer takes answerMs; the second waits for the first, so from the call it takes twice that,
  // more than the request timeout, and from its sending less
  const answerMs = 1300;
  const server = await serverFor(t, {
    handle: (x) => void setTimeout(() => x.conn.send(readResponse(x.invokeId, [{ type: 'integer', value: x.invokeId }])), answerMs),
  });
  const client = await clientOf(t, server, { maxOutstanding: 1, queueTimeoutMs: 5000, requestTimeoutMs: 2000 });
  const values = await Promise.all([client.read(['a/one']), client.read(['a/two'])]);
  t.same(
    values.map(([r]) => r.ok),
    [true, true],
  );
});

t.test('requests are cut into DTs of the TPDU size the CC settled, and PDUs above the negotiated size are refused', async (t) => {
  const server = await serverFor(t, { cc: ccFrame(128), handle: (x) => writeResponse(x.invokeId, [true]) });
  const client = await clientOf(t, server);
  t.equal(client.negotiated.tpduSize, 128);
  const text = 'x'.repeat(1000);
  await client.write('a/b', { type: 'visible-string', value: text });
  const conn = server.connections[0];
  t.ok(conn.largestDt <= 128, `largest DT ${conn.largestDt}`);
  const sent = conn.received.at(-1);
  t.ok(
    sent?.pdu === 'confirmed-request' && sent.request.service === 'write' && sent.request.data[0].value === text,
    'the server reassembled the write',
  );
  const huge = await client.write('a/b', { type: 'octet-string', value: new Uint8Array(70000) }).catch((e: unknown) => e);
  t.match(huge, { code: 'too_large' });
});

t.test('getAllNames follows moreFollows; getNameList returns one page', async (t) => {
  const server = await serverFor(t, {
    handle: (x) => {
      if (x.request.service !== 'getNameList') return;
      return x.request.continueAfter === undefined
        ? nameListResponse(x.invokeId, ['A', 'B'], true)
        : nameListResponse(x.invokeId, ['C'], false);
    },
  });
  const client = await clientOf(t, server);
  t.same(await client.getNameList({ objectClass: 'domain' }), { identifiers: ['A', 'B'], moreFollows: true });
  t.same(await client.getAllNames({ objectClass: 'namedVariable', domain: 'LD' }), ['A', 'B', 'C']);
});

t.test('dead-peer detection: an answered probe keeps the association, an unanswered one closes it', async (t) => {
  let answer = true;
  const server = await serverFor(t, { handle: (x) => (answer ? identifyResponse(x.invokeId) : undefined) });
  const client = await clientOf(t, server, { idleTimeoutMs: 40, requestTimeoutMs: 60 });
  const closed = new Promise<Error>((r) => client.once('close', r));
  await new Promise((r) => setTimeout(r, 150));
  t.equal(client.closeReason, undefined);
  t.ok(server.connections[0].received.filter((p) => p.pdu === 'confirmed-request').length >= 2, 'probes were sent');
  answer = false;
  t.match(await closed, { code: 'peer_unresponsive' });
  await until(() => server.open === 0);
});

t.test("a hold on reading ends when a request is sent, and never lasts half a request's time", async (t) => {
  const server = await serverFor(t, {
    handle: (x) =>
      x.request.service === 'identify' ? identifyResponse(x.invokeId) : readResponse(x.invokeId, [{ type: 'unsigned', value: 7 }]),
  });
  const client = await clientOf(t, server, { requestTimeoutMs: 20_000 });
  // A hold whose end never comes: only a request sent, or its own bound (here 10 s), ends it.
  const never = new Promise<void>(() => undefined);
  client.holdReads(never, 60_000);
  const read = await Promise.race([
    client.read(['a/b']).then(([r]) => r),
    new Promise((resolve) => setTimeout(() => resolve('not in 5 s'), 5000)),
  ]);
  t.match(read, { ok: true, data: { value: 7 } }, 'a read sent during a hold is answered at once: the request ended the hold');
  const short = await clientOf(t, server, { requestTimeoutMs: 400 });
  short.holdReads(never, 60_000);
  // The hold ends at half the request time (200 ms) at the latest.
  const answered = await Promise.race([
    short.identify().then(() => 'answered'),
    new Promise((resolve) => setTimeout(() => resolve('not in 5 s'), 5000)),
  ]);
  t.equal(answered, 'answered');
  t.equal(short.closeReason, undefined, 'the association stands');
});

t.test('a burst of reports is handled over several turns of the event loop, in order, timers running between', async (t) => {
  const server = await serverFor(t, { handle: (x) => identifyResponse(x.invokeId) });
  const client = await clientOf(t, server);
  await client.identify();
  const seen: number[] = [];
  // Each report costs 1 ms to handle here; 400 of them arrive in one write.
  client.on('report', (r) => {
    const stop = performance.now() + 1;
    while (performance.now() < stop);
    const first = r.results[0];
    seen.push(first?.ok && first.data.type === 'unsigned' ? Number(first.data.value) : -1);
  });
  let handledWhenTimerRan = -1;
  const burst = Array.from({ length: 400 }, (_, i) => reportPdu({ scope: 'vmd', item: 'RPT' }, [{ type: 'unsigned', value: i }]));
  server.connections[0]!.send(...burst);
  // A timer set now runs as soon as the link gives the event loop back, not after the whole burst.
  await until(() => seen.length > 0);
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      handledWhenTimerRan = seen.length;
      resolve();
    }, 0),
  );
  await until(() => seen.length === 400, 10_000);
  t.ok(handledWhenTimerRan < 400, `a timer ran while the burst was handled (after ${handledWhenTimerRan} reports)`);
  t.same(
    seen,
    Array.from({ length: 400 }, (_, i) => i),
    'every report, in the order sent',
  );
  t.equal(client.closeReason, undefined, 'the association stands');
});

t.test('conclude ends the association gracefully, abort ends it at once', async (t) => {
  const server = await serverFor(t, { handle: (x) => identifyResponse(x.invokeId) });
  const client = await clientOf(t, server);
  await client.identify();
  await client.conclude();
  t.match(client.closeReason, { code: 'closed', message: 'association concluded' });
  t.ok(server.connections[0].received.some((p) => p.pdu === 'conclude-request'));
  await until(() => server.open === 0);
  const second = await clientOf(t, await serverFor(t));
  const pending = second.read(['a/b']).catch((e: unknown) => e);
  second.abort();
  t.match(await pending, { code: 'aborted' });
});

t.test('100 connect/close cycles leave no connection open', async (t) => {
  const server = await serverFor(t);
  for (let i = 0; i < 100; i++) {
    const client = await MmsClient.connect({ host: '127.0.0.1', port: server.port });
    if (i % 2 === 0) client.close();
    else await client.conclude(200);
  }
  await until(() => server.open === 0);
  t.equal(server.accepted, 100);
});
