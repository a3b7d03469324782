import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
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
 * they check (a service's own entry, SIGINT through `npm start`) does not depend on it. Each case stops its
 * process before the next starts.
 */
const dataDir = await mkdtemp(join(tmpdir(), 'scada-main-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));

/**
 * The starts that must be refused read no data folder and open no port: they start together as the file
 * loads, and their tests check them in turn (the same three processes, with one wait for their module
 * loading instead of three in a row).
 */
const refused = {
  badConfiguration: startMain({
    HTTP_PORT: 'eighty',
    HTTPS_PORT: '70000',
    SERVICES: 'gateway,billing',
    LOCKOUT_THRESHOLD: '-1',
    LOG_LEVEL: 'loud',
    DATABASE_URL: 'mysql://x',
    EMBEDDED_STORE_COMPILER: 'fastest',
  }),
  serviceSection: startMain({ SERVICES: 'auth', LOCKOUT_THRESHOLD: 'five', ACCESS_TOKEN_TTL_SECONDS: '0' }),
  otherPart: startMain({ SERVICES: 'config,gateway' }, 'config-service/src/main.ts'),
};
for (const run of Object.values(refused)) t.teardown(() => void (run.child.exitCode === null && run.child.kill('SIGKILL')));
/** The first start, on the empty data folder, begins beside them: none of them reads the folder or a port. */
const firstPort = await freePort();
const firstStart = startAsUsersDo(t, firstPort);

t.test('bad configuration stops start-up with one message naming every bad variable', async (t) => {
  const run = refused.badConfiguration;
  const code = await run.exited;
  t.equal(code, 2, 'exits non-zero');
  const { stderr } = run.output();
  for (const name of ['HTTP_PORT', 'HTTPS_PORT', 'SERVICES', 'LOG_LEVEL', 'DATABASE_URL', 'EMBEDDED_STORE_COMPILER'])
    t.match(stderr, name, `names ${name}`);
  t.match(stderr, /^Invalid configuration:/);
  t.notMatch(stderr, /at .*\.ts:\d+/, 'no stack trace');
});

t.test('a service section is checked too when that service runs here', async (t) => {
  const run = refused.serviceSection;
  t.equal(await run.exited, 2);
  const { stderr } = run.output();
  t.match(stderr, 'LOCKOUT_THRESHOLD');
  t.match(stderr, 'ACCESS_TOKEN_TTL_SECONDS');
});

const starting = [startCommand[0].replace(/^.*\/deno$/, 'deno'), ...startCommand[1]].join(' ');

/**
 * `npm start` (or `deno task start`) as a user runs it, on the shared data folder, in a process group of its
 * own so that whatever it started can be looked for afterwards; its output kept.
 */
function startAsUsersDo(t: Test, httpPort: number) {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    PASSWORD_HASH_COST: '12',
    DATA_DIR: dataDir,
    HTTP_PORT: String(httpPort),
    HTTPS_PORT: '0',
    LOG_LEVEL: 'info',
  };
  const npm = spawn(startCommand[0], startCommand[1], {
    cwd: new URL('..', import.meta.url).pathname,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  npm.stdout?.on('data', (d) => (stdout += d));
  npm.stderr?.on('data', (d) => (stderr += d));
  // 'close' waits for the output pipes to drain as well, which 'exit' does not. An exit other than 0 is
  // told with the end of what the process wrote, so that a failure in CI says why.
  const exited = new Promise<number | null>((resolve) =>
    npm.once('close', (code, signal) => {
      if (code !== 0) t.comment(`exit ${code} (${signal}); stdout ends:\n${stdout.slice(-3000)}\nstderr ends:\n${stderr.slice(-3000)}`);
      resolve(code);
    }),
  );
  t.teardown(() => groupAlive(npm.pid as number) && process.kill(-(npm.pid as number), 'SIGKILL'));
  return { npm, exited, stdout: () => stdout };
}

/**
 * The process's output once it shows `pattern`, or after 30 s: the platform writes its log lines in blocks, each
 * at most 200 ms after its first line (`platform/src/log.ts`), so a line written before the port answered
 * may still be on its way when the first answer comes.
 */
async function outputShowing(read: () => string, pattern: RegExp): Promise<string> {
  for (const end = Date.now() + 30_000; !pattern.test(read()) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  return read();
}

/** Waits (up to 30 s) for the process group to be gone; answers whether it is. */
async function groupGone(pgid: number): Promise<boolean> {
  for (const end = Date.now() + 30_000; groupAlive(pgid) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
  return !groupAlive(pgid);
}

// The first start and SIGTERM in one run: the start a user makes on an empty data folder is the one whose
// stop is checked, instead of a start through main.ts alone and another through the start command.
t.test(
  `${starting} on embedded defaults: its first start creates the store and comes up; SIGTERM stops it cleanly, nothing is left running (${platformRuntime})`,
  async (t) => {
    const [httpPort, run] = [firstPort, firstStart];
    const health = await waitFor(`http://127.0.0.1:${httpPort}/healthz`, upWithin);
    t.equal(health.status, 200, 'up');
    const ready = await waitFor(`http://127.0.0.1:${httpPort}/readyz`, upWithin, (res) => res.status === 200);
    t.equal(ready.status, 200, 'ready');
    const created = /"created":true,"from":"initdb"[^\n]*opened the embedded store/;
    t.match(await outputShowing(run.stdout, created), created, 'the store was created on this start');
    run.npm.kill('SIGTERM');
    t.equal(await run.exited, 0, 'exits 0');
    t.match(run.stdout(), /gateway stopped/);
    t.ok(await groupGone(run.npm.pid as number), `no process of ${starting} is left`);
    await t.rejects(fetch(`http://127.0.0.1:${httpPort}/healthz`), 'nothing answers on its port');
  },
);

t.test("a service's own entry runs that service alone and refuses SERVICES naming any other part", async (t) => {
  t.equal(await refused.otherPart.exited, 2, 'exits 2');
  t.match(refused.otherPart.output().stderr, /SERVICES: "gateway" is not a service this build runs \(config\)/);
  const healthPort = await freePort();
  const run = startMain({ DATA_DIR: dataDir, HEALTH_PORT: String(healthPort), LOG_LEVEL: 'info' }, 'config-service/src/main.ts');
  const ready = await waitFor(`http://127.0.0.1:${healthPort}/readyz`, upWithin, (res) => res.status === 200);
  t.equal(ready.status, 200, 'the config service alone is ready');
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0, 'exits 0 on SIGTERM');
  t.match(run.output().stdout, /"services":\["config"\]/, 'SERVICES defaults to the one service the entry carries');
});

t.test(`SIGINT to the process of ${starting} stops the platform with it: nothing is left running`, async (t) => {
  const httpPort = await freePort();
  const run = startAsUsersDo(t, httpPort);
  t.equal((await waitFor(`http://127.0.0.1:${httpPort}/healthz`, upWithin)).status, 200, 'up');
  const opened = /"created":false[^\n]*opened the embedded store/;
  t.match(await outputShowing(run.stdout, opened), opened, 'on the store an earlier start left');
  run.npm.kill('SIGINT');
  t.equal(await run.exited, 0, 'exits 0');
  t.ok(await groupGone(run.npm.pid as number), `no process of ${starting} is left`);
  await t.rejects(fetch(`http://127.0.0.1:${httpPort}/healthz`), 'nothing answers on its port');
});

/** True while any process of the group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
