/**
 * Feeding the parser while the file arrives: any chunking gives the result of one buffer, streams of
 * every kind are read, and a fatal finding stops pulling from the source.
 */
import { createReadStream } from 'node:fs';
import t from 'tap';
import { parseScl } from '../../src/scl/mod.ts';
import { haveSharedScl, inChunks, SHARED_SCL, sclText, sharedScl, validParts } from './fixtures.ts';

const NS = 'xmlns="http://www.iec.ch/61850/2003/SCL"';
const international = sclText({ ied: validParts.ied.replace('desc="feeder relay"', 'desc="Schütz ✓ 𝄞 Ωmega"') });

t.test('chunks of any size, split inside multi-byte characters, give the result of one buffer', async (t) => {
  const bytes = new TextEncoder().encode(international);
  const whole = await parseScl(bytes);
  t.equal(whole.ok && whole.model.ieds[0].desc, 'Schütz ✓ 𝄞 Ωmega');
  for (const size of [1, 2, 3, 7, 64, 4096]) t.same(await parseScl(inChunks(bytes, size)), whole, `chunks of ${size} bytes`);
});

t.test('each shared SCL file gives the same model and report fed byte by byte', { skip: !haveSharedScl }, async (t) => {
  for (const name of ['cid_example_deadband.cid', 'complexModel.icd', 'simpleIO_direct_control.cid', 'sampleModel_errors.icd']) {
    const bytes = await sharedScl(name);
    t.same(await parseScl(inChunks(bytes, 1)), await parseScl(bytes), name);
  }
});

t.test('a Node file stream and a web ReadableStream are read as they come', { skip: !haveSharedScl }, async (t) => {
  const expected = await parseScl(await sharedScl('simpleIO_direct_control.cid'));
  const nodeStream = createReadStream(`${SHARED_SCL}simpleIO_direct_control.cid`, { highWaterMark: 13 });
  t.same(await parseScl(nodeStream), expected);
  const bytes = await sharedScl('simpleIO_direct_control.cid');
  const web = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 100) controller.enqueue(bytes.subarray(at, at + 100));
      controller.close();
    },
  });
  t.same(await parseScl(web as unknown as AsyncIterable<Uint8Array>), expected);
});

t.test('text chunks are accepted as well as bytes', async (t) => {
  const pieces = international.match(/[\s\S]{1,5}/g)!;
  t.same(await parseScl(pieces), await parseScl(international));
});

t.test('a chunk that starts the root and ends in "<" loses nothing', async (t) => {
  const result = await parseScl([`<SCL ${NS}><`, 'Header id="h"/><', '/SCL>']);
  t.same(result.report, { edition: '2003', errors: [], warnings: [] });
  const bytes = new TextEncoder().encode(sclText());
  const cut = new TextDecoder().decode(bytes).indexOf('<', 600) + 1;
  t.same(await parseScl([bytes.subarray(0, cut), bytes.subarray(cut)]), await parseScl(bytes), 'the same split in bytes');
});

t.test('a DOCTYPE split over chunks is still found at its first character', async (t) => {
  const doc = `<?xml version="1.0"?>\n<!DOCTYPE SCL [<!ENTITY a "b">]>\n<SCL ${NS}/>`;
  for (const size of [1, 3, 5]) {
    const result = await parseScl(inChunks(new TextEncoder().encode(doc), size));
    t.match(result.report.errors, [{ message: /DOCTYPE/, line: 2, column: 1 }], `chunks of ${size} bytes`);
  }
});

t.test('a DOCTYPE stops the read: the rest of an endless upload is never pulled', async (t) => {
  let pulled = 0;
  let closed = false;
  async function* endless() {
    try {
      yield new TextEncoder().encode(`<?xml version="1.0"?><!DOCTYPE SCL [<!ENTITY a "`);
      for (;;) {
        pulled++;
        yield new TextEncoder().encode('a'.repeat(1024));
      }
    } finally {
      closed = true;
    }
  }
  const result = await parseScl(endless());
  t.match(result.report.errors, [{ message: /DOCTYPE/ }]);
  t.ok(pulled <= 1, `pulled ${pulled} chunks after the DOCTYPE`);
  t.ok(closed, 'the source is closed');
});

t.test('malformed XML in the middle stops pulling from the source', async (t) => {
  let pulled = 0;
  async function* source() {
    yield `<SCL ${NS}><Header id="h"/>\n<IED name="a" <broken`;
    for (let i = 0; i < 1000; i++) {
      pulled++;
      yield '<Private/>';
    }
  }
  const result = await parseScl(source());
  t.match(result.report.errors, [{ message: /^malformed XML/, line: 2 }]);
  t.ok(pulled <= 1);
});

t.test('a failing source rejects with its own error', async (t) => {
  async function* failing() {
    yield `<SCL ${NS}>`;
    throw new Error('upload aborted');
  }
  await t.rejects(parseScl(failing()), { message: 'upload aborted' });
});
