/**
 * The embedded store's first start from a prepared data folder (the template `npm run build` puts beside
 * each bundle): unpacked onto the disk when the data folder is new, owner-only, never over a database that
 * is already there; a template that does not unpack fails the open and leaves nothing that looks like a
 * database. The store runs with the small memory settings of an edge box.
 */
import { lstat, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PGliteStore } from '@scada/platform/testing';
import { compileStoresAsPlatform, pgliteTemplate } from '@scada/testkit/stores';
import t from 'tap';

process.umask(0);
// The WebAssembly compiled as a started platform compiles it (`EMBEDDED_STORE_COMPILER`).
compileStoresAsPlatform();
const folder = await mkdtemp(join(tmpdir(), 'scada-store-template-'));
t.teardown(() => rm(folder, { recursive: true, force: true }));

// A template as the build makes one: a database with a schema of its own, dumped and gzip-compressed.
const templateFile = join(folder, 'store_template.tar.gz');
{
  // From the suite's cached fresh database rather than a run of initdb of its own: the same files.
  const source = await PGliteStore.memory({ template: await pgliteTemplate() });
  await source.query('create schema prepared; create table prepared.things (id int primary key, name text)');
  await source.query(`insert into prepared.things values (1, 'from the template')`);
  await writeFile(templateFile, gzipSync(Buffer.from(await (await source.dump()).arrayBuffer())));
  await source.close();
}

/** Every entry under a folder whose permission bits are not owner-only. */
async function notOwnerOnly(path: string): Promise<string[]> {
  const info = await lstat(path);
  const mode = info.mode & 0o777;
  const own = mode === (info.isDirectory() ? 0o700 : 0o600) ? [] : [`${path} ${mode.toString(8)}`];
  if (!info.isDirectory()) return own;
  const inner = await Promise.all((await readdir(path)).map((name) => notOwnerOnly(join(path, name))));
  return [...own, ...inner.flat()];
}

t.test('a new data folder starts from the template, owner-only, and keeps its data on the next open', async (t) => {
  const dataDir = join(folder, 'fresh');
  const first = await PGliteStore.open(dataDir, { templateFile });
  t.same((await first.query('select name from prepared.things')).rows, [{ name: 'from the template' }]);
  await first.query(`insert into prepared.things values (2, 'written after')`);
  t.same((await first.query('show shared_buffers')).rows, [{ shared_buffers: '16MB' }], 'the small settings are in force');
  await first.close();
  t.same(await notOwnerOnly(join(dataDir, 'pgdata')), [], 'every unpacked file 0600, every folder 0700');
  t.notOk(existsSync(join(dataDir, 'pgdata.unpacking')), 'nothing left beside the folder');

  const again = await PGliteStore.open(dataDir, { templateFile });
  t.same((await again.query('select id from prepared.things order by id')).rows, [{ id: 1 }, { id: 2 }], 'not unpacked again');
  await again.close();
});

t.test('without a template file the store is created as before', async (t) => {
  const store = await PGliteStore.open(join(folder, 'plain'), { templateFile: join(folder, 'absent.tar.gz') });
  t.same((await store.query(`select count(*)::int as n from pg_namespace where nspname = 'prepared'`)).rows, [{ n: 0 }]);
  await store.close();
});

t.test('a template that does not unpack fails the open and leaves no half database', async (t) => {
  const broken = join(folder, 'broken.tar.gz');
  // The first half of a whole template (the one above: no second store started and dumped for it).
  const whole = await readFile(templateFile);
  await writeFile(broken, whole.subarray(0, whole.length >> 1));
  const dataDir = join(folder, 'broken');
  await t.rejects(PGliteStore.open(dataDir, { templateFile: broken }));
  t.notOk(existsSync(join(dataDir, 'pgdata', 'PG_VERSION')), 'no PG_VERSION: the next start begins again');
  const store = await PGliteStore.open(dataDir, { templateFile });
  t.same((await store.query('select count(*)::int as n from prepared.things')).rows, [{ n: 1 }], 'the next start unpacks a good one');
  await store.close();
});

/** A tar header as PGlite's dumps write them (ustar), for entries a dump never holds. */
function tarEntry(name: string, type: string, body = Buffer.alloc(0), link = ''): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write('0000600\0', 100);
  header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
  header.write(type, 156);
  header.write(link, 157);
  header.write('ustar\u000000', 257);
  header.fill(' ', 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return Buffer.concat([header, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

t.test(
  'a template entry that leaves the data folder, or is not a file or a folder, fails the open and writes nothing outside',
  async (t) => {
    const damaged = tarEntry('/global/damaged', '0', Buffer.from('y'));
    damaged[0] ^= 0x01; // the header no longer matches its checksum
    const cases: [string, Buffer][] = [
      ['escape', tarEntry('/../../escaped', '0', Buffer.from('x'))],
      ['link', tarEntry('/global/link', '2', Buffer.alloc(0), '/etc/passwd')],
      ['damaged', damaged],
      // A file whose data end before the size its header names, and no end marker after it.
      ['cut', tarEntry('/global/cut', '0', Buffer.alloc(4096, 1)).subarray(0, 1024)],
    ];
    for (const [label, entry] of cases) {
      const file = join(folder, `${label}.tar.gz`);
      const end = label === 'cut' ? Buffer.alloc(0) : Buffer.alloc(1024);
      await writeFile(file, gzipSync(Buffer.concat([tarEntry('/global', '5'), entry, end])));
      const dataDir = join(folder, label);
      await t.rejects(PGliteStore.open(dataDir, { templateFile: file }), label);
      t.notOk(existsSync(join(dataDir, 'pgdata', 'PG_VERSION')), `${label}: no database`);
      t.notOk(existsSync(join(folder, 'escaped')), `${label}: nothing beside the data folder`);
      t.notOk(existsSync(join(dataDir, 'pgdata', 'global', label)), `${label}: the entry is not written`);
    }
  },
);
