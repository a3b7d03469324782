import t from 'tap';
import { letAuthTimePass, secondGateway, startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, cookiesOf, createSpace, createUser, login, signIn } from '@scada/testkit/session';

// Proxies on loopback are trusted here, so tests can speak for other client addresses.
const p = await startTestPlatform({ LOCKOUT_SECONDS: '3', TRUSTED_PROXIES: '127.0.0.0/8', LOGIN_RATE_LIMIT_PER_MINUTE: '1000' });
t.teardown(() => p.stop());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

t.test(`access rules (${p.mode})`, async (t) => {
  t.test('a sixth login after five failures answers 423 with Retry-After, even with the right password', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    for (let i = 1; i <= 5; i++) t.equal((await login(p, user.username, 'wrong-password')).status, 401, `failure ${i}`);
    const locked = await login(p, user.username, user.password);
    t.equal(locked.status, 423);
    t.ok(Number(locked.headers.get('retry-after')) >= 1);
    t.match(await locked.json(), { code: 'account_locked' });
    const upper = await login(p, user.username.toUpperCase(), user.password);
    t.equal(upper.status, 423, 'the name is compared case-insensitively');

    const admin = await asAdmin(p);
    const list = await fetch(`${p.url}/api/auth/lockedUsers`, { headers: admin.headers });
    t.ok(((await list.json()) as string[]).includes(user.username.toLowerCase()), 'listed as locked');
    const unlock = await fetch(`${p.url}/api/auth/lockedUsers/${user.username}`, { method: 'DELETE', headers: admin.headers });
    t.equal(unlock.status, 204);
    t.equal((await login(p, user.username, user.password)).status, 200, 'unlocked by the admin');
  });

  t.test('a name that does not exist locks the same way, and the lock ends by itself', async (t) => {
    for (let i = 0; i < 5; i++) await login(p, 'ghost-operator', 'whatever-password');
    const locked = await login(p, 'ghost-operator', 'whatever-password');
    t.equal(locked.status, 423);
    await letAuthTimePass(p, 3.2);
    t.equal((await login(p, 'ghost-operator', 'whatever-password')).status, 401, 'after LOCKOUT_SECONDS');
  });

  t.test('the auth log records attempts with address and outcome, newest first', async (t) => {
    await login(p, 'log-probe', 'bad-password', { 'x-forwarded-for': '198.51.100.7' });
    const admin = await asAdmin(p);
    const res = await fetch(`${p.url}/api/auth/auth-logs?page=0&size=5`, { headers: admin.headers });
    t.equal(res.status, 200);
    const page = (await res.json()) as { content: { username: string; ip: string; isSuccessful: boolean }[]; size: number };
    t.equal(page.size, 5);
    t.match(page.content[0], { username: 'log-probe', ip: '198.51.100.7', isSuccessful: false });
  });

  t.test('login answers 429 with Retry-After past the per-address rate', async (t) => {
    const q = await startTestPlatform({ LOGIN_RATE_LIMIT_PER_MINUTE: '3' });
    t.teardown(() => q.stop());
    for (let i = 0; i < 3; i++) await login(q, 'someone', 'some-password');
    const limited = await login(q, 'someone', 'some-password');
    t.equal(limited.status, 429);
    t.ok(Number(limited.headers.get('retry-after')) >= 1);
    t.match(await limited.json(), { code: 'rate_limited' });
  });

  t.test('cross-site requests with session cookies, and cross-site logins, answer 403 csrf_rejected', async (t) => {
    const evil = { origin: 'https://evil.example' };
    const crossLogin = await login(p, 'admin', testAdminPassword, evil);
    t.equal(crossLogin.status, 403);
    t.match(await crossLogin.json(), { code: 'csrf_rejected' });
    const res = await login(p, 'admin', testAdminPassword);
    const cookie = `svc_access_token=${cookiesOf(res).svc_access_token?.value}`;
    const write = await fetch(`${p.url}/api/spaces`, { method: 'POST', headers: json({ cookie, ...evil }), body: '{"name":"csrf-space"}' });
    t.equal(write.status, 403);
    const fetchSite = await fetch(`${p.url}/api/spaces`, {
      method: 'POST',
      headers: json({ cookie, 'sec-fetch-site': 'cross-site' }),
      body: '{"name":"csrf-space"}',
    });
    t.equal(fetchSite.status, 403);
    const sameOrigin = await fetch(`${p.url}/api/spaces`, {
      method: 'POST',
      headers: json({ cookie, origin: p.url }),
      body: '{"name":"same-origin-space"}',
    });
    t.equal(sameOrigin.status, 200, 'same origin passes');
    const admin = await asAdmin(p);
    const bearer = await fetch(`${p.url}/api/spaces`, {
      method: 'POST',
      headers: json({ ...admin.headers, ...evil }),
      body: '{"name":"bearer-space"}',
    });
    t.equal(bearer.status, 200, 'a bearer client is not a CSRF risk');
  });

  t.test('roles: a viewer cannot write, a non-admin cannot administer', async (t) => {
    const viewer = await signIn(p, { role: 'viewer' });
    const editor = await signIn(p, { role: 'editor' });
    const createSpaceAs = (headers: Record<string, string>) =>
      fetch(`${p.url}/api/spaces`, { method: 'POST', headers: json(headers), body: '{"name":"nope"}' });
    t.equal((await createSpaceAs(viewer.headers)).status, 403);
    t.equal((await createSpaceAs(editor.headers)).status, 403);
    t.equal((await fetch(`${p.url}/api/users`, { headers: editor.headers })).status, 403);
    t.equal((await fetch(`${p.url}/api/spaces`, { headers: viewer.headers })).status, 200, 'anyone signed in lists their spaces');
  });

  t.test('a role taken away applies on the next request', async (t) => {
    const user = await createUser(p, { role: 'admin' });
    const session = await bearerLogin(p, user.username, user.password);
    t.equal((await fetch(`${p.url}/api/users`, { headers: session.headers })).status, 200);
    const admin = await asAdmin(p);
    const demote = await fetch(`${p.url}/api/users/${user.userId}`, {
      method: 'PUT',
      headers: json(admin.headers),
      body: '{"roles":["viewer"]}',
    });
    t.equal(demote.status, 204);
    t.equal((await fetch(`${p.url}/api/users`, { headers: session.headers })).status, 403);
  });

  t.test('X-Space: no header is the active space, a foreign or unknown space 403, a malformed header 400', async (t) => {
    const other = await createSpace(p, `other-${Date.now()}`);
    const editor = await signIn(p, { role: 'editor' });
    const projects = (space?: string | string[], init: RequestInit = {}) => {
      const headers = new Headers(editor.headers);
      for (const s of space === undefined ? [] : [space].flat()) headers.append('x-space', s);
      if (init.body) headers.set('content-type', 'application/json');
      return fetch(`${p.url}/api/projects`, { ...init, headers });
    };
    const created = await projects(undefined, {
      method: 'POST',
      body: JSON.stringify({ name: `space-rule-${Date.now()}`, isActive: true }),
    });
    t.equal(created.status, 200, 'written to the active space');
    t.equal((await projects('default')).status, 200);
    for (const space of [other, 'no-such-space']) {
      const res = await projects(space);
      t.equal(res.status, 403, `space ${space}`);
      t.match(await res.json(), { code: 'space_forbidden' });
    }
    for (const bad of ['', 'x'.repeat(65), ['default', 'default']]) {
      const res = await projects(bad);
      t.equal(res.status, 400, `header ${JSON.stringify(bad).slice(0, 20)}`);
      t.match(await res.json(), { code: 'bad_header' });
    }
    const admin = await asAdmin(p);
    const adminRes = await fetch(`${p.url}/api/projects`, { headers: { ...admin.headers, 'x-space': other } });
    t.equal(adminRes.status, 200, 'an administrator is in every space');
    t.same(await adminRes.json(), [], 'and sees only that space');
  });

  t.test('the IP filter: a denied address is 403 ip_denied on every route but the probes, and a change applies within 2 s', async (t) => {
    const admin = await asAdmin(p);
    const put = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(`${p.url}/api/ip/settings`, { method: 'PUT', headers: json({ ...admin.headers, ...extra }), body: JSON.stringify(body) });
    const bad = await put({ allowedIps: '10.0.0.0/33, 127.1', deniedIps: '' });
    t.equal(bad.status, 400);
    const problem = (await bad.json()) as { errors: { message: string }[] };
    t.match(JSON.stringify(problem.errors), /10\.0\.0\.0\/33/);
    t.match(JSON.stringify(problem.errors), /127\.1/);

    const selfLockout = await put({ allowedIps: '10.0.0.0/8' });
    t.equal(selfLockout.status, 409);
    t.match(await selfLockout.json(), { code: 'would_lock_out_self' });

    t.equal((await put({ allowedIps: '', deniedIps: '203.0.113.0/24, 2001:db8::/32' })).status, 204);
    const deniedAt = async (address: string, path: string) => {
      const deadline = Date.now() + 2000;
      for (;;) {
        const res = await fetch(`${p.url}${path}`, { headers: { 'x-forwarded-for': address } });
        if (res.status === 403 || Date.now() > deadline) return res;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    for (const path of ['/metrics', '/openapi.json', '/api/auth/current-user']) {
      const res = await deniedAt('203.0.113.9', path);
      t.equal(res.status, 403, `${path} from a denied address`);
      t.match(await res.json(), { code: 'ip_denied' });
    }
    t.equal((await deniedAt('::ffff:203.0.113.9', '/metrics')).status, 403, 'IPv4-mapped IPv6 is folded');
    t.equal((await deniedAt('2001:db8::1', '/metrics')).status, 403, 'IPv6 ranges');
    // What a proxy that appends sends for a client that wrote a long header of its own: the address the
    // proxy appended still decides, however many entries come before it.
    const padded = [...Array.from({ length: 100 }, (_, i) => `10.0.${i >> 8}.${i & 255}`), '203.0.113.9'].join(', ');
    t.equal((await deniedAt(padded, '/metrics')).status, 403, 'entries the client puts in front do not hide its address');
    t.equal((await deniedAt(`not-an-address, ${'x, '.repeat(70)}203.0.113.9`, '/metrics')).status, 403, 'nor do malformed ones');
    t.equal((await fetch(`${p.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 200, 'probes stay open');
    t.equal((await fetch(`${p.url}/metrics`, { headers: { 'x-forwarded-for': '198.51.100.1' } })).status, 200, 'other addresses pass');
    t.equal((await put({ allowedIps: '', deniedIps: '' })).status, 204);
  });

  t.test('a second gateway replica refuses a logged-out token within a second', async (t) => {
    const second = await secondGateway(p);
    t.teardown(second.stop);
    const other = second.url;
    const session = await bearerLogin(p, 'admin', testAdminPassword);
    t.equal((await fetch(`${other}/api/auth/current-user`, { headers: session.headers })).status, 200);
    t.equal((await fetch(`${p.url}/logout`, { method: 'POST', headers: session.headers })).status, 200);
    const loggedOutAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - loggedOutAt < 1000) {
      status = (await fetch(`${other}/api/auth/current-user`, { headers: session.headers })).status;
    }
    t.equal(status, 401, 'refused by the other replica within 1 s');
  });
});
