/**
 * The simulator's file store and logs, through the platform's own MMS client: directories listed page by
 * page, a COMTRADE pair recognised, a file read piece by piece to its last octet and closed, a file
 * deleted, refusals with their FileProblem, and a log that keeps an entry per change of its data set, read by time and after an
 * entry, a page at a time.
 */
import t from 'tap';
import { comtradeRecords, deleteFile, DeviceFile, fileDirectory, Iec61850Device, MmsClient, MmsError, queryLog } from '@scada/iec61850';
import { startSimulator, type Faults } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';

const D = 'SIMLD0';
const LOG = `${D}/LLN0$EventLog`;
const big = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31 + 7) & 0xff);
const faults: Faults = {};
const sim = await startSimulator({
  model: await fixtureModel(),
  port: 0,
  faults,
  fileDirectoryPageSize: 2,
  journalPageSize: 3,
  files: {
    'COMTRADE/DR_0001.CFG': { data: 'FDR1,1,1999\n', lastModified: '2026-11-20T10:00:00.250Z' },
    'COMTRADE/DR_0001.DAT': { data: big },
    'COMTRADE/DR_0002.cfg': { data: 'no dat of its own' },
    'readme.txt': { data: 'hello' },
    'empty.bin': { data: new Uint8Array(0) },
  },
  logs: [{ name: LOG, dataSet: `${D}/LLN0$Events` }],
});
t.teardown(() => sim.stop());
const device = await Iec61850Device.connect({ host: '127.0.0.1', port: sim.port });
t.teardown(() => device.client.conclude());
const client = device.client;

/** Every entry of a directory, following the device's pages. */
async function all(path?: string) {
  const names: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await fileDirectory(client, path, after);
    pages++;
    names.push(...page.entries.map((e) => `${e.name}:${e.kind}:${e.size}`));
    if (!page.moreFollows) return { names, pages };
    after = page.entries.at(-1)?.name;
  }
}

t.test('the root lists its files and directories a page at a time', async (t) => {
  const { names, pages } = await all();
  t.same(names, ['COMTRADE/:directory:0', 'empty.bin:file:0', 'readme.txt:file:5']);
  t.equal(pages, 2, 'two entries a page, as the simulator was told');
});

t.test('a directory lists its files with their full names, times and kinds; the COMTRADE pair is one record', async (t) => {
  const first = await fileDirectory(client, 'COMTRADE');
  t.same(
    first.entries.map((e) => [e.name, e.kind, e.size]),
    [
      ['COMTRADE/DR_0001.CFG', 'comtrade', 12],
      ['COMTRADE/DR_0001.DAT', 'comtrade', big.length],
    ],
  );
  t.equal(first.entries[0].lastModified, '2026-11-20T10:00:00.250Z', 'the time travels as GeneralizedTime, to the millisecond');
  t.ok(first.moreFollows);
  const rest = await fileDirectory(client, '/COMTRADE/', 'COMTRADE/DR_0001.DAT');
  t.same(
    rest.entries.map((e) => e.name),
    ['COMTRADE/DR_0002.cfg'],
  );
  t.same(comtradeRecords([...first.entries, ...rest.entries]), [
    { name: 'COMTRADE/DR_0001', cfg: 'COMTRADE/DR_0001.CFG', dat: 'COMTRADE/DR_0001.DAT' },
  ]);
});

t.test('a name the store does not have, or one with .., is file-non-existent', async (t) => {
  for (const name of ['NOPE', '../etc', 'COMTRADE/../readme.txt']) {
    const err = await fileDirectory(client, name).catch((e: unknown) => e);
    t.ok(err instanceof MmsError, name);
    t.match(err, { errorClass: 'file', code: 7, text: 'file: file-non-existent' }, name);
  }
});

t.test('a file is read piece by piece to its last octet, then closed', async (t) => {
  const file = await DeviceFile.open(client, 'COMTRADE/DR_0001.DAT');
  t.equal(file.attributes.size, big.length);
  t.equal(sim.openFiles(), 1);
  const pieces: Uint8Array[] = [];
  for (;;) {
    const piece = await file.read();
    pieces.push(piece.data);
    if (!piece.moreFollows) break;
  }
  t.equal(pieces.length, 4, 'pieces of the PDU size');
  t.same(Buffer.concat(pieces), Buffer.from(big));
  await file.close();
  t.equal(sim.openFiles(), 0);
  const empty = await DeviceFile.open(client, 'empty.bin');
  t.same(await empty.read(), { data: new Uint8Array(0), moreFollows: false });
  await empty.close();
});

