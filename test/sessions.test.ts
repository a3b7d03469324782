import { generateSync } from 'otplib';
import t from 'tap';
import { letAuthTimePass, startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, cookiesOf, createUser, login } from '@scada/testkit/session';

const p = await startTestPlatform({ REFRESH_REUSE_GRACE_SECONDS: '2' });
t.teardown(() => p.stop());

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

async function currentUser(headers: Record<string, string>) {
  return fetch(`${p.url}/api/auth/current-user`, { headers });
}

t.test(`sessions (${p.mode})`, async (t) => {
  t.test('a JSON login answers the token pair, no-store, and both cookies as the contract words them', async (t) => {
    const res = await login(p, 'admin', testAdminPassword);
    t.equal(res.status, 200);
    t.match(res.headers.get('cache-control'), /no-store/);
    const body = (await res.json()) as Record<string, unknown>;
    t.match(body, { token_type: 'Bearer', activeSpace: 'default', spaces: ['default'], access_token: String, refresh_token: String });
    const claims = claimsOf(body.access_token as string);
    t.equal(body['expire-seconds'], (claims.exp as number) - (claims.iat as number), 'expire-seconds is exp - iat');
    const cookies = cookiesOf(res);
    t.equal(cookies.svc_access_token?.value, body.access_token);
    t.equal(cookies.svc_access_token?.attributes, 'Path=/; Max-Age=300; HttpOnly; SameSite=Lax');
    t.equal(cookies.svc_refresh_token?.attributes, 'Path=/; Max-Age=86400; HttpOnly; SameSite=Lax');
  });

  t.test('a login by urlencoded form and by multipart form both succeed', async (t) => {
    const form = new URLSearchParams({ username: 'admin', password: testAdminPassword });
    t.equal((await fetch(`${p.url}/login`, { method: 'POST', body: form })).status, 200);
    const multipart = new FormData();
    multipart.set('username', 'admin');
    multipart.set('password', testAdminPassword);
    t.equal((await fetch(`${p.url}/login`, { method: 'POST', body: multipart })).status, 200);
  });

  t.test('a wrong password and an unknown user get the same 401 body', async (t) => {
    const known = await createUser(p, { role: 'viewer' });
    const wrong = await login(p, known.username, 'not-the-password');
    const unknown = await login(p, 'nobody-by-this-name', 'not-the-password');
    t.equal(wrong.status, 401);
    t.equal(unknown.status, 401);
    const strip = (b: Record<string, unknown>) => ({ ...b, instance: undefined });
    t.same(strip((await wrong.json()) as Record<string, unknown>), strip((await unknown.json()) as Record<string, unknown>));
  });

  t.test('a login without a password, or with a non-form body, is a 4xx and not a 500', async (t) => {
    const missing = await fetch(`${p.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"username":"admin"}',
    });
    t.equal(missing.status, 400);
    const array = await fetch(`${p.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' });
    t.equal(array.status, 400);
    const xml = await fetch(`${p.url}/login`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    t.equal(xml.status, 415);
    const typed = await fetch(`${p.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"username":"admin","password":12345678}',
    });
    t.equal(typed.status, 400);
  });

  t.test('current-user answers who the bearer is, with the active space and address', async (t) => {
    const admin = await asAdmin(p);
    const res = await currentUser(admin.headers);
    t.equal(res.status, 200);
    t.match(await res.json(), { name: 'admin', roles: ['admin'], activeSpace: 'default', remoteAddress: '127.0.0.1' });
  });

  t.test('no credentials is 401 unauthenticated; a bad token is 401 invalid_token with WWW-Authenticate', async (t) => {
    const none = await currentUser({});
    t.equal(none.status, 401);
    t.match(await none.json(), { code: 'unauthenticated' });
    const admin = await asAdmin(p);
    const [h, c, s] = admin.accessToken.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(admin.accessToken), sub: 'someone-else' })).toString('base64url')}.${s}`;
    const none256 = `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${c}.`;
    for (const token of [forged, none256, 'garbage', admin.refreshToken]) {
      const res = await currentUser({ authorization: `Bearer ${token}` });
      t.equal(res.status, 401);
      t.match(res.headers.get('www-authenticate'), /Bearer error="invalid_token"/);
      t.match(await res.json(), { code: 'invalid_token' });
    }
  });

  t.test('a session cookie wins over a bearer token on the same request', async (t) => {
    const viewer = await createUser(p, { role: 'viewer' });
    const res = await login(p, viewer.username, viewer.password);
    const cookie = `svc_access_token=${cookiesOf(res).svc_access_token?.value}`;
    const admin = await asAdmin(p);
    const me = await currentUser({ cookie, ...admin.headers });
    t.match(await me.json(), { name: viewer.username });
  });

  t.test('a request with only a valid refresh cookie is served and renews both cookies', async (t) => {
    const res = await login(p, 'admin', testAdminPassword);
    const refreshCookie = cookiesOf(res).svc_refresh_token?.value;
    const me = await currentUser({ cookie: `svc_refresh_token=${refreshCookie}` });
    t.equal(me.status, 200);
    const renewed = cookiesOf(me);
    t.ok(renewed.svc_access_token?.value, 'a fresh access cookie');
    t.ok(renewed.svc_refresh_token?.value && renewed.svc_refresh_token.value !== refreshCookie, 'a rotated refresh cookie');
  });

  t.test('refresh rotates; a reuse within the grace answers the current pair; a later reuse ends the family', async (t) => {
    const first = await bearerLogin(p, 'admin', testAdminPassword);
    const refresh = (token: string) =>
      fetch(`${p.url}/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: token }),
      });
    const rotated = await refresh(first.refreshToken);
    t.equal(rotated.status, 200);
    const pair = (await rotated.json()) as { access_token: string; refresh_token: string };
    t.not(pair.refresh_token, first.refreshToken);
    const again = await refresh(first.refreshToken);
    t.equal(again.status, 200, 'within the grace time');
    t.same(await again.json(), pair, 'the same current pair');
    await letAuthTimePass(p, 2.5);
    const late = await refresh(first.refreshToken);
    t.equal(late.status, 401, 'after the grace time');
    t.equal((await refresh(pair.refresh_token)).status, 401, 'the family is revoked');
    t.equal((await currentUser({ authorization: `Bearer ${pair.access_token}` })).status, 401, 'its access token too');
  });

  t.test('logout clears both cookies and the tokens stop working', async (t) => {
    const session = await bearerLogin(p, 'admin', testAdminPassword);
    const res = await fetch(`${p.url}/logout`, { method: 'POST', headers: session.headers });
    t.equal(res.status, 200);
    const cookies = cookiesOf(res);
    t.match(cookies.svc_access_token?.attributes, /Max-Age=0/);
    t.match(cookies.svc_refresh_token?.attributes, /Max-Age=0/);
    t.equal((await currentUser(session.headers)).status, 401);
    const refreshed = await fetch(`${p.url}/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: session.refreshToken }),
    });
    t.equal(refreshed.status, 401);
  });

  t.test('TOTP: login asks for the code, /validate completes it, and no code works twice', async (t) => {
    const user = await createUser(p, { role: 'editor' });
    const admin = await asAdmin(p);
    const enrol = await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: admin.headers });
    t.equal(enrol.status, 200);
    const { secret, otp_type, otpauth_url } = (await enrol.json()) as { secret: string; otp_type: string; otpauth_url: string };
    t.equal(otp_type, 'TOTP');
    t.match(otpauth_url, /^otpauth:\/\/totp\//);

    const first = await login(p, user.username, user.password);
    t.equal(first.status, 200);
    const challenge = (await first.json()) as Record<string, unknown>;
    t.match(challenge, { otp_required: true, otp_type: 'TOTP', username: user.username, otp_token: String });
    t.notOk(challenge.access_token, 'no tokens before the code');
    t.notOk(cookiesOf(first).svc_access_token, 'no session cookie before the code');
    t.ok(cookiesOf(first).svc_otp_token, 'the challenge cookie');

    const validate = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${p.url}/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const wrong = await validate({ username: user.username, otp_code: '000000', otp_token: challenge.otp_token as string });
    t.equal(wrong.status, 401, 'a wrong code');
    const code = generateSync({ secret });
    const ok = await validate({ username: user.username, otp_code: code, otp_token: challenge.otp_token as string });
    t.equal(ok.status, 200, 'the right code, with the challenge still usable after a wrong one');
    t.match(await ok.json(), { access_token: String, refresh_token: String });
    t.equal(
      (await validate({ username: user.username, otp_code: code, otp_token: challenge.otp_token as string })).status,
      401,
      'a used challenge',
    );

    const second = (await (await login(p, user.username, user.password)).json()) as { otp_token: string };
    const replay = await validate({ username: user.username, otp_code: code, otp_token: second.otp_token });
    t.equal(replay.status, 401, 'the same code with a new challenge');
    const noChallenge = await validate({ username: user.username, otp_code: code });
    t.equal(noChallenge.status, 401, 'no challenge at all');
  });

  t.test('a disabled user cannot sign in, and their token stops working on the next request', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const session = await bearerLogin(p, user.username, user.password);
    const admin = await asAdmin(p);
    const update = await fetch(`${p.url}/api/users/${user.userId}`, {
      method: 'PUT',
      headers: { ...admin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    t.equal(update.status, 204);
    t.equal((await currentUser(session.headers)).status, 401);
    const again = await login(p, user.username, user.password);
    t.equal(again.status, 401);
    t.match(await again.json(), { code: 'invalid_credentials' });
  });
});
