/**
 * A device's UtcTime read as libiec61850 reads the same bytes (`MmsValue_getUtcTimeInMs`: the fraction of
 * a second divided by 16777, rounded down), at the edges of the fraction and where that differs from the
 * exact `fraction * 1000 / 2^24`; through the package's entry point, from the encoded value to the ISO time.
 */
import t from 'tap';
import { decodeData, encodeData, readSingle, toJson, utcTimeFromMs, utcTimeToMs, type MmsData } from '@scada/iec61850/wire';

const SECONDS = 1795315169; // 2026-11-22T00:39:29Z

/** The encoded MMS Data of a UtcTime with these seconds and 24-bit fraction (quality 0x0a). */
function utcTimeBytes(seconds: number, fraction: number): Uint8Array {
  const out = new Uint8Array([0x91, 0x08, 0, 0, 0, 0, fraction >> 16, (fraction >> 8) & 0xff, fraction & 0xff, 0x0a]);
  new DataView(out.buffer).setUint32(2, seconds);
  return out;
}

/** The ISO time the platform gives the encoded value, as a reported or read `t`. */
function isoOf(bytes: Uint8Array): string {
  const data = decodeData(readSingle(bytes)) as MmsData;
  return (toJson(data, { type: 'utc-time' }, 't') as { time: string }).time;
}

const at = (ms: number) => new Date(SECONDS * 1000 + ms).toISOString();

t.test('the fraction of a second decodes as libiec61850 decodes it, at its edges', async (t) => {
  const cases: [number, number, string][] = [
    [0, 0, 'no fraction'],
    [1, 0, 'the smallest fraction'],
    [16776, 0, 'just short of 16777'],
    [16777, 1, 'one step of 16777: 1 ms (the exact division gives 0)'],
    [0x800000, 500, 'half a second'],
    [4311744, 257, 'what an encoder writes for 257 ms: 257 (the exact division gives 256)'],
    [16760438, 999, 'what an encoder writes for 999 ms'],
    [16776999, 999, 'the last fraction below 1000 ms'],
    [16777000, 1000, 'from 16,777,000 on: 1000 ms, the next second, as libiec61850 has it'],
    [0xffffff, 1000, 'the largest fraction, 2^24 - 1'],
  ];
  for (const [fraction, ms, what] of cases) {
    t.equal(utcTimeToMs({ seconds: SECONDS, fraction, quality: 0x0a }), SECONDS * 1000 + ms, what);
    t.equal(isoOf(utcTimeBytes(SECONDS, fraction)), at(ms), `${what}, as the ISO time of a value`);
  }
});

t.test('every whole millisecond written by the encoder reads back as written, and where the exact division is 1 ms early', async (t) => {
  let earlierExactly = 0;
  for (let ms = 0; ms < 1000; ms++) {
    const written = utcTimeFromMs(SECONDS * 1000 + ms, 0x0a);
    if (utcTimeToMs(written) !== SECONDS * 1000 + ms) t.fail(`${ms} ms read back as ${utcTimeToMs(written) - SECONDS * 1000}`);
    if (Math.floor((written.fraction * 1000) / 0x1000000) === ms - 1) earlierExactly++;
    const bytes = encodeData({ type: 'utc-time', value: written });
    if (isoOf(bytes) !== at(ms)) t.fail(`${ms} ms: ${isoOf(bytes)}`);
  }
  t.ok(earlierExactly > 900, `the exact division reads ${earlierExactly} of 1000 written times 1 ms early, this decoding none`);
  t.same(
    utcTimeFromMs(SECONDS * 1000 + 257, 0x0a),
    { seconds: SECONDS, fraction: 4311744, quality: 0x0a },
    'the encoder: ms * 2^24 / 1000, rounded down',
  );
});
