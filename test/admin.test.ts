import { generateSync } from 'otplib';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, bearerLogin, createSpace, createUser, login, signIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

t.test(`users and spaces administration (${p.mode})`, async (t) => {
  const admin = await asAdmin(p);

  t.test('a user is created, read, listed, updated and deleted; no answer carries a secret', async (t) => {
    const created = await fetch(`${p.url}/api/users`, {
      method: 'POST',
      headers: json(admin.headers),
      body: JSON.stringify({
        username: 'Operator.One',
        password: 'first-password-1',
        email: 'one@plant.example',
        roles: ['viewer'],
        spaces: ['default'],
      }),
    });
    t.equal(created.status, 200);
    const user = (await created.json()) as Record<string, unknown>;
    t.match(user, {
      username: 'Operator.One',
      email: 'one@plant.example',
      enabled: true,
      otpType: 'none',
      roles: ['viewer'],
      spaces: ['default'],
      createdBy: 'admin',
    });
    const { requirePasswordReset: _flag, ...rest } = user; // the reference's flag, not a secret
    const text = JSON.stringify(rest);
    t.notMatch(text, /password|hash|scrypt|secret/i, 'no secret in the answer');
    t.equal(
      (
        await fetch(`${p.url}/api/users`, {
          method: 'POST',
          headers: json(admin.headers),
          body: JSON.stringify({ username: 'operator.one', password: 'other-password', roles: ['viewer'], spaces: ['default'] }),
        })
      ).status,
      409,
      'names are unique case-insensitively',
    );
    t.equal(
      (
        await fetch(`${p.url}/api/users`, {
          method: 'POST',
          headers: json(admin.headers),
          body: JSON.stringify({ username: 'x1', password: 'other-password', roles: ['viewer'], spaces: ['nowhere'] }),
        })
      ).status,
      400,
      'an unknown space',
    );
    t.equal(
      (
        await fetch(`${p.url}/api/users`, {
          method: 'POST',
          headers: json(admin.headers),
          body: JSON.stringify({ username: 'x2', password: 'short', roles: ['viewer'], spaces: ['default'] }),
        })
      ).status,
      400,
      'a short password',
    );
    t.equal(
      (
        await fetch(`${p.url}/api/users`, {
          method: 'POST',
          headers: json(admin.headers),
          body: JSON.stringify({
            username: 'x3',
            password: 'long-enough-1',
            email: 'not an address',
            roles: ['viewer'],
            spaces: ['default'],
          }),
        })
      ).status,
      400,
      'a malformed email',
    );
    const list = (await (await fetch(`${p.url}/api/users`, { headers: admin.headers })).json()) as { username: string }[];
    t.ok(list.some((u) => u.username === 'Operator.One'));
    t.notMatch(JSON.stringify(list), /scrypt/);
    const update = await fetch(`${p.url}/api/users/${user.id}`, {
      method: 'PUT',
      headers: json(admin.headers),
      body: JSON.stringify({ password: 'second-password-2', roles: ['editor'] }),
    });
    t.equal(update.status, 204);
    t.equal((await login(p, 'operator.one', 'first-password-1')).status, 401, 'the old password is gone');
    t.equal((await login(p, 'operator.one', 'second-password-2')).status, 200, 'the new one works');
    t.match(await (await fetch(`${p.url}/api/users/${user.id}`, { headers: admin.headers })).json(), { roles: ['editor'] });
    t.equal((await fetch(`${p.url}/api/users/${user.id}`, { method: 'DELETE', headers: admin.headers })).status, 204);
    t.equal((await fetch(`${p.url}/api/users/${user.id}`, { headers: admin.headers })).status, 404);
    t.equal((await login(p, 'operator.one', 'second-password-2')).status, 401, 'a deleted user cannot sign in');
  });

  t.test('an administrator cannot delete, disable or demote themselves', async (t) => {
    t.equal((await fetch(`${p.url}/api/users/${admin.userId}`, { method: 'DELETE', headers: admin.headers })).status, 409);
    t.equal(
      (await fetch(`${p.url}/api/users/${admin.userId}`, { method: 'PUT', headers: json(admin.headers), body: '{"enabled":false}' }))
        .status,
      409,
    );
    t.equal(
      (await fetch(`${p.url}/api/users/${admin.userId}`, { method: 'PUT', headers: json(admin.headers), body: '{"roles":["viewer"]}' }))
        .status,
      409,
    );
  });

  t.test('a user enrols in TOTP and turns it off; another non-admin user cannot touch it', async (t) => {
    const self = await signIn(p, { role: 'viewer' });
    const other = await signIn(p, { role: 'editor' });
    t.equal((await fetch(`${p.url}/api/users/${self.userId}/otp`, { method: 'POST', headers: other.headers })).status, 403);
    const proof = (body: Record<string, string>) => ({ headers: json(self.headers), body: JSON.stringify(body) });
    const enrolled = await fetch(`${p.url}/api/users/${self.userId}/otp`, { method: 'POST', ...proof({ currentPassword: self.password }) });
    t.equal(enrolled.status, 200, 'the user itself, with their password');
    const { secret } = (await enrolled.json()) as { secret: string };
    t.match(await (await fetch(`${p.url}/api/users/${self.userId}`, { headers: admin.headers })).json(), { otpType: 'totp' });
    t.equal(
      (
        await fetch(`${p.url}/api/users/${self.userId}/otp`, {
          method: 'DELETE',
          ...proof({ currentPassword: self.password, otpCode: generateSync({ secret }) }),
        })
      ).status,
      204,
    );
    t.equal((await login(p, self.username, self.password)).status, 200);
    t.notOk(
      ((await (await login(p, self.username, self.password)).json()) as { otp_required?: boolean }).otp_required,
      'no OTP step any more',
    );
  });

  t.test('spaces: listed by membership, read, renamed, and deleted unless someone would be left without one', async (t) => {
    const name = `line-${Date.now()}`;
    const id = await createSpace(p, name);
    t.equal(
      (await fetch(`${p.url}/api/spaces`, { method: 'POST', headers: json(admin.headers), body: JSON.stringify({ name }) })).status,
      409,
      'a duplicate name',
    );
    const member = await signIn(p, { role: 'viewer', spaces: [id] });
    const mine = (await (await fetch(`${p.url}/api/spaces`, { headers: member.headers })).json()) as { id: string }[];
    t.same(
      mine.map((s) => s.id),
      [id],
      'a member sees only its spaces',
    );
    t.equal((await fetch(`${p.url}/api/spaces/default`, { headers: member.headers })).status, 404, 'another space does not exist for it');
    t.equal(
      (
        await fetch(`${p.url}/api/spaces/${id}`, {
          method: 'PUT',
          headers: json(admin.headers),
          body: JSON.stringify({ name: `${name}-b` }),
        })
      ).status,
      204,
    );
    t.match(await (await fetch(`${p.url}/api/spaces/${id}`, { headers: member.headers })).json(), { name: `${name}-b` });
    t.equal(
      (await fetch(`${p.url}/api/spaces/${id}`, { method: 'DELETE', headers: admin.headers })).status,
      409,
      'its member has no other space',
    );
    t.equal(
      (await fetch(`${p.url}/api/spaces/default`, { method: 'DELETE', headers: admin.headers })).status,
      409,
      'the default space stays',
    );
    const spare = await createSpace(p, `spare-${Date.now()}`);
    t.equal((await fetch(`${p.url}/api/spaces/${spare}`, { method: 'DELETE', headers: admin.headers })).status, 204);
    t.equal((await fetch(`${p.url}/api/spaces/${spare}`, { headers: admin.headers })).status, 404);
  });

  t.test('logged-in users and locked users are listed for the administrator, under both lock paths', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const session = await bearerLogin(p, user.username, user.password);
    const live = (await (await fetch(`${p.url}/api/auth/logged-in-users`, { headers: admin.headers })).json()) as string[];
    t.ok(live.includes(user.username));
    await fetch(`${p.url}/logout`, { method: 'POST', headers: session.headers });
    const after = (await (await fetch(`${p.url}/api/auth/logged-in-users`, { headers: admin.headers })).json()) as string[];
    t.notOk(after.includes(user.username), 'gone after logout');
    for (let i = 0; i < 5; i++) await login(p, 'locked-name', 'wrong-password');
    for (const path of ['/api/auth/lockedUsers', '/api/auth/locked-users']) {
      t.ok(((await (await fetch(`${p.url}${path}`, { headers: admin.headers })).json()) as string[]).includes('locked-name'), path);
    }
    t.equal((await fetch(`${p.url}/api/auth/locked-users`, { headers: session.headers })).status, 401, 'not for a revoked session');
  });
});
