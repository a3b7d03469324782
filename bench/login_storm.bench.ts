/**
 * A login storm against a legitimate user, on loopback: for STORM_SECONDS (30) 100 wrong logins are kept
 * in flight (each answered one replaced at once) over 100 distinct names from 20 loopback addresses
 * (127.0.0.10-29), while one legitimate user signs in every second from another address (127.0.0.250).
 * Reports the storm's answers by status, and the legitimate logins' outcomes and p50/p99 latency against
 * the same logins on the idle platform and against the median of a bare scrypt hash measured in the same
 * run. The platform runs in a process of its own with production password cost and default settings,
 * except `LOGIN_RATE_LIMIT_PER_MINUTE`, raised so that the storm reaches the password checks instead of
 * being turned away by the per-address rate limit (60 a minute by default would answer most of it 429).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passwords, verifyPassword } from '@scada/auth/passwords';
import { requestFrom } from '@scada/testkit/from_address';
import { freePort, startProcess, stopProcess, waitReady } from './harness.ts';

const stormSeconds = Number(process.env.STORM_SECONDS ?? 30);
const inFlight = 100;
const names = 100;
const addresses = Array.from({ length: 20 }, (_, i) => `127.0.0.${10 + i}`);
const legitAddress = '127.0.0.250';
const adminPassword = 'storm-admin-password';
const user = { username: 'operator', password: 'operator-password-1' };

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};
const ms = (x: number) => Math.round(x);

async function signIn(from: string, username: string, password: string): Promise<{ status: number; ms: number; code?: string }> {
  const started = performance.now();
  try {
    const res = await requestFrom(from, `${url}/login`, {
      method: 'POST',
      headers: [['content-type', 'application/json']],
      body: JSON.stringify({ username, password }),
    });
    const code = res.status === 200 ? undefined : (JSON.parse(res.body) as { code?: string }).code;
    return { status: res.status, ms: performance.now() - started, code };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

// The bare hash, in this process, before anything else runs: the yardstick of the legitimate latency.
const phc = await passwords().hash(user.password);
const bare: number[] = [];
for (let i = 0; i < 7; i++) {
  const t0 = performance.now();
  await verifyPassword(user.password, phc);
  bare.push(performance.now() - t0);
}
const bareMedian = quantile(bare, 0.5);

const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-storm-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const child = startProcess('main.ts', {
  DATA_DIR: dataDir,
  HTTP_PORT: String(port),
  HTTPS_PORT: '0',
  ADMIN_PASSWORD: adminPassword,
  LOG_LEVEL: 'error',
  LOGIN_RATE_LIMIT_PER_MINUTE: '1000000',
  NODE_ENV: 'production',
});
try {
  await waitReady(`${url}/readyz`, 120_000);
  const admin = (await (
    await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: adminPassword }),
    })
  ).json()) as { access_token: string };
  const created = await fetch(`${url}/api/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...user, roles: ['viewer'], spaces: ['default'] }),
  });
  if (created.status !== 200) throw new Error(`creating the user answered ${created.status}`);

  // The same logins on the idle platform.
  const idle: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await signIn(legitAddress, user.username, user.password);
    if (r.status !== 200) throw new Error(`an idle login answered ${r.status}`);
    idle.push(r.ms);
  }

  const storm = new Map<number, number>();
  const legit: { status: number; ms: number; code?: string }[] = [];
  const end = Date.now() + stormSeconds * 1000;
  const lane = async (i: number) => {
    const from = addresses[i % addresses.length] as string;
    const name = `storm-${i % names}`;
    while (Date.now() < end) {
      const { status } = await signIn(from, name, `wrong-password-${Math.random()}`);
      storm.set(status, (storm.get(status) ?? 0) + 1);
    }
  };
  const legitimate = async () => {
    const pending: Promise<void>[] = [];
    for (let next = Date.now() + 500; next < end; next += 1000) {
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      pending.push(signIn(legitAddress, user.username, user.password).then((r) => void legit.push(r)));
    }
    await Promise.all(pending);
  };
  await Promise.all([...Array.from({ length: inFlight }, (_, i) => lane(i)), legitimate()]);

  const total = [...storm.values()].reduce((a, b) => a + b, 0);
  console.log(
    `### Login storm: ${inFlight} wrong logins in flight over ${names} names from ${addresses.length} addresses for ${stormSeconds} s, one legitimate login a second\n`,
  );
  console.log('| storm answer | count | share |\n|---|---:|---:|');
  for (const [status, count] of [...storm.entries()].sort((a, b) => a[0] - b[0]))
    console.log(`| ${status === 0 ? 'no answer' : status} | ${count} | ${((100 * count) / total).toFixed(1)} % |`);
  const ok = legit.filter((r) => r.status === 200).map((r) => r.ms);
  const others = legit.filter((r) => r.status !== 200).map((r) => r.status);
  const otherAnswers = legit.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.code ?? ''} after ${ms(r.ms)} ms`);
  console.log('\n| legitimate login | n | 200 | p50 ms | p99 ms | p99 / bare hash |\n|---|---:|---:|---:|---:|---:|');
  console.log(`| bare scrypt hash (median of ${bare.length}, this process) | ${bare.length} | | ${ms(bareMedian)} | | 1.00 |`);
  console.log(
    `| idle platform | ${idle.length} | ${idle.length} | ${ms(quantile(idle, 0.5))} | ${ms(quantile(idle, 0.99))} | ${(quantile(idle, 0.99) / bareMedian).toFixed(2)} |`,
  );
  console.log(
    `| during the storm | ${legit.length} | ${ok.length} | ${ms(quantile(ok, 0.5))} | ${ms(quantile(ok, 0.99))} | ${(quantile(ok, 0.99) / bareMedian).toFixed(2)} |`,
  );
  if (process.env.BENCH_VERBOSE) console.log(`\nlegitimate latencies in order: ${legit.map((r) => ms(r.ms)).join(' ')}`);
  if (others.length > 0) console.log(`\nlegitimate logins not answered 200: ${otherAnswers.join(', ')}`);
  const bad = (storm.get(500) ?? 0) + (storm.get(504) ?? 0) + others.filter((s) => s === 500 || s === 504).length;
  console.log(
    `\ngoal: zero 500 and 504 (${bad}), every legitimate login 200 (${ok.length} of ${legit.length}), p99 within 3 bare hashes (${(quantile(ok, 0.99) / bareMedian).toFixed(2)})`,
  );
} finally {
  await stopProcess(child);
  await rm(dataDir, { recursive: true, force: true });
}
