/**
 * RFC 1006 framing: the header, and a deframer fed TCP segments cut anywhere or holding several frames.
 */
import t from 'tap';
import { createTpktDeframer, decodeTpkt, encodeTpkt, readTpkt } from '../../src/mms/tpkt.ts';
import { codecError, fromHex, toHex } from './helpers.ts';

const CR = fromHex('0300001611e00000000100c0010dc2020001c1020001');
const READ = fromHex('0300002402f0800100010061173015020103a010a10e020101a409a107870508bf239fec');

t.test('a TPDU is framed with version 3 and a length that counts the header', async (t) => {
  t.equal(toHex(encodeTpkt(fromHex('02f080'))), '0300000702f080');
  t.equal(toHex(encodeTpkt(CR.subarray(4))), toHex(CR));
  t.equal(toHex(decodeTpkt(CR)), toHex(CR.subarray(4)));
});

t.test('frames that would be shorter than 7 or longer than 65535 octets are refused', async (t) => {
  t.equal(codecError(() => encodeTpkt(fromHex('02f0'))).code, 'bad_length');
  t.equal(toHex(encodeTpkt(new Uint8Array(65531)).subarray(0, 4)), '0300ffff');
  t.equal(codecError(() => encodeTpkt(new Uint8Array(65532))).code, 'bad_length');
});

t.test('a header with another version or a length below 7 is refused with a typed error', async (t) => {
  for (const hex of ['0400000702f080', '00', '0200'])
    t.match(
      codecError(() => readTpkt(fromHex(hex))),
      { layer: 'tpkt', code: 'bad_version' },
    );
  for (const hex of ['03000006f0f080', '03000000', '03000004'])
    t.match(
      codecError(() => readTpkt(fromHex(hex))),
      { layer: 'tpkt', code: 'bad_length' },
    );
});

t.test('a frame cut short needs more bytes; decodeTpkt says it was truncated', async (t) => {
  for (let n = 0; n < READ.length; n++) {
    t.equal(readTpkt(READ.subarray(0, n)), undefined);
    t.equal(codecError(() => decodeTpkt(READ.subarray(0, n))).code, 'truncated');
  }
  t.equal(codecError(() => decodeTpkt(fromHex(toHex(READ) + '00'))).code, 'trailing_bytes');
});

t.test('the deframer yields each frame once, whatever the segment boundaries', async (t) => {
  const stream = new Uint8Array([...CR, ...READ, ...CR]);
  for (const size of [1, 2, 3, 5, 7, 22, 23, 57, stream.length]) {
    const deframer = createTpktDeframer();
    const frames: string[] = [];
    for (let at = 0; at < stream.length; at += size) frames.push(...deframer.push(stream.subarray(at, at + size)).map(toHex));
    t.same(frames, [toHex(CR), toHex(READ), toHex(CR)], `segments of ${size}`);
    t.equal(deframer.buffered, 0);
  }
});

t.test('the deframer keeps the partial tail of a coalesced segment for the next push', async (t) => {
  const deframer = createTpktDeframer();
  t.same(deframer.push(new Uint8Array([...CR, ...READ.subarray(0, 10)])).map(toHex), [toHex(CR)]);
  t.equal(deframer.buffered, 10);
  t.same(deframer.push(READ.subarray(10)).map(toHex), [toHex(READ)]);
});

t.test('a frame whole in one chunk is a view of it, no copy; one gathered from several chunks is a buffer of its own', async (t) => {
  const deframer = createTpktDeframer();
  const chunk = new Uint8Array([...CR, ...READ.subarray(0, 3)]);
  const [frame] = deframer.push(chunk);
  t.equal(frame.buffer, chunk.buffer, 'a view of the chunk');
  t.equal(toHex(frame), toHex(CR));
  const rest = READ.slice(3);
  const [gathered] = deframer.push(rest);
  t.not(gathered.buffer, rest.buffer, 'gathered into its own buffer');
  rest.fill(0);
  chunk.fill(0);
  t.equal(toHex(gathered), toHex(READ), 'whatever happens to the chunks after');
  t.equal(deframer.buffered, 0);
});

t.test('the deframer stops between whole frames when asked, and takes the rest later in order', async (t) => {
  const frames = [1, 2, 3, 4].map((n) => encodeTpkt(Uint8Array.of(n, n, n)));
  const partOfNext = encodeTpkt(Uint8Array.of(5, 5, 5));
  const chunk = Uint8Array.from([...frames.flatMap((f) => [...f]), ...partOfNext.subarray(0, 3)]);
  const d = createTpktDeframer();
  const got: number[] = [];
  const onFrame = (buf: Uint8Array, start: number) => got.push(buf[start + 4]!);
  let asked = 0;
  const at = d.some(chunk, onFrame, () => ++asked >= 2);
  t.same(got, [1, 2], 'the first frame is always taken; the second was taken before the answer turned');
  t.equal(at, frames[0]!.length * 2, 'the offset where the rest begins');
  t.equal(
    d.some(chunk.subarray(at), onFrame, () => false),
    chunk.length - at,
    'the rest taken whole, its partial frame gathered',
  );
  d.each(partOfNext.subarray(3), onFrame);
  t.same(got, [1, 2, 3, 4, 5]);
  t.equal(d.buffered, 0);
});

t.test('after a bad header the deframer refuses every later push', async (t) => {
  const deframer = createTpktDeframer();
  t.same(deframer.push(CR.subarray(0, 5)), []);
  t.same(deframer.push(CR.subarray(5)).length, 1);
  t.equal(codecError(() => deframer.push(fromHex('05'))).code, 'bad_version');
  t.equal(codecError(() => deframer.push(CR)).code, 'bad_version', 'the stream cannot be resynchronised');
  const short = createTpktDeframer();
  t.equal(codecError(() => short.push(fromHex('03000003'))).code, 'bad_length');
});
