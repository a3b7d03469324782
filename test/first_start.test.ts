/**
 * A first start as a newcomer meets it: the generated administrator password framed on stderr with the
 * URL to open (and in no log line), `/` leading to the reference page, a busy port refused before anything
 * is created, and `npm run admin -- reset-password` on the store of a platform (embedded or PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runAdmin } from '@scada/auth/admin';
import { launch } from '../launch.ts';
import { createDatabase, startTestPlatform, testAdminPassword, testHashing } from '@scada/testkit/platform';
import { bearerLogin, login } from '@scada/testkit/session';

const dataDir = await mkdtemp(join(tmpdir(), 'scada-first-'));
const database = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL) : null;
/** The store the platforms of this file and the admin command share. */
const storeEnv: Record<string, string> = {
  DATA_DIR: dataDir,
  // On PostgreSQL the platforms and the command open the same sealed secrets: one key for all of them.
  ...(database ? { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') } : {}),
};
t.teardown(async () => {
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs the admin command on this file's store; answers its exit code and what it wrote. */
async function admin(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runAdmin(
    args,
    { ...testHashing, ...storeEnv },
    { readStdin: async () => stdin, stdout: (s) => void (out += s), stderr: (s) => void (err += s) },
  );
  return { code, out, err };
}

const passwordIn = (text: string) => /password: (\S+)/.exec(text)?.[1];

let generated = '';
let oldRefresh = '';
/** What the platforms of this file wrote to stderr, the first start's and the next one's. */
let shown = '';

t.test('first start: the generated password is framed on stderr with the URL to open, and in no log line', async (t) => {
  const p = await startTestPlatform({ ...storeEnv, ADMIN_PASSWORD: '' }, { stderr: (s) => void (shown += s) });
  try {
    t.match(shown, /^\n\+-{10,}\+\n\| First start/, 'a frame on its own lines');
    t.ok(shown.includes(`${p.url}/docs`), 'the URL of the reference page');
    t.match(shown, /npm run admin -- reset-password admin/, 'how to reset it when lost');
    generated = passwordIn(shown) ?? '';
    t.ok(generated.length >= 20, 'a long generated password');
    t.notOk(JSON.stringify(p.logs).includes(generated), 'never in a log line');
    t.ok(
      p.logs.some((l) => l.msg?.startsWith('created the administrator with a generated password')),
      'the log says where it went',
    );
    const session = await bearerLogin(p, 'admin', generated);
    oldRefresh = session.refreshToken;
    const users = await fetch(`${p.url}/api/users`, { headers: session.headers });
    t.equal(users.status, 403, 'a generated password is changed before anything else');
    t.match(await users.json(), { code: 'password_change_required' });
    t.match(await (await fetch(`${p.url}/api/users/profile`, { headers: session.headers })).json(), { requirePasswordReset: true });

    const root = await fetch(`${p.url}/`, { redirect: 'manual' });
    t.equal(root.status, 302, '/ leads on');
    // To the console once it is built (npm start builds it first), else to the API reference page.
    const consoleBuilt = existsSync(new URL('../console/dist/index.html', import.meta.url));
    t.equal(root.headers.get('location'), consoleBuilt ? '/console/' : '/docs');
    t.equal((await fetch(`${p.url}/`)).headers.get('content-type'), 'text/html; charset=utf-8', 'to a page');
    t.same(p.proc.urls, [p.url], 'the process names the URL it answers on');
  } finally {
    await p.stop();
  }
});

t.test('reset-password prints a new password once; the old one and its sessions stop working', async (t) => {
  const reset = await admin(['reset-password', 'ADMIN']);
  t.equal(reset.code, 0, reset.err);
  t.match(reset.out, /The password of admin was reset; 1 session ended/);
  const fresh = passwordIn(reset.out) ?? '';
  t.ok(fresh.length >= 20 && fresh !== generated);

  // The second start on this store, as the first one's: without ADMIN_PASSWORD, so that a generated password
  // would be shown again if the store were taken for a new one (it starts here rather than in a start of its
  // own: the store is the same, and a start on a data folder costs some 2 CPU-s).
  const p = await startTestPlatform({ ...storeEnv, ADMIN_PASSWORD: '' }, { stderr: (s) => void (shown += s) });
  t.teardown(() => p.stop());
  t.equal(shown.match(/First start/g)?.length, 1, 'shown once: a second start on the same store shows nothing');
  t.equal((await login(p, 'admin', generated)).status, 401, 'the old password is refused');
  const refresh = await fetch(`${p.url}/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: oldRefresh }),
  });
  t.equal(refresh.status, 401, 'the session of before the reset has ended');
  const session = await bearerLogin(p, 'admin', fresh);
  const profile = (await (await fetch(`${p.url}/api/users/profile`, { headers: session.headers })).json()) as {
    requirePasswordReset: boolean;
  };
  t.equal(profile.requirePasswordReset, true, 'a new password must be chosen');
  const logs = () => fetch(`${p.url}/api/auth/auth-logs?page=0&size=5`, { headers: session.headers });
  const beforeChange = await logs();
  t.equal(beforeChange.status, 403, 'and nothing else works before it is');
  t.match(await beforeChange.json(), { code: 'password_change_required' });
  const own = 'the-administrators-own-1';
  const change = await fetch(`${p.url}/api/users/reset-password`, {
    method: 'POST',
    headers: { ...session.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ oldPassword: fresh, newPassword: own, newPasswordAgain: own }),
  });
  t.equal(change.status, 204, 'the own change');
  const log = (await (await logs()).json()) as {
    content: { username: string; msg: string }[];
  };
  t.ok(
    log.content.some((e) => e.username === 'admin' && /admin command/.test(e.msg)),
    'written to the auth log',
  );

  if (database) {
    const live = await admin(['reset-password', 'admin', '--stdin'], 'chosen-by-the-operator\nignored second line\n');
    t.equal(live.code, 0, 'on PostgreSQL it works while the platform runs');
    t.notMatch(live.out, /chosen-by-the-operator/, 'a password from stdin is not printed');
    t.equal((await login(p, 'admin', 'chosen-by-the-operator')).status, 200);
  } else {
    const refused = await admin(['reset-password', 'admin']);
    t.equal(refused.code, 1, 'the embedded store of a running platform is refused');
    t.match(refused.err, /data folder .* is in use by this process/);
    await p.stop();
    const chosen = await admin(['reset-password', 'admin', '--stdin'], 'chosen-by-the-operator\r\n');
    t.equal(chosen.code, 0, chosen.err);
    t.notMatch(chosen.out, /chosen-by-the-operator/, 'a password from stdin is not printed');
    const again = await startTestPlatform({ ...storeEnv, ADMIN_PASSWORD: testAdminPassword });
    t.teardown(() => again.stop());
    t.equal((await login(again, 'admin', 'chosen-by-the-operator')).status, 200);
  }
});

t.test('the admin command refuses bad usage, short passwords and unknown users, changing nothing', async (t) => {
  t.equal((await admin([])).code, 2);
  t.equal((await admin(['reset-pasword', 'admin'])).code, 2);
  t.equal((await admin(['reset-password'])).code, 2);
  t.equal((await admin(['reset-password', 'a', 'b'])).code, 2);
  t.equal((await admin(['reset-password', 'admin', '--stdin'], 'short\n')).code, 2);
  const unknown = await admin(['reset-password', 'nobody-here']);
  t.equal(unknown.code, 1);
  t.match(unknown.err, /No user "nobody-here"/);
  const empty = await mkdtemp(join(tmpdir(), 'scada-empty-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  let err = '';
  const code = await runAdmin(
    ['reset-password', 'admin'],
    { DATA_DIR: empty },
    { readStdin: async () => '', stdout: () => {}, stderr: (s) => void (err += s) },
  );
  t.equal(code, 1);
  t.match(err, /No embedded store/);
  t.notOk(existsSync(join(empty, 'pgdata')), 'no store was created');
  t.equal((await admin(['help'])).code, 0);
});

t.test('a busy port is refused before the store is created or anything is written', async (t) => {
  const squatter = createServer().listen(0, '127.0.0.1');
  await once(squatter, 'listening');
  t.teardown(() => new Promise<void>((done) => squatter.close(() => done())));
  const port = (squatter.address() as AddressInfo).port;
  const fresh = await mkdtemp(join(tmpdir(), 'scada-busy-'));
  t.teardown(() => rm(fresh, { recursive: true, force: true }));
  await t.rejects(launch({ DATA_DIR: fresh, HTTP_PORT: String(port), HTTPS_PORT: '0', LOG_LEVEL: 'silent' }, { host: '127.0.0.1' }), {
    name: 'ConfigError',
    message: new RegExp(`HTTP_PORT: port ${port} is in use`),
  });
  t.notOk(existsSync(join(fresh, 'pgdata')), 'no store');
});
