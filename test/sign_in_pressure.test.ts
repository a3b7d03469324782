import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { authService } from '@scada/auth';
import { login as loginOp } from '@scada/contracts';
import { call, startService } from '@scada/platform';
import { generateSync } from 'otplib';
import t, { type Test } from 'tap';
import { requestFrom } from '@scada/testkit/from_address';
import { startTestPlatform, type TestPlatform } from '@scada/testkit/platform';
import { asAdmin, createUser, login } from '@scada/testkit/session';

// The lock under parallel attempts, against two auth replicas sharing one store; and the check queue.
const json = { 'content-type': 'application/json' };

const tally = (statuses: number[]) => {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
};

async function withSecondAuth(t: Test, p: TestPlatform): Promise<void> {
  const replica = await startService(authService, {
    bus: p.proc.bus,
    store: p.proc.store!,
    log: p.proc.log,
    config: p.proc.config.services.auth,
  });
  t.teardown(() => replica.stop());
}

async function checksLogged(p: TestPlatform, username: string, msg: string): Promise<number> {
  const { rows } = await p.proc.store!.query<{ n: string | number }>(
    'select count(*) as n from auth.auth_log where lower(username) = lower($1) and msg = $2',
    [username, msg],
  );
  return Number(rows[0]?.n);
}

t.test('the account lock under parallel attempts', async (t) => {
  const p = await startTestPlatform({
    LOCKOUT_THRESHOLD: '5',
    LOGIN_IN_FLIGHT_PER_ADDRESS: '64',
    LOGIN_RATE_LIMIT_PER_MINUTE: '100000',
    BUS_TIMEOUT_MS: '30000',
  });
  t.teardown(() => p.stop());
  await withSecondAuth(t, p);
  const admin = await asAdmin(p);

  t.test(`12 parallel wrong passwords for one name on two replicas: exactly 5 checked, the rest 423 at once (${p.mode})`, async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => login(p, user.username, 'wrong-password-1')));
    t.same(tally(answers.map((r) => r.status)), { 401: 5, 423: 7 });
    const refused = answers.find((r) => r.status === 423)!;
    t.equal(((await refused.json()) as { code: string }).code, 'account_locked');
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');
    t.equal(await checksLogged(p, user.username, 'invalid credentials'), 5, 'five checks were evaluated');
    const right = await login(p, user.username, user.password);
    t.equal(right.status, 423, 'the right password after the fifth failure is refused');
    const locked = (await (await fetch(`${p.url}/api/auth/lockedUsers`, { headers: admin.headers })).json()) as string[];
    t.ok(locked.includes(user.username.toLowerCase()), 'and did not clear the lock');
  });

  t.test('30 parallel attempts with the right password among them: never more than 5 checks, the lock holds', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const attempts = Array.from({ length: 30 }, (_, i) => (i === 12 ? user.password : `wrong-password-${i}`));
    const answers = await Promise.all(attempts.map((password) => login(p, user.username, password)));
    const statuses = answers.map((r) => r.status);
    t.ok(
      statuses.every((s) => s === 401 || s === 423 || s === 200),
      `only 401, 423 and 200: ${JSON.stringify(tally(statuses))}`,
    );
    t.ok(statuses.filter((s) => s === 401).length <= 5, 'at most five failed checks');
    if (statuses[12] !== 200)
      t.equal((await login(p, user.username, user.password)).status, 423, 'locked afterwards when the right one came too late');
  });

  t.test('12 parallel wrong OTP codes on two replicas: 5 checked, the rest 423; the right code then is 423', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const enrol = await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: admin.headers });
    const { secret } = (await enrol.json()) as { secret: string };
    const challenge = ((await (await login(p, user.username, user.password)).json()) as { otp_token: string }).otp_token;
    const right = generateSync({ secret });
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    const validate = (code: string) =>
      fetch(`${p.url}/validate`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username: user.username, otp_code: code, otp_token: challenge }),
      });
    const answers = await Promise.all(Array.from({ length: 12 }, () => validate(wrong)));
    t.same(tally(answers.map((r) => r.status)), { 401: 5, 423: 7 });
    t.equal(await checksLogged(p, user.username, 'otp failed'), 5);
    t.equal((await validate(right)).status, 423, 'the right code after the fifth failure');
  });

  t.test('a correct password that leads to the OTP step gives its place back without a count', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: admin.headers });
    for (let i = 0; i < 8; i++) t.equal((await login(p, user.username, user.password)).status, 200, `challenge ${i + 1}`);
  });
});

