import { generateSync } from 'otplib';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, createUser, login, type SignedIn } from '@scada/testkit/session';

// Step-up: what a signed-in user must prove again before changing their password or their second factor.
const p = await startTestPlatform({ LOCKOUT_THRESHOLD: '3', LOGIN_RATE_LIMIT_PER_MINUTE: '100000' });
t.teardown(() => p.stop());

const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const code = async (res: Response) => ((await res.json()) as { code: string }).code;
const me = (s: SignedIn) => fetch(`${p.url}/api/auth/current-user`, { headers: s.headers });

async function authLog(username: string): Promise<string[]> {
  const admin = await asAdmin(p);
  const page = (await (await fetch(`${p.url}/api/auth/auth-logs?size=200`, { headers: admin.headers })).json()) as {
    content: { username: string; msg: string }[];
  };
  return page.content.filter((e) => e.username === username).map((e) => e.msg);
}

t.test(`step-up (${p.mode})`, async (t) => {
  const admin = await asAdmin(p);

  t.test("changing one's own password needs the current one; the other sessions end, the calling one stays", async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const caller = await bearerLogin(p, user.username, user.password);
    const elsewhere = await bearerLogin(p, user.username, user.password);
    const change = (body: Record<string, unknown>) => send('POST', '/api/users/reset-password', caller.headers, body);
    const next = 'a-new-password-42';
    const missing = await change({ newPassword: next, newPasswordAgain: next });
    t.equal(missing.status, 403);
    t.equal(await code(missing), 'reauthentication_required');
    t.equal((await change({ oldPassword: 'not-the-password', newPassword: next, newPasswordAgain: next })).status, 403, 'a wrong one');
    t.equal(
      (await change({ oldPassword: user.password, newPassword: next, newPasswordAgain: 'something-else-1' })).status,
      400,
      'the new one twice the same',
    );
    t.equal(
      (await change({ oldPassword: user.password, newPassword: 'short', newPasswordAgain: 'short' })).status,
      400,
      'at least 8 characters',
    );
    t.equal((await change({ oldPassword: user.password, newPassword: next, newPasswordAgain: next })).status, 204);
    t.equal((await login(p, user.username, user.password)).status, 401, 'the old password is gone');
    t.equal((await login(p, user.username, next)).status, 200, 'the new one works');
    t.equal((await me(caller)).status, 200, 'the calling session stays');
    t.equal((await me(elsewhere)).status, 401, 'the other session ended');
  });

  t.test('with TOTP enrolled, the password change needs the code too, and a code works once', async (t) => {
    const user = await createUser(p, { role: 'editor' });
    const session = await bearerLogin(p, user.username, user.password);
    const { secret } = (await (await send('POST', `/api/users/${user.userId}/otp`, admin.headers)).json()) as { secret: string };
    const change = (body: Record<string, unknown>) => send('POST', '/api/users/reset-password', session.headers, body);
    const next = 'another-password-7';
    t.equal((await change({ oldPassword: user.password, newPassword: next, newPasswordAgain: next })).status, 403, 'no code');
    const otpCode = generateSync({ secret });
    t.equal((await change({ oldPassword: user.password, newPassword: next, newPasswordAgain: next, otpCode })).status, 204);
    t.equal(
      (await change({ oldPassword: next, newPassword: 'third-password-3', newPasswordAgain: 'third-password-3', otpCode })).status,
      403,
      'the same code again',
    );
  });

  t.test("an administrator's password reset sets requirePasswordReset; the user's own change clears it", async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const temporary = 'temporary-password-1';
    t.equal((await send('POST', `/api/users/${user.username}/reset-password`, admin.headers, { newPassword: temporary })).status, 204);
    const session = await bearerLogin(p, user.username, temporary);
    t.match(await (await fetch(`${p.url}/api/users/profile`, { headers: session.headers })).json(), { requirePasswordReset: true });
    const mine = 'my-own-password-9';
    t.equal(
      (
        await send('POST', '/api/users/reset-password', session.headers, {
          oldPassword: temporary,
          newPassword: mine,
          newPasswordAgain: mine,
        })
      ).status,
      204,
    );
    t.match(await (await fetch(`${p.url}/api/users/profile`, { headers: session.headers })).json(), { requirePasswordReset: false });
    t.ok(
      (await authLog(user.username)).some((m) => m === 'temporary password set by administrator admin'),
      "the administrator's act is in the auth log",
    );
  });

  t.test("removing or re-enrolling one's own TOTP needs the password and the code; wrong ones count toward the lock", async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const session = await bearerLogin(p, user.username, user.password);
    const path = `/api/users/${session.userId}/otp`;
    t.equal((await send('POST', path, session.headers)).status, 403, 'enrolment without the password');
    const enrolled = await send('POST', path, session.headers, { currentPassword: user.password });
    t.equal(enrolled.status, 200, 'enrolment with it');
    const { secret } = (await enrolled.json()) as { secret: string };
    const removal = await send('DELETE', path, session.headers);
    t.equal(removal.status, 403);
    t.equal(await code(removal), 'reauthentication_required');
    t.equal((await send('DELETE', path, session.headers, { currentPassword: user.password })).status, 403, 'the code too, while enrolled');
    t.equal((await send('POST', path, session.headers, { currentPassword: user.password })).status, 403, 're-enrolment without the code');
    t.equal(
      (await send('DELETE', path, session.headers, { currentPassword: user.password, otpCode: '000000' })).status,
      403,
      'a wrong code (1)',
    );
    t.equal(
      (await send('POST', path, session.headers, { currentPassword: 'wrong-password-1', otpCode: generateSync({ secret }) })).status,
      403,
      'a wrong password (2)',
    );
    t.match(await (await fetch(`${p.url}/api/users/profile`, { headers: session.headers })).json(), { otpType: 'totp' }, 'nothing changed');
    t.equal(
      (await send('DELETE', path, session.headers, { currentPassword: user.password, otpCode: '000001' })).status,
      403,
      'a wrong code (3)',
    );
    const locked = await send('DELETE', path, session.headers, { currentPassword: user.password, otpCode: generateSync({ secret }) });
    t.equal(locked.status, 423, 'the third wrong answer locked the name, the right one now included');
    t.equal((await login(p, user.username, user.password)).status, 423, 'sign-in too');
    t.equal((await fetch(`${p.url}/api/auth/lockedUsers/${user.username}`, { method: 'DELETE', headers: admin.headers })).status, 204);
    t.equal(
      (await send('DELETE', path, session.headers, { currentPassword: user.password, otpCode: generateSync({ secret }) })).status,
      204,
      'after the unlock',
    );
  });

  t.test('an administrator acting on themself is asked the same; acting on another user is not, and is logged', async (t) => {
    const self = await bearerLogin(p, 'admin', (await import('@scada/testkit/platform')).testAdminPassword);
    t.equal((await send('POST', `/api/users/${self.userId}/otp`, self.headers)).status, 403, 'own enrolment without the password');
    t.equal((await send('DELETE', `/api/users/${self.userId}/otp`, self.headers)).status, 403, 'own removal without it');
    t.equal(
      (await send('PUT', `/api/users/${self.userId}`, self.headers, { password: 'changed-by-put-1' })).status,
      409,
      'no own password change past the step-up',
    );
    t.equal(
      (await send('POST', `/api/users/${self.username}/reset-password`, self.headers, { newPassword: 'changed-by-reset-1' })).status,
      409,
    );

    const user = await createUser(p, { role: 'viewer' });
    t.equal((await send('POST', `/api/users/${user.userId}/otp`, self.headers)).status, 200, "another user's enrolment");
    t.equal((await send('DELETE', `/api/users/${user.userId}/otp`, self.headers)).status, 204, 'and removal');
    t.equal((await send('PUT', `/api/users/${user.userId}`, self.headers, { password: 'set-by-admin-1' })).status, 204, 'and password');
    const log = await authLog(user.username);
    for (const act of ['TOTP enrolled', 'TOTP turned off', 'password set'])
      t.ok(log.includes(`${act} by administrator admin`), `${act} is in the auth log`);
  });
});
