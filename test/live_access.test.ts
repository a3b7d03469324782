/**
 * A live stream (`GET /api/live`) lives as long as its session may see it, and no longer: it outlives the
 * token it was opened with while the session is renewed, and ends with a last `event: end` within 2 s of
 * the session expiring or of the IP filter denying the client's address, and at the next periodic check
 * when a change's event never reached the gateway. Tokens live seconds here (test runs allow it), so
 * every administrator action signs in afresh.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { bearerLogin, type SignedIn } from '@scada/testkit/session';
import { isEvent, openSse, openSseFrom, type SseStream } from '@scada/testkit/sse';

const p = await startTestPlatform({
  ACCESS_TOKEN_TTL_SECONDS: '2',
  REFRESH_TOKEN_TTL_SECONDS: '5',
  LIVE_ACCESS_CHECK_MS: '1000',
  LIVE_HEARTBEAT_MS: '500',
});
t.teardown(() => p.stop());

const json = (who: SignedIn) => ({ ...who.headers, 'content-type': 'application/json' });
const admin = () => bearerLogin(p, 'admin', testAdminPassword);
const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number; sid: string };
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/** A new viewer of `default`, signed in with a bearer token. */
async function viewer(): Promise<SignedIn> {
  const username = `viewer-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await fetch(`${p.url}/api/users`, {
    method: 'POST',
    headers: json(await admin()),
    body: JSON.stringify({ username, password, roles: ['viewer'], spaces: ['default'] }),
  });
  if (res.status !== 200) throw new Error(`creating a viewer answered ${res.status}: ${await res.text()}`);
  return bearerLogin(p, username, password);
}

/** Waits for the end of a stream; answers its last event and when the end came. */
async function endOf(s: SseStream, ms: number): Promise<{ last: unknown; at: number }> {
  await s.ended(ms);
  return { last: s.events.at(-1), at: Date.now() };
}

t.test(`a live stream ends when its access does (${p.mode})`, async (t) => {
  t.test('a renewal keeps the stream past its first token and session; it ends within 2 s of the session expiring', async (t) => {
    const user = await viewer();
    const s = await openSse(`${p.url}/api/live?topics=config`, user.headers);
    t.teardown(() => s.close());
    await s.wait(isEvent('snapshot'));
    const first = claims(user.refreshToken).exp * 1000;
    await sleepUntil(first - 1500);
    const renewed = await fetch(`${p.url}/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: user.refreshToken }),
    });
    t.equal(renewed.status, 200, 'the session is renewed before it expires');
    const until = claims(((await renewed.json()) as { refresh_token: string }).refresh_token).exp * 1000;
    t.ok(until > first, 'to a later end');
    await sleepUntil(first + 1000);
    t.notOk(s.events.some(isEvent('end')), 'the stream outlived the token it was opened with and the first end of its session');
    const { last, at } = await endOf(s, until - Date.now() + 4000);
    t.match(last, { event: 'end', data: { reason: 'session_expired' } }, 'its last event says why');
    t.ok(at >= until - 50, `not before the session's end (${at - until} ms after it)`);
    t.ok(at - until < 2000, `within 2 s of it (${at - until} ms)`);
  });

  t.test("the IP filter denying the client's address ends its stream within 2 s; another address keeps its own", async (t) => {
    const boss = await admin();
    const denied = await viewer();
    const kept = await viewer();
    const s = await openSseFrom('127.0.0.2', `${p.url}/api/live?topics=config`, denied.headers);
    t.teardown(() => s.close());
    const other = await openSse(`${p.url}/api/live?topics=config`, kept.headers);
    t.teardown(() => other.close());
    await Promise.all([s.wait(isEvent('snapshot')), other.wait(isEvent('snapshot'))]);
    const setFilter = (deniedIps: string) =>
      fetch(`${p.url}/api/ip/settings`, { method: 'PUT', headers: json(boss), body: JSON.stringify({ allowedIps: '', deniedIps }) });
    t.equal((await setFilter('127.0.0.2')).status, 204);
    // The change is made when it is answered: the 2 s count from then.
    const made = Date.now();
    t.teardown(async () => void (await setFilter('')));
    const { last, at } = await endOf(s, 3000);
    t.match(last, { event: 'end', data: { reason: 'ip_denied' } });
    t.ok(at - made < 2000, `ended ${at - made} ms after the change was made`);
    t.notOk(other.events.some(isEvent('end')), 'a stream from an address still allowed goes on');
  });

  t.test('a change whose event never reached the gateway still ends the stream at the next periodic check', async (t) => {
    const disabled = await viewer();
    const revoked = await viewer();
    const s1 = await openSse(`${p.url}/api/live?topics=config`, disabled.headers);
    t.teardown(() => s1.close());
    const s2 = await openSse(`${p.url}/api/live?topics=config`, revoked.headers);
    t.teardown(() => s2.close());
    await Promise.all([s1.wait(isEvent('snapshot')), s2.wait(isEvent('snapshot'))]);
    // Straight in the store, as if the auth service's events had been lost on the way.
    const store = p.proc.store!;
    await store.query('update auth.users set enabled = false where id = $1', [disabled.userId]);
    await store.query('update auth.sessions set revoked_at = now() where sid = $1', [claims(revoked.accessToken).sid]);
    const [a, b] = await Promise.all([endOf(s1, 3000), endOf(s2, 3000)]);
    t.match(a.last, { event: 'end', data: { reason: 'access_ended' } }, 'a disabled user');
    t.match(b.last, { event: 'end', data: { reason: 'session_ended' } }, 'a revoked session');
  });
});