t.test('the password-check queue', async (t) => {
  const p = await startTestPlatform({
    PASSWORD_CHECK_CONCURRENCY: '1',
    PASSWORD_CHECK_QUEUE: '4',
    LOGIN_IN_FLIGHT_PER_ADDRESS: '3',
    LOGIN_RATE_LIMIT_PER_MINUTE: '100000',
    BUS_TIMEOUT_MS: '30000',
    // A check must take longer than the 50 ms deadline below on any machine (2^14 with OWASP's p=5: five
    // passes of 16 MiB, about 0.3 s of CPU on the 2-core machine).
    PASSWORD_HASH_COST: '14',
  });
  t.teardown(() => p.stop());
  const name = () => `nobody-${randomBytes(4).toString('hex')}`;
  const body = () => JSON.stringify({ username: name(), password: 'wrong-password-1' });

  t.test(`a full queue answers 503 overloaded with Retry-After; never 500 or 504 (${p.mode})`, async (t) => {
    const addresses = ['127.0.0.21', '127.0.0.22', '127.0.0.23', '127.0.0.24'];
    const answers = await Promise.all(
      addresses.flatMap((a) =>
        Array.from({ length: 3 }, () =>
          requestFrom(a, `${p.url}/login`, { method: 'POST', headers: [['content-type', 'application/json']], body: body() }),
        ),
      ),
    );
    const statuses = answers.map((r) => r.status);
    // 429: a sibling of the same address was told overloaded first, and this one came within its Retry-After.
    t.ok(
      statuses.every((s) => s === 401 || s === 503 || s === 429),
      `only 401, 503 and 429: ${JSON.stringify(tally(statuses))}`,
    );
    const overloaded = answers.find((r) => r.status === 503);
    t.ok(overloaded, 'some were refused');
    t.equal((overloaded?.json() as { code: string } | undefined)?.code, 'overloaded');
    t.ok(Number(overloaded?.headers['retry-after']) >= 1, 'with Retry-After');
  });

  t.test('an address told overloaded that asks again before Retry-After is answered 429 by the gateway, after its wait', async (t) => {
    const heldBack = async () => Number(/^login_held_back_total (\d+)/m.exec(await (await fetch(`${p.url}/metrics`)).text())?.[1] ?? 0);
    const before = await heldBack();
    const addresses = ['127.0.0.26', '127.0.0.27', '127.0.0.28', '127.0.0.29'];
    const again: { address: string; status: number; code: string; retryAfter: number; ms: number }[] = [];
    const send = (a: string) =>
      requestFrom(a, `${p.url}/login`, { method: 'POST', headers: [['content-type', 'application/json']], body: body() });
    // Each address that is told overloaded asks again at once, as a client that ignores Retry-After does.
    await Promise.all(
      addresses.flatMap((a) =>
        Array.from({ length: 3 }, async () => {
          if ((await send(a)).status !== 503) return;
          const started = performance.now();
          const r = await send(a);
          again.push({
            address: a,
            status: r.status,
            code: (r.json() as { code: string }).code,
            retryAfter: Number(r.headers['retry-after']),
            ms: performance.now() - started,
          });
        }),
      ),
    );
    t.ok(again.length > 0, 'some addresses were told overloaded');
    const held = again.filter((r) => r.status === 429);
    t.ok(held.length > 0, `an immediate retry is held back: ${JSON.stringify(again)}`);
    t.ok(
      held.every((r) => r.code === 'rate_limited' && r.retryAfter >= 1),
      '429 rate_limited with Retry-After',
    );
    t.ok((await heldBack()) - before >= held.length, 'by the gateway itself, without asking the auth service');
    await new Promise((r) => setTimeout(r, 1_100));
    t.equal((await send(held[0]!.address)).status, 401, 'once Retry-After has passed, its sign-ins are checked again');
  });

  t.test('one address gets at most LOGIN_IN_FLIGHT_PER_ADDRESS sign-ins unanswered at once; the rest 429', async (t) => {
    // Three sign-ins still sending their bodies hold the address's three places; a fourth is refused.
    const target = new URL(`${p.url}/login`);
    const text = body();
    const held = Array.from({ length: 3 }, () => {
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: '/login',
        method: 'POST',
        localAddress: '127.0.0.31',
        headers: { 'content-type': 'application/json', 'content-length': String(text.length) },
      });
      const answered = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
        req.on('error', reject);
      });
      req.write(text.slice(0, 5));
      return { req, answered };
    });
    await new Promise((r) => setTimeout(r, 300));
    const refused = await requestFrom('127.0.0.31', `${p.url}/login`, {
      method: 'POST',
      headers: [['content-type', 'application/json']],
      body: body(),
    });
    t.equal(refused.status, 429);
    t.equal((refused.json() as { code: string }).code, 'rate_limited');
    t.ok(Number(refused.headers['retry-after']) >= 1, 'with Retry-After');
    t.equal(
      (await requestFrom('127.0.0.32', `${p.url}/login`, { method: 'POST', headers: [['content-type', 'application/json']], body: body() }))
        .status,
      401,
      'another address is not held back',
    );
    for (const h of held) h.req.end(text.slice(5));
    const answers = await Promise.all(held.map((h) => h.answered));
    t.ok(
      answers.every((s) => s === 401 || s === 503),
      `the held ones are answered: ${answers.join(' ')}`,
    );
  });

  t.test('a right password whose check ends after its deadline makes no session and records no success', async (t) => {
    const user = await createUser(p, { role: 'viewer' });
    const answer = await call(
      p.proc.bus,
      loginOp,
      { params: {}, query: {}, body: { username: user.username, password: user.password } },
      // Shorter than one check at this hash cost: the check is under way when the caller gives up.
      { requestId: `late-${user.username}`, clientIp: '127.0.0.42', timeoutMs: 50 },
    ).then(
      () => 'answered',
      () => 'gave up',
    );
    t.equal(answer, 'gave up', 'the caller gave up before the check ended');
    // The check goes on in the replica; its end is the row it writes.
    let late = 0;
    for (let i = 0; i < 100 && late === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      late = await checksLogged(p, user.username, 'answer too late: no session made');
    }
    t.equal(late, 1, 'the sign-in log says the answer came too late');
    t.equal(await checksLogged(p, user.username, 'login succeeded'), 0, 'and records no success');
    const { rows } = await p.proc.store!.query<{ n: string }>('select count(*) as n from auth.sessions where user_id = $1', [user.userId]);
    t.equal(Number(rows[0]?.n), 0, 'no session was made');
    t.equal((await login(p, user.username, user.password)).status, 200, 'a sign-in in time still succeeds');
  });

  t.test('a check whose deadline passes while it waits is dropped before its hash', async (t) => {
    const names = Array.from({ length: 6 }, name);
    const answers = await Promise.allSettled(
      names.map((username) =>
        call(
          p.proc.bus,
          loginOp,
          { params: {}, query: {}, body: { username, password: 'wrong-password-1' } },
          { requestId: `drop-${username}`, clientIp: '127.0.0.41', timeoutMs: 50 },
        ),
      ),
    );
    t.ok(
      answers.every((a) => a.status === 'rejected'),
      'nobody waited long enough for an answer',
    );
    // Let the replica finish whatever it started: a check under way gives its place in the lock back when
    // it ends, which is within the platform's bus timeout (BUS_TIMEOUT_MS above: a check at 2^14, p=5, is
    // about 0.3 s of CPU, seconds on a busy machine).
    const pending = async () => {
      const { rows } = await p.proc.store!.query<{ n: string }>(
        'select coalesce(sum(pending), 0) as n from auth.login_failures where username_key = any($1)',
        [names],
      );
      return Number(rows[0]?.n);
    };
    const until = Date.now() + 30_000;
    while ((await pending()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    t.equal(await pending(), 0, 'every place in the lock was given back');
    let checked = 0;
    for (const username of names) checked += await checksLogged(p, username, 'invalid credentials');
    t.ok(checked <= 2, `${checked} of 6 were hashed`);
  });
});