t.test('an association gets the largest PDU the device accepts, and FileRead pieces of that size', async (t) => {
  const roomy = await startSimulator({ model: await fixtureModel(), port: 0, maxPduSize: 150_000, files: { 'big.bin': { data: big } } });
  t.teardown(() => roomy.stop());
  const pieces = async (c: MmsClient) => {
    const file = await DeviceFile.open(c, 'big.bin');
    const sizes: number[] = [];
    for (let piece = await file.read(); ; piece = await file.read()) {
      sizes.push(piece.data.length);
      if (!piece.moreFollows) break;
    }
    await file.close();
    return sizes;
  };
  const proposing = await MmsClient.connect({ host: '127.0.0.1', port: roomy.port });
  t.teardown(() => proposing.conclude());
  t.equal(proposing.negotiated.maxPduSize, 150_000, "by default the client takes the device's limit, not libiec61850's 65000");
  t.same(await pieces(proposing), [149_980, 50_020], 'two FileReads where 65000-octet PDUs take four');
  const modest = await MmsClient.connect({ host: '127.0.0.1', port: roomy.port, maxPduSize: 65_000 });
  t.teardown(() => modest.conclude());
  t.equal(modest.negotiated.maxPduSize, 65_000, 'a client proposing less gets what it proposed');
  t.same(await pieces(modest), [64_980, 64_980, 64_980, 5_060], 'and pieces its PDUs hold');
});

t.test('a refused file answers its FileProblem', async (t) => {
  faults.refuseFiles = { 'readme.txt': 6 };
  const err = await DeviceFile.open(client, '/readme.txt').catch((e: unknown) => e);
  t.match(err, { errorClass: 'file', code: 6, text: 'file: file-access-denied' });
  delete faults.refuseFiles;
});

t.test('a file is deleted once; a refused deletion and a second one answer their FileProblem', async (t) => {
  faults.refuseFileDeletes = { 'readme.txt': 6 };
  t.match(await deleteFile(client, 'readme.txt').catch((e: unknown) => e), {
    errorClass: 'file',
    code: 6,
    text: 'file: file-access-denied',
  });
  delete faults.refuseFileDeletes;
  await deleteFile(client, '/readme.txt');
  t.same((await all()).names, ['COMTRADE/:directory:0', 'empty.bin:file:0'], 'gone from the store');
  t.match(await deleteFile(client, 'readme.txt').catch((e: unknown) => e), { errorClass: 'file', code: 7 }, 'a second time: no such file');
  t.match(await deleteFile(client, '../x').catch((e: unknown) => e), { errorClass: 'file', code: 7 }, 'a name with .. is no file');
});

t.test('a log keeps an entry per change, read by time and after an entry, page by page', async (t) => {
  const start = Date.now();
  for (let i = 0; i < 5; i++) sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: i % 2 === 0 });
  sim.setValue(`${D}/GGIO1$MX$AnIn1$mag$f`, { type: 'float', value: 42.5, double: false });
  t.equal(sim.logEntries(LOG).length, 6);
  const typeOf = (ref: string) => device.typeOf(ref);
  const first = await queryLog(client, `${D}/LLN0.EventLog`, { from: start - 1000, to: Date.now() + 1000 }, typeOf);
  t.equal(first.entries.length, 3);
  t.ok(first.moreFollows);
  t.same(first.entries[0].values, [{ ref: `${D}/GGIO1.Ind1.stVal[ST]`, value: true, reason: ['dataChange'] }]);
  const last = first.entries.at(-1)!;
  const next = await queryLog(client, LOG, { after: Buffer.from(last.entryId, 'hex'), entryTime: Date.parse(last.time!) }, typeOf);
  t.equal(next.entries.length, 3);
  t.notOk(next.moreFollows);
  t.match(
    next.entries.at(-1)!.values,
    [{ ref: `${D}/GGIO1.AnIn1[MX]`, value: { mag: { f: 42.5 }, q: { validity: 'good' } }, reason: ['dataChange'] }],
    'a data object logged whole comes back by its type',
  );
  const none = await queryLog(client, LOG, { from: Date.now() + 60_000, to: Date.now() + 120_000 });
  t.same(none, { entries: [], moreFollows: false });
});

t.test('an unknown log is object-non-existent; a refused one object-access-denied', async (t) => {
  t.match(await queryLog(client, `${D}/LLN0$Nothing`, { from: Date.UTC(1990, 0), to: Date.now() }).catch((e: unknown) => e), {
    errorClass: 'access',
    code: 2,
  });
  faults.refuseJournals = true;
  t.match(await queryLog(client, LOG, { from: Date.UTC(1990, 0), to: Date.now() }).catch((e: unknown) => e), {
    errorClass: 'access',
    code: 3,
  });
  delete faults.refuseJournals;
});
