/**
 * A device's file store through the gateway, against the simulator's: directories listed with their
 * COMTRADE records and followed past the device's pages, a disturbance record downloaded byte for byte in
 * chunks, a file past MAX_FILE_DOWNLOAD_BYTES refused and closed on the device, names refused before the
 * device is asked, the device's own refusal, and every download in the control log; files deleted
 * (MMS FileDelete) by editors, with the same name rules, refusals and control log.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startSimulator, type Faults } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';

const dat = randomBytes(250_000);
const cfg = 'FDR1,1,1999\n2,1A,1D\n1,IA,A,,A,1,0,0,-32768,32767,1,1,S\n';
const many = Object.fromEntries(Array.from({ length: 1203 }, (_, i) => [`many/f${String(i).padStart(4, '0')}.txt`, { data: String(i) }]));
const faults: Faults = {};
const sim = await startSimulator({
  model: await fixtureModel(),
  port: 0,
  faults,
  fileDirectoryPageSize: 100,
  files: {
    'COMTRADE/DR_0001.CFG': { data: cfg, lastModified: '2026-11-20T10:00:00.250Z' },
    'COMTRADE/DR_0001.DAT': { data: dat, lastModified: '2026-11-20T10:00:00.500Z' },
    'COMTRADE/DR_0001.HDR': { data: 'feeder 1 trip' },
    'COMTRADE/DR_0002.CFG': { data: cfg },
    'big.bin': { data: randomBytes(300_000) },
    'LOG/events_1.log': { data: 'trip 1' },
    'LOG/events_2.log': { data: 'trip 2' },
    'LOG/IEDSERVER.BIN': { data: 'firmware' },
    ...many,
  },
});
t.teardown(() => sim.stop());
const p = await startTestPlatform({
  MAX_FILE_DOWNLOAD_BYTES: '262144',
  MMS_RECONNECT_MIN_MS: '100',
  MMS_RECONNECT_MAX_MS: '1000',
});
t.teardown(() => p.stop());

type Problem = { status: number; code: string; detail: string; deviceError?: { service: string; error: string } };
type Listing = {
  path: string;
  entries: { name: string; size: number; lastModified: string | null; kind: string }[];
  comtrade: Record<string, string>[];
  moreFollows: boolean;
  next: string | null;
};
type LogRow = {
  action: string;
  reference: string;
  value: unknown;
  outcome: string;
  status: number;
  deviceError: unknown;
  username: string;
};

t.test(`a device's file store (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  const q = (path: string) => encodeURIComponent(path);
  const list = (query = '') => c.api('GET', `/files${query}`);
  const download = (path: string) => c.api('GET', `/files/content?path=${q(path)}`);
  const remove = (path: string) => c.api('DELETE', `/files?path=${q(path)}`);
  const names = async (path: string) => ((await (await list(`?path=${q(path)}`)).json()) as Listing).entries.map((e) => e.name);
  const lastLogRow = async () => ((await (await c.api('GET', '/control-log?size=1')).json()) as { content: LogRow[] }).content[0];

  t.test('a connection that is not connected answers 409', async (t) => {
    t.equal((await list()).status, 409);
    t.equal((await download('COMTRADE/DR_0001.CFG')).status, 409);
    const stopped = await remove('LOG/events_1.log');
    t.equal(stopped.status, 409);
    t.equal(((await stopped.json()) as Problem).code, 'not_connected');
    await c.connect();
  });

  t.test('the root lists its entries, directories as names ending in /', async (t) => {
    const res = await list();
    t.equal(res.status, 200);
    const body = (await res.json()) as Listing;
    t.same(
      body.entries.map((e) => [e.name, e.kind]),
      [
        ['COMTRADE/', 'directory'],
        ['LOG/', 'directory'],
        ['big.bin', 'file'],
        ['many/', 'directory'],
      ],
    );
    t.match(body, { path: '', moreFollows: false, next: null, comtrade: [] });
  });

  t.test('a directory of disturbance records: sizes, times, and the COMTRADE record that has its .cfg and .dat', async (t) => {
    const body = (await (await list(`?path=${q('/COMTRADE/')}`)).json()) as Listing;
    t.same(body.entries[0], { name: 'COMTRADE/DR_0001.CFG', size: cfg.length, lastModified: '2026-11-20T10:00:00.250Z', kind: 'comtrade' });
    t.same(
      body.entries.map((e) => e.name),
      ['COMTRADE/DR_0001.CFG', 'COMTRADE/DR_0001.DAT', 'COMTRADE/DR_0001.HDR', 'COMTRADE/DR_0002.CFG'],
    );
    t.same(body.comtrade, [
      { name: 'COMTRADE/DR_0001', cfg: 'COMTRADE/DR_0001.CFG', dat: 'COMTRADE/DR_0001.DAT', hdr: 'COMTRADE/DR_0001.HDR' },
    ]);
  });

  t.test("a long directory is followed over the device's pages, 1000 entries an answer, then from `next`", async (t) => {
    const requests: string[] = [];
    const count = (e: { request: { service: string } }) => void requests.push(e.request.service);
    sim.on('request', count);
    const first = (await (await list('?path=many')).json()) as Listing;
    sim.off('request', count);
    t.equal(first.entries.length, 1000);
    t.equal(requests.filter((s) => s === 'fileDirectory').length, 10, "ten of the device's pages of 100");
    t.ok(first.moreFollows);
    t.equal(first.next, 'many/f0999.txt');
    const rest = (await (await list(`?path=many&after=${q(first.next!)}`)).json()) as Listing;
    t.equal(rest.entries.length, 203);
    t.same([rest.entries[0]?.name, rest.moreFollows, rest.next], ['many/f1000.txt', false, null]);
  });

  t.test('a disturbance record downloads byte for byte, in chunks, and is in the control log', async (t) => {
    const res = await download('COMTRADE/DR_0001.DAT');
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/octet-stream');
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="DR_0001.DAT"');
    t.equal(res.headers.get('content-length'), String(dat.length));
    t.same(Buffer.from(await res.arrayBuffer()), dat, 'byte for byte');
    await until('closed on the device after its last piece', async () => sim.openFiles() === 0, 5000);
    // a download is answered while its entry is being kept, so the entry may land just after the last octet
    await until(
      'its entry in the control log',
      async () => {
        const row = await lastLogRow();
        return row?.action === 'file-download' && row.outcome === 'ok';
      },
      5000,
    );
    t.match(await lastLogRow(), {
      action: 'file-download',
      reference: 'COMTRADE/DR_0001.DAT',
      value: { size: dat.length },
      outcome: 'ok',
      status: 200,
      deviceError: null,
    });
    const text = await download('/COMTRADE/DR_0001.CFG');
    t.equal(await text.text(), cfg, 'a name with a leading / as some devices write it');
    const head = await c.api('HEAD', `/files/content?path=${q('COMTRADE/DR_0001.DAT')}`);
    t.same([head.status, head.headers.get('content-length')], [200, String(dat.length)], 'HEAD answers the headers');
    await until('closed after HEAD', async () => sim.openFiles() === 0, 5000);
  });

  t.test('a download streams as the device answers: its first piece reaches the client while the device holds the next', async (t) => {
    let fileReads = 0;
    const holdSecond = (e: { request: { service: string } }) => {
      if (e.request.service === 'fileRead' && ++fileReads === 2) faults.holdFileReads = true;
    };
    sim.on('request', holdSecond);
    t.teardown(() => {
      sim.off('request', holdSecond);
      delete faults.holdFileReads;
    });
    const res = await download('COMTRADE/DR_0001.DAT');
    t.equal(res.status, 200);
    const reader = res.body!.getReader();
    // The piece is passed on at once; the bound only turns a download that waits for more into a failure.
    const stalled = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('nothing arrived while the device held its second piece')), 10_000).unref(),
    );
    const first = await Promise.race([reader.read(), stalled]);
    t.ok(first.value && first.value.length > 0, 'octets arrived');
    t.equal(fileReads, 2, 'while the device holds its second FileRead');
    t.same(Buffer.from(first.value!), dat.subarray(0, first.value!.length), 'the file from its start');
    const parts = [Buffer.from(first.value!)];
    delete faults.holdFileReads;
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(Buffer.from(r.value));
    t.same(Buffer.concat(parts), dat, 'then the rest, byte for byte');
    await until('closed after its last piece', async () => sim.openFiles() === 0, 5000);
  });

  t.test('a file past MAX_FILE_DOWNLOAD_BYTES is 413 and closed on the device at once', async (t) => {
    const res = await download('big.bin');
    t.equal(res.status, 413);
    t.match((await res.json()) as Problem, { code: 'payload_too_large', detail: /MAX_FILE_DOWNLOAD_BYTES/ });
    t.equal(sim.openFiles(), 0);
    t.match(await lastLogRow(), { action: 'file-download', reference: 'big.bin', outcome: 'payload_too_large', status: 413 });
  });

  t.test('names outside the namespace are 400 before the device is asked; names it has no file of 404', async (t) => {
    const asked: string[] = [];
    const count = (e: { request: { service: string } }) => void asked.push(e.request.service);
    sim.on('request', count);
    for (const bad of ['../etc/passwd', 'COMTRADE/../big.bin', 'COMTRADE/./DR_0001.CFG', '..', 'a\\b', 'x\u0001y']) {
      const res = await download(bad);
      t.equal(res.status, 400, JSON.stringify(bad));
      t.equal(((await res.json()) as Problem).code, 'validation_failed');
    }
    t.equal((await list(`?path=${q('/../')}`)).status, 400);
    t.equal((await c.api('GET', '/files/content')).status, 400, 'a download names its file');
    sim.off('request', count);
    t.same(asked, [], 'the device was asked nothing');
    const missing = await download('COMTRADE/DR_0009.CFG');
    t.equal(missing.status, 404);
    t.equal(((await missing.json()) as Problem).code, 'not_found');
    t.equal((await list('?path=NOPE')).status, 404);
  });

  t.test("the device's refusal is 502 device_refused with its reason, and kept in the control log", async (t) => {
    faults.refuseFiles = { 'COMTRADE/DR_0001.CFG': 6 };
    const res = await download('COMTRADE/DR_0001.CFG');
    t.equal(res.status, 502);
    t.match((await res.json()) as Problem, {
      code: 'device_refused',
      deviceError: { service: 'file-open', error: 'file-access-denied' },
    });
    t.match(await lastLogRow(), {
      outcome: 'device_refused',
      status: 502,
      deviceError: { service: 'file-open', error: 'file-access-denied' },
    });
    delete faults.refuseFiles;
  });

  t.test('a client that leaves mid-download has the file closed on the device', async (t) => {
    const res = await c.api('GET', `/files/content?path=${q('COMTRADE/DR_0001.DAT')}`);
    t.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await until('the file closed', async () => sim.openFiles() === 0, 10_000);
    t.pass('closed');
    t.same(
      p.logs.filter((l) => l.level >= 50).map((l) => l.msg),
      [],
      'nothing logged as an error: a client that leaves is no failure',
    );
  });

  t.test('viewers may not list, download or delete', async (t) => {
    const viewer = await signIn(p, { role: 'viewer' });
    for (const path of ['/files', `/files/content?path=${q('COMTRADE/DR_0001.CFG')}`]) {
      const res = await fetch(`${p.url}/api/connections/${c.id}${path}`, { headers: viewer.headers });
      t.equal(res.status, 403, path);
    }
    const res = await fetch(`${p.url}/api/connections/${c.id}/files?path=${q('LOG/events_1.log')}`, {
      method: 'DELETE',
      headers: viewer.headers,
    });
    t.equal(res.status, 403, 'delete');
    t.ok((await names('LOG')).includes('LOG/events_1.log'), 'the file is still there');
  });

  t.test('an editor deletes a file: 204, gone from the directory, and in the control log', async (t) => {
    const res = await remove('LOG/events_1.log');
    t.equal(res.status, 204);
    t.same(await names('LOG'), ['LOG/IEDSERVER.BIN', 'LOG/events_2.log']);
    t.match(await lastLogRow(), {
      action: 'file-delete',
      reference: 'LOG/events_1.log',
      value: null,
      outcome: 'ok',
      status: 204,
      deviceError: null,
    });
    t.equal((await remove('/LOG/events_2.log')).status, 204, 'a name with a leading / as some devices write it');
  });

  t.test('a file the device has no file of is 404, and kept in the control log', async (t) => {
    const res = await remove('LOG/events_1.log');
    t.equal(res.status, 404);
    t.equal(((await res.json()) as Problem).code, 'not_found');
    t.match(await lastLogRow(), { action: 'file-delete', reference: 'LOG/events_1.log', outcome: 'not_found', status: 404 });
  });

  t.test("the device's refusal of a deletion is 502 device_refused with its reason, and kept in the control log", async (t) => {
    faults.refuseFileDeletes = { 'LOG/IEDSERVER.BIN': 6 };
    t.teardown(() => delete faults.refuseFileDeletes);
    const res = await remove('LOG/IEDSERVER.BIN');
    t.equal(res.status, 502);
    t.match((await res.json()) as Problem, {
      code: 'device_refused',
      detail: /file-access-denied/,
      deviceError: { service: 'file-delete', error: 'file-access-denied' },
    });
    t.match(await lastLogRow(), {
      action: 'file-delete',
      reference: 'LOG/IEDSERVER.BIN',
      outcome: 'device_refused',
      status: 502,
      deviceError: { service: 'file-delete', error: 'file-access-denied' },
    });
    t.same(await names('LOG'), ['LOG/IEDSERVER.BIN'], 'still there');
  });

  t.test('a deletion without a name, or with a name outside the rules, is 400 before the device is asked', async (t) => {
    const asked: string[] = [];
    const count = (e: { request: { service: string } }) => void asked.push(e.request.service);
    sim.on('request', count);
    const bad = [
      '',
      '../etc/passwd',
      'LOG/../big.bin',
      'LOG/./IEDSERVER.BIN',
      '..',
      'a\\b',
      'x\u0001y',
      'x\u007fy',
      `LOG/${'a'.repeat(252)}`,
    ];
    for (const path of bad) {
      const res = await remove(path);
      t.equal(res.status, 400, JSON.stringify(path));
      t.equal(((await res.json()) as Problem).code, 'validation_failed');
    }
    t.equal((await c.api('DELETE', '/files')).status, 400, 'no path');
    t.equal((await c.api('DELETE', `/files?path=${q('LOG/x')}&recursive=true`)).status, 400, 'an unknown parameter');
    sim.off('request', count);
    t.same(asked, [], 'the device was asked nothing');
  });

  t.test('a connection the space does not have is 404', async (t) => {
    const res = await fetch(`${p.url}/api/connections/00000000-0000-4000-8000-000000000000/files?path=${q('LOG/x')}`, {
      method: 'DELETE',
      headers: c.editor.headers,
    });
    t.equal(res.status, 404);
    t.equal(((await res.json()) as Problem).code, 'not_found');
    const notUuid = await fetch(`${p.url}/api/connections/nope/files?path=${q('LOG/x')}`, { method: 'DELETE', headers: c.editor.headers });
    t.equal(notUuid.status, 400, 'a connection id that is no UUID');
  });
});
