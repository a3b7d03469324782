import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { freePort, startMain, waitFor } from './support/processes.ts';

t.test('bad configuration stops start-up with one message naming every bad variable', async (t) => {
  const run = startMain({ HTTP_PORT: 'eighty', HTTPS_PORT: '70000', SERVICES: 'gateway,billing', LOCKOUT_THRESHOLD: '-1', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
  const code = await run.exited;
  t.equal(code, 2, 'exits non-zero');
  const { stderr } = run.output();
  for (const name of ['HTTP_PORT', 'HTTPS_PORT', 'SERVICES', 'LOG_LEVEL', 'DATABASE_URL']) t.match(stderr, name, `names ${name}`);
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

t.test('npm start comes up on embedded defaults and SIGTERM stops it cleanly', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-main-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const run = startMain({ DATA_DIR: dataDir, HTTP_PORT: String(httpPort), HTTPS_PORT: String(httpsPort), LOG_LEVEL: 'info' });
  const health = await waitFor(`http://127.0.0.1:${httpPort}/healthz`, 30000);
  t.equal(health.status, 200);
  const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
  t.equal(ready.status, 200);
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0, 'exits 0');
  t.match(run.output().stdout, /gateway stopped/);
});
