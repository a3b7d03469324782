import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileStoresAsPlatform, memoryPGlite, pgliteTemplate, testStoreThread } from '@scada/testkit/stores';
import { FolderLockedError } from '../src/store/lock_file.ts';
import { PGliteStore } from '../src/store/pglite_store.ts';

const storeModule = new URL('../src/store/pglite_store.ts', import.meta.url).href;

/**
 * The suite's TypeScript set-up (tsx only on a Node that cannot strip types itself), as tap gives it to every
 * test process: a child that imports the store's `.ts` modules needs no more.
 */
const typescriptSetup = new URL('../../tools/test-setup/typescript.mjs', import.meta.url).href;

/** Runs `node` on a module script that may import the platform's TypeScript; answers its exit code and output. */
function runNode(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', typescriptSetup, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The pid of a process that has already exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}

compileStoresAsPlatform();

/**
 * The data folder every test here locks, opens and closes, one test after another: the first open creates
 * its database from the template, every later one opens that database, at a tenth of the cost of writing a
 * new database's 40 MB to the disk (1.6 CPU-s, and far more wall time on a busy disk). Each test closes what
 * it opened before the next begins (its teardown), so each finds the folder unlocked, or locked as it wrote.
 */
const dataDir = await mkdtemp(join(tmpdir(), 'scada-lock-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));
const lock = join(dataDir, 'pgdata.lock');

/** The store on the shared data folder, as the suite's stores run (`EMBEDDED_STORE_THREAD`), closed when the test ends. */
async function openFolder(t: Test): Promise<PGliteStore> {
  const store = await PGliteStore.open(dataDir, { template: await pgliteTemplate(), checkNesting: true, thread: testStoreThread });
  t.teardown(() => store.close());
  return store;
}

t.test('the data folder is locked with the pid of its owner, and unlocked on close', async (t) => {
  const store = await openFolder(t);
  t.equal(Number.parseInt(await readFile(lock, 'utf8'), 10), process.pid);
  await store.close();
  t.notOk(existsSync(lock));
});

t.test('a second process refuses a data folder in use, naming the folder, the lock and the pid', async (t) => {
  await openFolder(t);
  const script = `
    const { PGliteStore } = await import(${JSON.stringify(storeModule)});
    try { await PGliteStore.open(${JSON.stringify(dataDir)}); console.log('opened'); process.exit(0); }
    catch (err) { console.error(err.message); process.exit(3); }`;
  const result = await runNode(script);
  t.equal(result.code, 3, result.stderr);
  t.notMatch(result.stdout, /opened/);
  t.match(result.stderr, lock);
  t.match(result.stderr, `process ${process.pid}`);
  t.equal(Number.parseInt(await readFile(lock, 'utf8'), 10), process.pid, 'the lock is still ours');
});

t.test('the same process cannot open a data folder twice', async (t) => {
  await openFolder(t);
  await t.rejects(PGliteStore.open(dataDir), FolderLockedError);
});

t.test('a stale lock left by a dead process is taken over', async (t) => {
  await writeFile(lock, `${await deadPid()}\n12345\n`);
  const store = await openFolder(t);
  t.equal(Number.parseInt(await readFile(lock, 'utf8'), 10), process.pid);
  t.equal(await store.ping(), true);
});

t.test('a lock with our pid but another start time (a restarted container) is stale', async (t) => {
  await writeFile(lock, `${process.pid}\n12345\n`);
  const store = await openFolder(t);
  t.equal(await store.ping(), true);
});

t.test('data written to the folder is there after reopening', async (t) => {
  const store = await openFolder(t);
  await store.query('create table kept (v text)');
  await store.query('insert into kept values ($1)', ['still here']);
  await store.close();
  const again = await PGliteStore.open(dataDir);
  t.teardown(() => again.close());
  t.same((await again.query('select v from kept')).rows, [{ v: 'still here' }]);
});

t.test('a store call inside a transaction of the same PGlite store fails instead of waiting forever', async (t) => {
  const { store, cleanup } = await memoryPGlite();
  t.teardown(cleanup);
  await t.rejects(
    store.transaction(async () => {
      await store.query('select 1');
    }),
    /use the transaction's tx/,
  );
  t.equal(await store.ping(), true);
});
