/**
 * The embedded store's own files are owner-only (0600 files, 0700 folders) whatever the process umask: those
 * it makes at creation and while it writes, and those a data folder of an older version left open (0666 and
 * 0755), which are tightened when the store opens.
 */
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { openStore, type Store } from '@scada/platform';
import { pino } from 'pino';
import t, { type Test } from 'tap';

// The loosest umask there is: whatever the store makes, it makes owner-only by itself.
process.umask(0);
const dataDir = await mkdtemp(join(tmpdir(), 'scada-private-store-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));
const pgdata = join(dataDir, 'pgdata');

type Entry = { path: string; mode: number; dir: boolean };

/** Every file and folder under a folder, the folder itself included, with its permission bits. */
async function everything(folder: string): Promise<Entry[]> {
  const info = await lstat(folder);
  const found: Entry[] = [{ path: folder, mode: info.mode & 0o777, dir: info.isDirectory() }];
  if (info.isDirectory()) for (const name of await readdir(folder)) found.push(...(await everything(join(folder, name))));
  return found;
}

/** Checks that every entry under the data folder is owner-only: 0600 files, 0700 folders. */
async function ownerOnly(t: Test, when: string): Promise<void> {
  const entries = await everything(dataDir);
  t.ok(entries.filter((e) => !e.dir).length > 500, `${when}: the database's files are there (${entries.length} entries)`);
  const open = entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));
  t.same(
    open.map((e) => `${e.path.slice(dataDir.length)} ${e.mode.toString(8)}`),
    [],
    `${when}: every file 0600 and every folder 0700`,
  );
}

/** Opens the store on the data folder with a log whose lines are kept. */
async function open(): Promise<{ store: Store; logs: { level: number; msg: string; entries?: number }[] }> {
  const logs: { level: number; msg: string; entries?: number }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  return { store: await openStore({ dataDir }, pino({ level: 'info' }, sink)), logs };
}

/** Work that makes the database create files: new relations, an index, a rewrite and a checkpoint. */
async function write(store: Store, table: string): Promise<void> {
  await store.query(`create table ${table} (id int primary key, note text)`);
  await store.query(`insert into ${table} select n, repeat('x', 200) from generate_series(1, 20000) as n`);
  await store.query(`create index ${table}_note on ${table} (note)`);
  await store.query(`vacuum full ${table}`);
  await store.query('checkpoint');
}

t.test('a new embedded store makes its files 0600 and its folders 0700, and keeps new ones so as it writes', async (t) => {
  const { store, logs } = await open();
  try {
    await ownerOnly(t, 'created');
    t.notOk(
      logs.some((l) => l.msg.includes('owner-only')),
      'nothing to tighten in a folder this version made',
    );
    await write(store, 'first');
    await ownerOnly(t, 'after writes');
  } finally {
    await store.close();
  }
});

t.test('a data folder an older version left 0666 and 0755 is made owner-only at open, with a warning', async (t) => {
  const entries = await everything(pgdata);
  for (const e of entries) await chmod(e.path, e.dir ? 0o755 : 0o666);
  const { store, logs } = await open();
  try {
    await ownerOnly(t, 'opened');
    const warning = logs.find((l) => l.msg.includes('owner-only'));
    t.equal(warning?.level, 40, 'a warning');
    t.equal(warning?.entries, entries.length, 'naming how many entries it tightened');
    t.same((await store.query<{ n: string }>('select count(*) as n from first')).rows, [{ n: '20000' }], 'the data is all there');
    await write(store, 'second');
    await ownerOnly(t, 'after writes');
  } finally {
    await store.close();
  }
});
