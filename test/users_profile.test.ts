/**
 * The user routes HMI clients of the reference product call, through the gateway: a user's own profile
 * and default space, an administrator's view of one user's spaces and roles, the default space of any
 * user, the password reset by an administrator, the deletion of several users at once, and what the
 * sign-in offers.
 */
import { generateSync } from 'otplib';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, createSpace, createUser, login, signIn } from '@scada/testkit/session';

const p = await startTestPlatform({ LOCKOUT_THRESHOLD: '4' });
t.teardown(() => p.stop());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });
const get = async (path: string, headers: Record<string, string>) => fetch(`${p.url}${path}`, { headers });
const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: body === undefined ? headers : json(headers),
    body: body === undefined ? undefined : JSON.stringify(body),
  });

t.test(`users, profiles and memberships (${p.mode})`, async (t) => {
  const admin = await asAdmin(p);

  t.test('the profile is the caller; they change email and phone, nothing else', async (t) => {
    const me = await signIn(p, { role: 'viewer' });
    const profile = (await (await get('/api/users/profile', me.headers)).json()) as Record<string, unknown>;
    t.match(profile, { id: me.userId, username: me.username, otpType: 'none', requirePasswordReset: false, roles: ['viewer'] });
    t.notMatch(JSON.stringify(profile), /scrypt|secret|hash/i, 'no secret');
    t.equal(
      (await send('PUT', '/api/users/profile', me.headers, { email: 'me@plant.example', phone: '+90555', otpType: 'none' })).status,
      204,
    );
    t.match(await (await get('/api/users/profile', me.headers)).json(), { email: 'me@plant.example', phone: '+90555' });
    t.equal((await send('PUT', '/api/users/profile', me.headers, { email: '' })).status, 204, 'an empty email removes it');
    t.match(await (await get('/api/users/profile', me.headers)).json(), { email: null, phone: '+90555' }, 'a phone left out is kept');
    t.equal(
      (await send('PUT', '/api/users/profile', me.headers, { email: 'x@y.example', roles: ['admin'] })).status,
      400,
      "roles are not the user's to change",
    );
    t.equal((await send('PUT', '/api/users/profile', me.headers, { email: 'x@y.example', username: 'other' })).status, 400, 'nor the name');
    t.equal((await send('PUT', '/api/users/profile', me.headers, { phone: '1' })).status, 400, 'email is required, as in the reference');
    t.equal((await send('PUT', '/api/users/profile', me.headers, { email: 'not an address' })).status, 400);
    t.equal(
      (await send('PUT', '/api/users/profile', me.headers, { email: 'a@b.example', phone: '1234567890123456' })).status,
      400,
      'a phone of 16 characters',
    );
    t.equal(
      (await send('PUT', '/api/users/profile', me.headers, { email: 'a@b.example', otpType: 'sms' })).status,
      400,
      'no SMS codes: the platform sends no messages',
    );
    t.equal(
      (await send('PUT', '/api/users/profile', me.headers, { email: 'a@b.example', otpType: 'totp' })).status,
      400,
      'enrolment answers a secret, so it is not a profile change',
    );
    t.equal((await get('/api/users/profile', {})).status, 401);
  });

  t.test('turning TOTP off through the profile needs the password and a fresh code; wrong ones count toward the lock', async (t) => {
    const user = await createUser(p, { role: 'editor' });
    const me = await bearerLogin(p, user.username, user.password);
    const { secret } = (await (
      await send('POST', `/api/users/${me.userId}/otp`, me.headers, { currentPassword: user.password })
    ).json()) as { secret: string };
    const off = (extra: Record<string, unknown>) =>
      send('PUT', '/api/users/profile', me.headers, { email: null, otpType: 'none', ...extra });
    const refused = await off({});
    t.equal(refused.status, 403);
    t.match(await refused.json(), { code: 'reauthentication_required' });
    t.equal((await off({ currentPassword: user.password })).status, 403, 'the code too, while enrolled');
    t.equal((await off({ currentPassword: 'not-the-password', otpCode: generateSync({ secret }) })).status, 403, 'a wrong password');
    t.match(await (await get('/api/users/profile', me.headers)).json(), { otpType: 'totp' }, 'nothing changed');
    t.equal((await off({ currentPassword: user.password, otpCode: generateSync({ secret }) })).status, 204);
    t.match(await (await get('/api/users/profile', me.headers)).json(), { otpType: 'none' });
    t.equal((await off({})).status, 204, 'asking for the type one has is no change');

    const victim = await signIn(p, { role: 'viewer' });
    t.equal((await send('POST', `/api/users/${victim.userId}/otp`, victim.headers, { currentPassword: victim.password })).status, 200);
    const guess = () =>
      send('PUT', '/api/users/profile', victim.headers, {
        email: null,
        otpType: 'none',
        currentPassword: 'guessed-password',
        otpCode: '000000',
      });
    for (let i = 0; i < 4; i++) t.equal((await guess()).status, 403);
    t.equal((await guess()).status, 423, 'the fourth wrong answer locked the name');
    t.equal((await login(p, victim.username, victim.password)).status, 423, 'sign-in too');
  });

  t.test('the default space: chosen by the user among theirs, it is where requests without X-Space go', async (t) => {
    const second = await createSpace(p, `second-${Date.now()}`);
    const foreign = await createSpace(p, `foreign-${Date.now()}`);
    const me = await signIn(p, { role: 'editor', spaces: ['default', second] });
    t.match(await (await get('/api/users/default-space', me.headers)).json(), { id: 'default' }, '`default` until one is chosen');
    t.equal((await send('PUT', `/api/users/default-space?spaceId=${second}`, me.headers)).status, 204);
    t.match(await (await get('/api/users/default-space', me.headers)).json(), { id: second });
    t.match(await (await get('/api/auth/current-user', me.headers)).json(), { activeSpace: second });
    const made = (await (await send('POST', '/api/projects', me.headers, { name: 'where-am-i', isActive: true })).json()) as { id: string };
    t.equal(
      (await get(`/api/projects/${made.id}`, { ...me.headers, 'x-space': second })).status,
      200,
      'a request without X-Space works in the chosen space',
    );
    t.equal((await get(`/api/projects/${made.id}`, { ...me.headers, 'x-space': 'default' })).status, 404);
    t.equal(
      (await send('PUT', `/api/users/default-space?spaceId=${foreign}`, me.headers)).status,
      404,
      'a space the user is not in does not exist for them',
    );
    t.equal((await send('PUT', '/api/users/default-space?spaceId=nowhere', me.headers)).status, 404);
    t.equal((await send('PUT', '/api/users/default-space', me.headers)).status, 400, 'spaceId is required');
    t.equal((await send('PUT', '/api/users/default-space?spaceId=bad%20id', me.headers)).status, 400);

    t.match(
      await (await get(`/api/users/${me.username}/default-space`, admin.headers)).json(),
      { id: second },
      'an administrator reads it by username',
    );
    t.equal(
      (await send('PUT', `/api/users/${me.username}/default-space?spaceId=${foreign}`, admin.headers)).status,
      409,
      'not a space of the user',
    );
    t.equal((await send('PUT', `/api/users/${me.username}/default-space?spaceId=default`, admin.headers)).status, 204);
    t.match(
      await (await get('/api/users/default-space', me.headers)).json(),
      { id: 'default' },
      "the administrator's choice applies on the next request",
    );
    t.equal((await get('/api/users/nobody-here/default-space', admin.headers)).status, 404);
    t.equal((await get(`/api/users/${me.username}/default-space`, me.headers)).status, 403, "another user's is the administrator's");
  });

  t.test('spaces of a user: listed, given, read and taken, never the last one', async (t) => {
    const space = await createSpace(p, `given-${Date.now()}`);
    const user = await createUser(p, { role: 'viewer' });
    const me = await bearerLogin(p, user.username, user.password);
    const base = `/api/users/${user.userId}/spaces`;
    t.same(
      ((await (await get(base, admin.headers)).json()) as { id: string }[]).map((s) => s.id),
      ['default'],
    );
    t.equal((await get(`/api/projects`, { ...me.headers, 'x-space': space })).status, 403, 'not in the space yet');
    const added = await send('POST', `${base}?spaceId=${space}`, admin.headers);
    t.equal(added.status, 200);
    t.match(await added.json(), { id: space });
    t.equal((await send('POST', `${base}?spaceId=${space}`, admin.headers)).status, 200, 'giving it again changes nothing');
    t.equal((await get(`/api/projects`, { ...me.headers, 'x-space': space })).status, 200, "the space applies on the user's next request");
    t.match(await (await get(`${base}/${space}`, admin.headers)).json(), { id: space });
    t.equal((await send('DELETE', `${base}/${space}`, admin.headers)).status, 204);
    t.equal((await get(`/api/projects`, { ...me.headers, 'x-space': space })).status, 403, 'and so does taking it');
    t.equal((await get(`${base}/${space}`, admin.headers)).status, 404, 'a space the user does not have');
    t.equal((await send('DELETE', `${base}/${space}`, admin.headers)).status, 404);
    t.equal((await send('DELETE', `${base}/default`, admin.headers)).status, 409, 'the last space stays');
    t.equal((await send('POST', `${base}?spaceId=nowhere`, admin.headers)).status, 404);
    t.equal((await send('POST', `/api/users/no-such-user/spaces?spaceId=default`, admin.headers)).status, 404);
    t.equal((await get(base, me.headers)).status, 403, 'administrators only');
  });

  t.test('roles of a user are global: listed, given, read, taken, and answered per space', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const me = await bearerLogin(p, user.username, user.password);
    const base = `/api/users/${user.userId}/roles`;
    const roles = (await (await get(base, admin.headers)).json()) as Record<string, unknown>[];
    t.match(roles, [{ id: 'viewer', name: 'viewer' }]);
    t.ok(roles[0]?.creationDate, 'roles carry audit fields');
    t.equal((await send('POST', '/api/projects', me.headers, { name: 'not-yet', isActive: true })).status, 403, 'a viewer cannot write');
    t.match(await (await send('POST', `${base}?roleId=editor`, admin.headers)).json(), { id: 'editor', name: 'editor' });
    t.equal(
      (await send('POST', '/api/projects', me.headers, { name: `now-${Date.now()}`, isActive: true })).status,
      200,
      'the role applies on the next request',
    );
    t.match(await (await get(`${base}/editor`, admin.headers)).json(), { id: 'editor' });
    t.equal((await get(`${base}/admin`, admin.headers)).status, 404, 'a role the user does not have');
    t.equal((await send('POST', `${base}?roleId=superuser`, admin.headers)).status, 404, 'no such role');
    const other = await createSpace(p, `roles-${Date.now()}`);
    t.same(
      ((await (await get(`${base}/by-space?spaceId=default`, admin.headers)).json()) as { id: string }[]).map((r) => r.id),
      ['viewer', 'editor'],
    );
    t.same(await (await get(`${base}/by-space?spaceId=${other}`, admin.headers)).json(), [], 'none in a space the user is not in');
    t.same(
      ((await (await get(`/api/users/${admin.userId}/roles/by-space?spaceId=${other}`, admin.headers)).json()) as { id: string }[]).map(
        (r) => r.id,
      ),
      ['admin'],
      'an administrator is in every space',
    );
    t.equal((await send('DELETE', `${base}/editor`, admin.headers)).status, 204);
    t.equal(
      (await send('POST', '/api/projects', me.headers, { name: `later-${Date.now()}`, isActive: true })).status,
      403,
      'taken away on the next request',
    );
    t.equal((await send('DELETE', `${base}/viewer`, admin.headers)).status, 409, 'the last role stays');
    t.equal(
      (await send('DELETE', `/api/users/${admin.userId}/roles/admin`, admin.headers)).status,
      409,
      'an administrator cannot demote themself',
    );
  });

  t.test('the last enabled administrator keeps the role; another administrator can lose it', async (t) => {
    const second = await createUser(p, { role: 'admin' });
    const other = await bearerLogin(p, second.username, second.password);
    await send('POST', `/api/users/${second.userId}/roles?roleId=viewer`, admin.headers);
    t.equal((await send('DELETE', `/api/users/${second.userId}/roles/admin`, admin.headers)).status, 204);
    t.equal((await get('/api/users', other.headers)).status, 403, 'no longer an administrator');
  });

  t.test("users of the active space: the X-Space one, else the caller's default", async (t) => {
    const space = await createSpace(p, `active-${Date.now()}`);
    const member = await createUser(p, { role: 'viewer', spaces: [space] });
    const outsider = await createUser(p, { role: 'viewer' });
    const names = (await (await get('/api/users/by-active-space', { ...admin.headers, 'x-space': space })).json()) as string[];
    t.ok(names.includes(member.username), 'a member');
    t.ok(names.includes('admin'), 'administrators are in every space');
    t.notOk(names.includes(outsider.username), 'not a user of another space');
    t.ok(
      ((await (await get('/api/users/by-active-space', admin.headers)).json()) as string[]).includes(outsider.username),
      'without X-Space: the default space',
    );
    t.equal((await get('/api/users/by-active-space', { ...admin.headers, 'x-space': 'nowhere' })).status, 403);
  });

  t.test('an administrator resets a password: with a temporary one, or to one nobody knows; never answered or logged', async (t) => {
    const user = await createUser(p, { role: 'editor', password: 'original-password-1' });
    const session = await bearerLogin(p, user.username, user.password);
    const temporary = 'temporary-password-42';
    const reset = await send('POST', `/api/users/${user.username}/reset-password`, admin.headers, { newPassword: temporary });
    t.equal(reset.status, 204);
    t.equal(await reset.text(), '', 'nothing answered');
    t.equal((await get('/api/users/profile', session.headers)).status, 401, "the user's sessions ended");
    t.equal((await login(p, user.username, 'original-password-1')).status, 401, 'the old password is gone');
    const back = await bearerLogin(p, user.username, temporary);
    t.match(
      await (await get('/api/users/profile', back.headers)).json(),
      { requirePasswordReset: true },
      'the user is asked to choose their own',
    );

    const bodiless = await fetch(`${p.url}/api/users/${user.username}/reset-password`, { method: 'POST', headers: admin.headers });
    t.equal(bodiless.status, 204, 'the reference sends no body');
    t.equal((await login(p, user.username, temporary)).status, 401, 'without a body, the password stops working');
    t.equal((await get('/api/users/profile', back.headers)).status, 401);
    t.match(await (await get(`/api/users/${user.userId}`, admin.headers)).json(), { requirePasswordReset: true });
    t.equal(
      (await send('POST', `/api/users/${user.username}/reset-password`, admin.headers, { newPassword: 'another-temporary-7' })).status,
      204,
    );
    t.equal((await login(p, user.username, 'another-temporary-7')).status, 200, 'until an administrator sets one');

    const log = (await (await get('/api/auth/auth-logs?size=50', admin.headers)).json()) as {
      content: { username: string; msg: string }[];
    };
    t.ok(
      log.content.some((e) => e.username === user.username && /password revoked by administrator admin/.test(e.msg)),
      'the reset is in the auth log',
    );
    const everything = JSON.stringify(p.logs) + JSON.stringify(log);
    for (const secret of [temporary, 'another-temporary-7']) t.notMatch(everything, secret, 'no password in any log line or log entry');

    t.equal((await send('POST', `/api/users/${user.username}/reset-password`, admin.headers, { newPassword: 'short' })).status, 400);
    t.equal((await send('POST', `/api/users/${user.username}/reset-password`, admin.headers, { password: 'other-field-1' })).status, 400);
    t.equal((await send('POST', '/api/users/nobody-at-all/reset-password', admin.headers)).status, 404);
    t.equal(
      (await send('POST', `/api/users/admin/reset-password`, admin.headers, { newPassword: 'self-service-1' })).status,
      409,
      "not one's own: that needs the current password",
    );
    t.equal((await send('POST', `/api/users/${user.username}/reset-password`, back.headers)).status, 401);
    const editor = await signIn(p, { role: 'editor' });
    t.equal((await send('POST', `/api/users/${user.username}/reset-password`, editor.headers)).status, 403, 'administrators only');
  });

  t.test('bulk deletion of users is all or nothing and keeps the guards of a single deletion', async (t) => {
    const a = await createUser(p, { role: 'viewer' });
    const b = await createUser(p, { role: 'editor' });
    const session = await bearerLogin(p, b.username, b.password);
    const exists = async (id: string) => (await get(`/api/users/${id}`, admin.headers)).status === 200;
    const missing = await send('DELETE', `/api/users/multi/by-ids?userIds=${a.userId}&userIds=no-such-user`, admin.headers);
    t.equal(missing.status, 404);
    t.match(await missing.json(), { missing: ['no-such-user'] });
    t.ok((await exists(a.userId)) && (await exists(b.userId)), 'nobody was deleted');
    t.equal(
      (await send('DELETE', `/api/users/multi/by-ids?userIds=${a.userId},${admin.userId}`, admin.headers)).status,
      409,
      'never oneself',
    );
    t.ok(await exists(a.userId), 'nobody was deleted');
    t.equal(
      (await send('DELETE', `/api/users/multi/by-ids?userIds=${a.userId},${b.userId},${a.userId}`, admin.headers)).status,
      204,
      'comma separated, a repeat counting once',
    );
    t.notOk((await exists(a.userId)) || (await exists(b.userId)), 'both deleted');
    t.equal((await get('/api/users/profile', session.headers)).status, 401, 'their sessions ended');
    t.equal((await send('DELETE', '/api/users/multi/by-ids', admin.headers)).status, 400, 'userIds is required');
    t.equal((await send('DELETE', '/api/users/multi/by-ids?userIds=', admin.headers)).status, 400, 'an empty list');
    t.equal(
      (await send('DELETE', `/api/users/multi/by-ids?userIds=${Array.from({ length: 501 }, (_, i) => `u${i}`).join(',')}`, admin.headers))
        .status,
      400,
      'at most 500',
    );
    t.equal((await send('DELETE', '/api/users/multi/by-ids?userIds=a%00b', admin.headers)).status, 400);
    const editor = await signIn(p, { role: 'editor' });
    t.equal((await send('DELETE', `/api/users/multi/by-ids?userIds=${editor.userId}`, editor.headers)).status, 403);
  });

  t.test('the last enabled administrator cannot be deleted in a set', async (t) => {
    // The bootstrap administrator is the only enabled one here once the other administrators are gone.
    const others = ((await (await get('/api/users', admin.headers)).json()) as { id: string; roles: string[]; enabled: boolean }[]).filter(
      (u) => u.roles.includes('admin') && u.enabled && u.id !== admin.userId,
    );
    if (others.length > 0)
      t.equal((await send('DELETE', `/api/users/multi/by-ids?userIds=${others.map((u) => u.id).join(',')}`, admin.headers)).status, 204);
    const second = await createUser(p, { role: 'admin' });
    const deputy = await bearerLogin(p, second.username, second.password);
    const res = await send('DELETE', `/api/users/multi/by-ids?userIds=${admin.userId}`, deputy.headers);
    t.equal(res.status, 204, 'one administrator deletes another while one stays');
    // The deputy is now the last enabled administrator.
    t.equal((await send('PUT', `/api/users/${deputy.userId}`, deputy.headers, { enabled: false })).status, 409);
    const fresh = (await (
      await send('POST', '/api/users', deputy.headers, {
        username: `fresh-${Date.now()}`,
        password: 'fresh-password-1',
        roles: ['viewer'],
        spaces: ['default'],
      })
    ).json()) as { id: string };
    const lastOne = await send('DELETE', `/api/users/multi/by-ids?userIds=${fresh.id},${deputy.userId}`, deputy.headers);
    t.equal(lastOne.status, 409, 'the set holds the last administrator (the caller)');
    t.equal((await get(`/api/users/${fresh.id}`, deputy.headers)).status, 200, 'nobody was deleted');
  });

  t.test('the sign-in features are answered truthfully, without a login', async (t) => {
    const res = await get('/api/auth/features', {});
    t.equal(res.status, 200);
    t.same(await res.json(), {
      registrationEnabled: false,
      oauthEnabled: false,
      otpTypes: ['totp'],
      lockoutThreshold: 4,
      lockoutSeconds: 600,
      passwordMinLength: 8,
      passwordMaxLength: 1024,
    });
  });
});
