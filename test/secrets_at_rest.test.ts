import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authService, parseSecretsKey, passwords, secretBox, signingKeyPurpose, totpPurpose } from '@scada/auth';
import { startService } from '@scada/platform';
import { generateSync } from 'otplib';
import t from 'tap';
import { startMain } from '@scada/testkit/processes';
import { secretsKeyOf, startTestPlatform, type TestPlatform } from '@scada/testkit/platform';
import { asAdmin, createUser, login } from '@scada/testkit/session';

// What sits at rest: the data folder's modes whatever the umask, and a store that holds no usable secret.
process.umask(0);
const dataDir = await mkdtemp(join(tmpdir(), 'scada-at-rest-'));
await chmod(dataDir, 0o777);
const p = await startTestPlatform({ DATA_DIR: dataDir, LOGIN_RATE_LIMIT_PER_MINUTE: '100000' }, { tls: true });
t.teardown(async () => {
  await p.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const json = { 'content-type': 'application/json' };

/** Every path under a folder with its mode, the embedded database's own files included. */
async function walk(folder: string): Promise<{ path: string; mode: number; dir: boolean }[]> {
  const found: { path: string; mode: number; dir: boolean }[] = [];
  for (const entry of await readdir(folder)) {
    const path = join(folder, entry);
    const info = await lstat(path);
    found.push({ path, mode: info.mode & 0o777, dir: info.isDirectory() });
    if (info.isDirectory()) found.push(...(await walk(path)));
  }
  return found;
}

/** Every row of the auth schema as text: what a database dump holds. */
async function dump(p: TestPlatform): Promise<string> {
  const { rows: tables } = await p.proc.store!.query<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = 'auth'`,
  );
  let text = '';
  for (const { table_name } of tables) {
    const { rows } = await p.proc.store!.query(`select * from auth.${table_name}`);
    text += JSON.stringify(rows);
  }
  return text;
}

async function enrolledUser(p: TestPlatform) {
  const admin = await asAdmin(p);
  const user = await createUser(p, { role: 'viewer' });
  const { secret } = (await (await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: admin.headers })).json()) as {
    secret: string;
  };
  return { ...user, secret };
}

/** Signs in with password and code; the status of the code step. */
async function signInWithCode(p: TestPlatform, username: string, password: string, secret: string): Promise<number> {
  const challenge = (await (await login(p, username, password)).json()) as { otp_token?: string };
  if (!challenge.otp_token) return 0;
  const res = await fetch(`${p.url}/validate`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ username, otp_code: generateSync({ secret }), otp_token: challenge.otp_token }),
  });
  return res.status;
}

t.test('a password hash made at another cost is made again at the current one by the next sign-in', async (t) => {
  const user = await createUser(p, { role: 'viewer' });
  const hashOf = async () =>
    (await p.proc.store!.query<{ password_hash: string }>('select password_hash from auth.users where id = $1', [user.userId])).rows[0]!
      .password_hash;
  const current = await hashOf();
  const cost = /ln=(\d+)/.exec(current)![1];
  // A hash of the same password at another cost, as an older default left it (2^17 once).
  const older = await passwords(Number(cost) - 1).hash(user.password);
  await p.proc.store!.query('update auth.users set password_hash = $2 where id = $1', [user.userId, older]);

  t.equal((await login(p, user.username, `${user.password}x`)).status, 401, 'a wrong password is refused');
  t.equal(await hashOf(), older, '... and changes nothing');
  t.equal((await login(p, user.username, user.password)).status, 200, 'the password checks against the older hash');
  const again = await hashOf();
  t.not(again, older, 'the stored hash was replaced');
  t.match(again, new RegExp(`^\\$scrypt\\$ln=${cost},r=8,p=\\d+\\$`), 'at the current cost');
  t.equal((await login(p, user.username, user.password)).status, 200, 'and the password checks against it');
  t.equal(await hashOf(), again, 'a hash at the current cost is left as it is');
});

t.test(`secrets at rest (${p.mode})`, async (t) => {
  t.test(
    "DATA_DIR is 0700 (a loose one is tightened, with a warning) and the files the platform writes are 0600, the embedded store's own too, under umask 0",
    async (t) => {
      t.equal((await lstat(dataDir)).mode & 0o777, 0o700, 'the folder itself');
      t.ok(
        p.logs.some((l) => String(l.msg).includes('tightened')),
        'the tightening was logged',
      );
      const entries = await walk(dataDir);
      t.ok(
        entries.some((e) => e.path.endsWith('key.pem')),
        'the walk sees the generated TLS key',
      );
      const open = entries.filter((e) => (e.mode & 0o077) !== 0).map((e) => `${e.path.slice(dataDir.length)} ${e.mode.toString(8)}`);
      t.same(open, [], 'nothing for group or others');
      if (p.proc.store?.kind === 'pglite') {
        t.ok(
          entries.filter((e) => e.path.startsWith(join(dataDir, 'pgdata', ''))).length > 500,
          "the walk sees the embedded store's files",
        );
      }
      if (p.proc.store?.kind === 'pglite') {
        t.equal((await lstat(join(dataDir, 'secrets.key'))).mode & 0o777, 0o600, 'the generated secrets key');
      }
    },
  );

  t.test('a dump of the store holds no usable signing key and no TOTP secret', async (t) => {
    const user = await enrolledUser(p);
    const text = await dump(p);
    t.notOk(text.includes(user.secret), 'the TOTP secret is not in it');
    t.notMatch(text, /\\?"d\\?":/, 'no private JWK member');
    const { rows } = await p.proc.store!.query<{ kid: string; private_jwk: string }>('select kid, private_jwk from auth.signing_keys');
    t.ok(rows.length > 0 && rows.every((r) => r.private_jwk.startsWith('enc:v1:')), 'every private key is sealed');
    const stranger = secretBox(randomBytes(32));
    t.throws(() => stranger.open(rows[0]!.private_jwk, signingKeyPurpose(rows[0]!.kid)), 'another key does not open it');
    const box = secretBox(secretsKeyOf(p));
    t.throws(() => box.open(rows[0]!.private_jwk, signingKeyPurpose('another-kid')), 'a sealed value moved to another row does not open');
    t.equal(await signInWithCode(p, user.username, user.password, user.secret), 200, 'the sealed secret still signs in');
  });

  t.test('on start, plain rows are sealed and a signing key stored in plain is replaced', async (t) => {
    const user = await enrolledUser(p);
    await p.proc.store!.query('update auth.users set otp_secret = $2 where id = $1', [user.userId, user.secret]);
    await p.proc.store!.query(
      `insert into auth.signing_keys (kid, private_jwk, public_jwk, created) values ('plain-kid', '{"kty":"OKP","crv":"Ed25519","d":"x","x":"y"}', '{"kty":"OKP","crv":"Ed25519","x":"y"}', now() - interval '1 day')`,
    );
    const replica = await startService(authService, {
      bus: p.proc.bus,
      store: p.proc.store!,
      log: p.proc.log,
      config: p.proc.config.services.auth,
    });
    t.teardown(() => replica.stop());
    const { rows: keys } = await p.proc.store!.query<{ kid: string }>('select kid from auth.signing_keys');
    t.notOk(
      keys.some((k) => k.kid === 'plain-kid'),
      'the plain key is gone',
    );
    t.ok(
      p.logs.some((l) => String(l.msg).includes('stored in plain')),
      'and the replacement was logged',
    );
    const { rows } = await p.proc.store!.query<{ otp_secret: string }>('select otp_secret from auth.users where id = $1', [user.userId]);
    t.ok(rows[0]!.otp_secret.startsWith('enc:v1:'), 'the TOTP secret is sealed');
    t.equal(secretBox(secretsKeyOf(p)).open(rows[0]!.otp_secret, totpPurpose(user.userId)), user.secret, 'and is the same secret');
  });

  t.test('key rotation: a replica with a new key and the previous one seals everything again under the new key', async (t) => {
    const user = await enrolledUser(p);
    const oldKey = secretsKeyOf(p);
    const newKey = randomBytes(32);
    // The replicas holding only the old key stop; one with the new key and the previous takes over.
    for (const s of p.proc.services.filter((s) => s.name === 'auth')) await s.stop();
    const config = { ...(p.proc.config.services.auth as object), secretsKey: newKey, previousSecretsKeys: [oldKey] };
    const rotated = await startService(authService, { bus: p.proc.bus, store: p.proc.store!, log: p.proc.log, config: config as never });
    t.teardown(() => rotated.stop());
    const fresh = secretBox(newKey);
    const { rows: keys } = await p.proc.store!.query<{ kid: string; private_jwk: string }>(
      'select kid, private_jwk from auth.signing_keys',
    );
    t.ok(
      keys.every((k) => fresh.isCurrent(k.private_jwk)),
      'every signing key is sealed under the new key',
    );
    const { rows: users } = await p.proc.store!.query<{ otp_secret: string }>(
      'select otp_secret from auth.users where otp_secret is not null',
    );
    t.ok(
      users.every((u) => fresh.isCurrent(u.otp_secret)),
      'every TOTP secret too',
    );
    t.equal(await signInWithCode(p, user.username, user.password, user.secret), 200, 'sign-in with the code works on');
  });
});

t.test('PostgreSQL mode without a secrets key stops at start-up, saying how to make one', async (t) => {
  const run = startMain({ SERVICES: 'auth', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
  t.equal(await run.exited, 2);
  const { stderr } = run.output();
  t.match(stderr, 'SECRETS_KEY_FILE');
  t.match(stderr, 'openssl rand -base64 32');
  const bad = startMain({ SERVICES: 'auth', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', SECRETS_KEY: 'too-short' });
  t.equal(await bad.exited, 2, 'a key that is not 32 bytes of base64');
  t.match(bad.output().stderr, 'SECRETS_KEY');
  t.ok(parseSecretsKey(randomBytes(32).toString('base64')), 'what openssl rand -base64 32 makes is a key');
});
