import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { freePort, platformRuntime, startCommand, startMain, waitFor } from '@scada/testkit/processes';

// Each case starts whole platform processes (an embedded store each): more than tap's two minutes per file
// on a busy two-core machine.
t.setTimeout(300_000);

/**
 * A process that must come up gives up after this long: a platform's first start on an empty data folder has
 * taken over 30 s of wall time on two cores shared with other suites. A limit on waiting, not on speed.
 */
const upWithin = 120_000;

/**
 * One data folder for the cases that start a platform. The first of them finds it empty (a first start on
 * embedded defaults, the embedded store created); the later ones start on the store it left, as any start
 * after the first does: creating a store is about 3.5 CPU-s of PGlite's initdb and the migrations, and what
 * they check (a service's own entry, a signal through `npm start`) does not depend on it. Each case stops its
 * process before the next starts.
 */
const dataDir = await mkdtemp(join(tmpdir(), 'scada-main-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));

t.test('bad configuration stops start-up with one message naming every bad variable', async (t) => {
  const run = startMain({
    HTTP_PORT: 'eighty',
    HTTPS_PORT: '70000',
    SERVICES: 'gateway,billing',
    LOCKOUT_THRESHOLD: '-1',
    LOG_LEVEL: 'loud',
    DATABASE_URL: 'mysql://x',
    EMBEDDED_STORE_COMPILER: 'fastest',
  });
  const code = await run.exited;
  t.equal(code, 2, 'exits non-zero');
  const { stderr } = run.output();
  for (const name of ['HTTP_PORT', 'HTTPS_PORT', 'SERVICES', 'LOG_LEVEL', 'DATABASE_URL', 'EMBEDDED_STORE_COMPILER'])
    t.match(stderr, name, `names ${name}`);
  t.match(stderr, /^Invalid configuration:/);
  t.notMatch(stderr, /at .*\.ts:\d+/, 'no stack trace');
});

t.test('a service section is checked too when that service runs here', async (t) => {
  const run = startMain({ SERVICES: 'auth', LOCKOUT_THRESHOLD: 'five', ACCESS_TOKEN_TTL_SECONDS: '0' });
  t.equal(await run.exited, 2);
  const { stderr } = run.output();
  t.match(stderr, 'LOCKOUT_THRESHOLD');
  t.match(stderr, 'ACCESS_TOKEN_TTL_SECONDS');
});

const starting = [startCommand[0].replace(/^.*\/deno$/, 'deno'), ...startCommand[1]].join(' ');

t.test(
  `the platform comes up on embedded defaults (its first start: the store created) and SIGTERM stops it cleanly (${platformRuntime})`,
  async (t) => {
    const [httpPort, httpsPort] = [await freePort(), await freePort()];
    const run = startMain({ DATA_DIR: dataDir, HTTP_PORT: String(httpPort), HTTPS_PORT: String(httpsPort), LOG_LEVEL: 'info' });
    const health = await waitFor(`http://127.0.0.1:${httpPort}/healthz`, upWithin);
    t.equal(health.status, 200);
    const ready = await waitFor(`http://127.0.0.1:${httpPort}/readyz`, upWithin, (res) => res.status === 200);
    t.equal(ready.status, 200);
    run.child.kill('SIGTERM');
    t.equal(await run.exited, 0, 'exits 0');
    t.match(run.output().stdout, /gateway stopped/);
  },
);

t.test("a service's own entry runs that service alone and refuses SERVICES naming any other part", async (t) => {
  const refused = startMain({ SERVICES: 'config,gateway' }, 'config-service/src/main.ts');
  t.equal(await refused.exited, 2, 'exits 2');
  t.match(refused.output().stderr, /SERVICES: "gateway" is not a service this build runs \(config\)/);
  const healthPort = await freePort();
  const run = startMain({ DATA_DIR: dataDir, HEALTH_PORT: String(healthPort), LOG_LEVEL: 'info' }, 'config-service/src/main.ts');
  const ready = await waitFor(`http://127.0.0.1:${healthPort}/readyz`, upWithin, (res) => res.status === 200);
  t.equal(ready.status, 200, 'the config service alone is ready');
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0, 'exits 0 on SIGTERM');
  t.match(run.output().stdout, /"services":\["config"\]/, 'SERVICES defaults to the one service the entry carries');
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} to the process of ${starting} stops the platform with it: nothing is left running`, async (t) => {
    const httpPort = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      PASSWORD_HASH_COST: '12',
      DATA_DIR: dataDir,
      HTTP_PORT: String(httpPort),
      HTTPS_PORT: '0',
      LOG_LEVEL: 'warn',
    };
    // A process group of its own, so that whatever npm started can be looked for afterwards.
    const npm = spawn(startCommand[0], startCommand[1], {
      cwd: new URL('..', import.meta.url).pathname,
      env,
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    t.teardown(() => groupAlive(npm.pid as number) && process.kill(-(npm.pid as number), 'SIGKILL'));
    t.equal((await waitFor(`http://127.0.0.1:${httpPort}/healthz`, upWithin)).status, 200, 'up');
    npm.kill(signal);
    await exited;
    for (const end = Date.now() + 30_000; groupAlive(npm.pid as number) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    t.notOk(groupAlive(npm.pid as number), `no process of ${starting} is left`);
    await t.rejects(fetch(`http://127.0.0.1:${httpPort}/healthz`), 'nothing answers on its port');
  });
}

/** True while any process of the group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
