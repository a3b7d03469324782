import { authService } from '@scada/auth';
import { startService } from '@scada/platform';
import { importJWK, SignJWT } from 'jose';
import { generateSync } from 'otplib';
import t from 'tap';
import { requestFrom } from '@scada/testkit/from_address';
import { letAuthTimePass, secondGateway, signingKeyOf, startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, createUser, login } from '@scada/testkit/session';

// 127.0.0.3 plays a trusted proxy; 127.0.0.2 an ordinary client that is not one.
// A long bus timeout: ten scrypt checks at once on a loaded CI machine take longer than the default.
const p = await startTestPlatform({
  LOCKOUT_SECONDS: '3',
  TRUSTED_PROXIES: '127.0.0.3/32',
  BUS_TIMEOUT_MS: '30000',
  LOGIN_IN_FLIGHT_PER_ADDRESS: '64',
});
t.teardown(() => p.stop());

const json = { 'content-type': 'application/json' };

/** Signs an access-like token with the platform's real key, with whatever header and claims a test wants. */
async function forge(header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  const { kid, jwk } = await signingKeyOf(p);
  const key = await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA');
  return new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header }).sign(key);
}

t.test(`access edge cases (${p.mode})`, async (t) => {
  t.test('empty, repeated and oversized login fields answer 4xx', async (t) => {
    const post = (body: string, type = 'application/x-www-form-urlencoded') =>
      fetch(`${p.url}/login`, { method: 'POST', headers: { 'content-type': type }, body });
    t.equal((await post('username=&password=')).status, 400, 'empty');
    t.equal((await post('username=admin&username=other&password=12345678')).status, 400, 'repeated');
    const huge = await post(JSON.stringify({ username: 'a'.repeat(1024 * 1024), password: 'x'.repeat(16) }), 'application/json');
    t.ok(huge.status === 413 || huge.status === 400, `1 MiB field answers ${huge.status}`);
  });

  t.test('passwords are never truncated: a difference after byte 72 is a different password', async (t) => {
    const password = `${'p'.repeat(72)}${'q'.repeat(28)}`;
    const user = await createUser(p, { role: 'viewer', password });
    t.equal((await login(p, user.username, `${'p'.repeat(72)}${'z'.repeat(28)}`)).status, 401);
    t.equal((await login(p, user.username, password)).status, 200);
  });

  t.test('tokens with the right key but the wrong profile are refused', async (t) => {
    const admin = await asAdmin(p);
    const now = Math.floor(Date.now() / 1000);
    const good = {
      iss: 'scada-platform',
      aud: 'scada-api',
      sub: admin.userId,
      sid: 'forged-sid',
      jti: 'forged-jti',
      iat: now,
      exp: now + 60,
    };
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['wrong issuer', {}, { ...good, iss: 'someone-else' }],
      ['wrong audience', {}, { ...good, aud: 'scada-refresh' }],
      ['refresh typ', { typ: 'refresh+jwt' }, good],
      ['expired', {}, { ...good, iat: now - 120, exp: now - 60 }],
      ['no jti', {}, { ...good, jti: undefined }],
      ['kid with a path', { kid: '../../../etc/passwd' }, good],
      ['kid with SQL', { kid: "' or 1=1 --" }, good],
    ];
    t.equal(
      (await fetch(`${p.url}/api/auth/current-user`, { headers: { authorization: `Bearer ${await forge({}, good)}` } })).status,
      200,
      'the control case passes',
    );
    for (const [name, header, claims] of cases) {
      const res = await fetch(`${p.url}/api/auth/current-user`, { headers: { authorization: `Bearer ${await forge(header, claims)}` } });
      t.equal(res.status, 401, name);
    }
    const asRefresh = await fetch(`${p.url}/refresh`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ refresh_token: admin.accessToken }),
    });
    t.equal(asRefresh.status, 401, 'an access token is not a refresh token');
  });

  t.test('TOTP accepts one step back only: a code from the future or two steps old is refused', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const admin = await asAdmin(p);
    const { secret } = (await (
      await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: admin.headers })
    ).json()) as { secret: string };
    const challenge = async () => ((await (await login(p, user.username, user.password)).json()) as { otp_token: string }).otp_token;
    // Three sign-ins take a second or two; start them early in a 30 s step so that the step cannot
    // change under the test and turn "one step back" into "two steps old".
    const intoStep = (Date.now() / 1000) % 30;
    if (intoStep > 20) await new Promise((r) => setTimeout(r, (30.2 - intoStep) * 1000));
    const now = Math.floor(Date.now() / 1000);
    const codeAt = (epoch: number) => generateSync({ secret, epoch });
    const validate = async (code: string) =>
      fetch(`${p.url}/validate`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username: user.username, otp_code: code, otp_token: await challenge() }),
      });
    t.equal((await validate(codeAt(now + 30))).status, 401, 'one step ahead');
    t.equal((await validate(codeAt(now - 60))).status, 401, 'two steps old');
    t.equal((await validate(codeAt(now - 30))).status, 200, 'one step back');
  });

  t.test('an X-Space of 10 KiB answers 400', async (t) => {
    const admin = await asAdmin(p);
    const res = await fetch(`${p.url}/api/projects`, { headers: { ...admin.headers, 'x-space': 's'.repeat(10 * 1024) } });
    t.equal(res.status, 400);
  });

  t.test('ten parallel wrong passwords against two auth replicas lock the name once, for LOCKOUT_SECONDS', async (t) => {
    const replica = await startService(authService, {
      bus: p.proc.bus,
      store: p.proc.store!,
      log: p.proc.log,
      config: p.proc.config.services.auth,
    });
    t.teardown(() => replica.stop());
    const name = `parallel-${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => login(p, name, 'wrong-password-1')));
    t.ok(
      answers.every((r) => r.status === 401 || r.status === 423),
      'each answers 401 or 423',
    );
    const locked = await login(p, name, 'wrong-password-1');
    t.equal(locked.status, 423);
    t.ok(Number(locked.headers.get('retry-after')) <= 3, 'the lock was not extended past LOCKOUT_SECONDS');
    await letAuthTimePass(p, 3.3);
    t.equal((await login(p, name, 'wrong-password-1')).status, 401, 'the lock ended after LOCKOUT_SECONDS');
  });

  t.test('the IP filter by socket address: a valid token from outside the allow-list is refused, on both gateways', async (t) => {
    const admin = await asAdmin(p);
    const other = await secondGateway(p);
    t.teardown(other.stop);
    const auth: [string, string] = ['authorization', admin.headers.authorization as string];
    const put = (body: unknown) =>
      fetch(`${p.url}/api/ip/settings`, { method: 'PUT', headers: { ...admin.headers, ...json }, body: JSON.stringify(body) });
    t.equal((await put({ allowedIps: '127.0.0.1, 127.0.0.3', deniedIps: '' })).status, 204);
    const until = async (url: string, from: string, headers: [string, string][], want: number) => {
      const deadline = Date.now() + 2000;
      for (;;) {
        const res = await requestFrom(from, `${url}/api/auth/current-user`, { headers });
        if (res.status === want || Date.now() > deadline) return res;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    for (const url of [p.url, other.url]) {
      t.equal((await until(url, '127.0.0.2', [auth], 403)).status, 403, `outside the allow-list at ${url}`);
      t.equal(
        (await until(url, '127.0.0.2', [auth, ['x-forwarded-for', '127.0.0.1']], 403)).status,
        403,
        'X-Forwarded-For from an untrusted peer is ignored',
      );
      t.equal(
        (await until(url, '127.0.0.3', [auth, ['x-forwarded-for', '127.0.0.1']], 200)).status,
        200,
        'a trusted proxy speaks for its client',
      );
      t.equal((await until(url, '127.0.0.3', [auth, ['x-forwarded-for', '127.0.0.2']], 403)).status, 403, 'and for a denied one');
    }
    t.equal((await put({ allowedIps: '', deniedIps: '' })).status, 204);
  });

  t.test('a gateway started after a logout refuses the logged-out token from its first request', async (t) => {
    const session = await bearerLogin(p, 'admin', testAdminPassword);
    t.equal((await fetch(`${p.url}/logout`, { method: 'POST', headers: session.headers })).status, 200);
    const fresh = await secondGateway(p);
    t.teardown(fresh.stop);
    t.equal((await fetch(`${fresh.url}/api/auth/current-user`, { headers: session.headers })).status, 401);
  });
});
