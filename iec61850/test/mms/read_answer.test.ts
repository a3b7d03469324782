/**
 * A read's answer decoded where it lies (`readAnswerAt`) gives what the layered decoders give for the same
 * octets, takes only the usual form, and refuses a malformed value as they do; a kept request's frame is the
 * octets the layered encoders write, at every length of its invoke id.
 */
import t from 'tap';
import { cons, prim } from '../../src/mms/ber.ts';
import { intTlv } from '../../src/mms/ber_fields.ts';
import { CodecError } from '../../src/mms/codec_error.ts';
import { buildConfirmedRequestFrame, buildMmsDataFrame, confirmedRequestLength, peelFrame } from '../../src/mms/frames.ts';
import type { MmsData } from '../../src/mms/mms_data.ts';
import { encodeConfirmedRequestPdu } from '../../src/mms/mms_pdu.ts';
import { encodeConfirmedRequest } from '../../src/mms/mms_services.ts';
import { readAnswerAt, type ReadAnswer } from '../../src/mms/read_answer.ts';
import { confirmed, mmsFrame, readResponse } from '../client/pdus.ts';
import { toHex } from './helpers.ts';

/** What `readAnswerAt` finds in a whole frame (the TSDU after TPKT and COTP), at an offset inside a larger buffer. */
function inPlace(frame: Uint8Array): { invokeId: number; results: unknown } | undefined {
  const buf = new Uint8Array(frame.length + 10);
  buf.set(frame, 5);
  const answer: ReadAnswer = { invokeId: -1 };
  const results = readAnswerAt(buf, 5 + 7, 5 + frame.length, answer);
  return results === undefined ? undefined : { invokeId: answer.invokeId, results };
}

/** What the layered decoders find in the same frame. */
function layered(frame: Uint8Array): { invokeId: number; results: unknown } | undefined {
  const peeled = peelFrame(frame);
  if (!peeled.ok) throw peeled.error;
  const mms = peeled.value.mms;
  if (mms?.pdu !== 'confirmed-response' || mms.response.service !== 'read') return undefined;
  return { invokeId: mms.invokeId, results: mms.response.results };
}

const bits = (bitLength: number, ...bytes: number[]) => ({ bitLength, bytes: Uint8Array.from(bytes) });
const VALUES: MmsData[][] = [
  [{ type: 'float', value: 1.5, double: false }],
  [{ type: 'float', value: -1234.5678, double: true }],
  [
    { type: 'boolean', value: true },
    { type: 'boolean', value: false },
  ],
  [
    { type: 'integer', value: -1 },
    { type: 'integer', value: 127 },
    { type: 'integer', value: -129 },
    { type: 'integer', value: 2 ** 40 },
    { type: 'integer', value: -(2 ** 47) },
    { type: 'integer', value: 2n ** 60n },
  ],
  [
    { type: 'unsigned', value: 0 },
    { type: 'unsigned', value: 255 },
    { type: 'unsigned', value: 2 ** 47 - 1 },
    { type: 'unsigned', value: 2 ** 53 - 1 },
    { type: 'unsigned', value: 2n ** 64n - 1n },
  ],
  [
    { type: 'bit-string', value: bits(13, 0xff, 0xf8) },
    { type: 'bit-string', value: bits(0) },
  ],
  [{ type: 'utc-time', value: { seconds: 1_700_000_000, fraction: 0xabcdef, quality: 0x0a } }],
  [
    { type: 'visible-string', value: 'text' },
    { type: 'octet-string', value: Uint8Array.of(1, 2, 3) },
  ],
  [
    {
      type: 'structure',
      value: [
        { type: 'float', value: 2.25, double: false },
        { type: 'bit-string', value: bits(13, 0, 0) },
        { type: 'utc-time', value: { seconds: 1, fraction: 2, quality: 3 } },
        {
          type: 'array',
          value: [
            { type: 'integer', value: 1 },
            { type: 'structure', value: [] },
          ],
        },
      ],
    },
  ],
];

t.test('a read answered in the usual form is decoded in place as the layers decode it', async (t) => {
  for (const [i, values] of VALUES.entries()) {
    for (const invokeId of [0, 1, 127, 128, 65535, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]) {
      const frame = mmsFrame(readResponse(invokeId, values));
      const fast = inPlace(frame);
      t.ok(fast, `values ${i}, invoke id ${invokeId}: taken in place`);
      t.same(fast, layered(frame), `values ${i}, invoke id ${invokeId}: the same results`);
    }
  }
  const withErrors = mmsFrame(readResponse(9, [{ error: 10 }, { type: 'float', value: 3, double: false }, { error: 3 }]));
  t.same(inPlace(withErrors), layered(withErrors), 'data access errors among the values');
  const bitString = inPlace(mmsFrame(readResponse(1, [{ type: 'bit-string', value: bits(8, 0x5a) }])));
  if (!bitString) throw new Error('the bit string was not taken in place');
  const bytes = (bitString.results as { data: { value: { bytes: Uint8Array } } }[])[0].data.value.bytes;
  t.equal(bytes.constructor, Uint8Array, "a bit string's octets are a Uint8Array of their own");
});

t.test('a long structure (lengths in the long form) is decoded in place', async (t) => {
  const many: MmsData = { type: 'structure', value: Array.from({ length: 300 }, (_, i) => ({ type: 'unsigned', value: i }) as MmsData) };
  const frame = mmsFrame(readResponse(3, [many, many]));
  t.ok(inPlace(frame));
  t.same(inPlace(frame), layered(frame));
});

t.test('anything but a read answer in the usual form is left to the layers', async (t) => {
  const results = cons('context', 1, prim('context', 7, Uint8Array.of(8, 0x3f, 0x80, 0, 0)));
  const cases: [string, Uint8Array][] = [
    ['a write response', mmsFrame(confirmed(1, cons('context', 5, prim('context', 1, new Uint8Array(0)))))],
    ['a read response with its variable specification', mmsFrame(confirmed(1, cons('context', 4, cons('context', 0), results)))],
    [
      'a confirmed error',
      mmsFrame(cons('context', 2, intTlv('context', 0, 1), cons('context', 2, cons('context', 0, intTlv('context', 7, 2))))),
    ],
    [
      'an invoke id of six octets',
      mmsFrame(cons('context', 1, prim('universal', 2, Uint8Array.of(1, 0, 0, 0, 0, 0)), cons('context', 4, results))),
    ],
    [
      'a field after the read response',
      mmsFrame(cons('context', 1, intTlv('universal', 2, 1), cons('context', 4, results), intTlv('universal', 2, 1))),
    ],
  ];
  for (const [what, frame] of cases) t.equal(inPlace(frame), undefined, what);
  // a PDV naming its transfer syntax, and a session DATA with parameters, are read by the layers only
  const frame = mmsFrame(readResponse(1, [{ type: 'boolean', value: true }]));
  const withParameter = Uint8Array.from(frame);
  withParameter[8] = 1;
  t.equal(inPlace(withParameter), undefined, 'a GIVE TOKENS with a parameter length');
});

t.test('a malformed value in a read answer is refused as the layers refuse it', async (t) => {
  const bad: [string, Uint8Array][] = [
    ['a float of 3 octets', prim('context', 7, Uint8Array.of(8, 1, 2))],
    ['a boolean of 2 octets', prim('context', 3, Uint8Array.of(1, 1))],
    ['a bit string with 9 unused bits', prim('context', 4, Uint8Array.of(9, 0))],
    ['an unknown data tag', prim('context', 30, Uint8Array.of(1))],
    ['an integer of no octets', prim('context', 5, new Uint8Array(0))],
  ];
  for (const [what, value] of bad) {
    const frame = mmsFrame(
      confirmed(1, cons('context', 4, cons('context', 1, cons('context', 2, prim('context', 3, Uint8Array.of(1)), value)))),
    );
    const slow = peelFrame(frame);
    t.notOk(slow.ok, `${what}: the layers refuse it`);
    t.throws(
      () => inPlace(frame),
      slow.ok ? Error : { name: slow.error.name, message: slow.error.message },
      `${what}: refused in place too`,
    );
    t.throws(() => inPlace(frame), CodecError);
  }
});

t.test("a kept request's frame holds the octets of the layered encoders, at every length of its invoke id", async (t) => {
  const service = encodeConfirmedRequest({
    service: 'read',
    specificationWithResult: false,
    variables: { kind: 'variables', names: [{ scope: 'domain', domain: 'simpleIOGenericIO', item: 'GGIO1$MX$AnIn1$mag$f' }] },
  });
  for (const invokeId of [0, 1, 127, 128, 255, 256, 32767, 32768, 8388607, 8388608, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]) {
    const pdu = encodeConfirmedRequestPdu(invokeId, service);
    t.equal(confirmedRequestLength(invokeId, service.length), pdu.length, `invoke id ${invokeId}: its length`);
    t.equal(
      toHex(buildConfirmedRequestFrame(invokeId, service, 8192)!),
      toHex(buildMmsDataFrame(pdu, 8192)!),
      `invoke id ${invokeId}: its octets`,
    );
  }
  const large = new Uint8Array(300).fill(7);
  t.equal(
    toHex(buildConfirmedRequestFrame(5, large, 8192)!),
    toHex(buildMmsDataFrame(encodeConfirmedRequestPdu(5, large), 8192)!),
    'a service of the long length form',
  );
  t.equal(buildConfirmedRequestFrame(1, large, 128), undefined, 'too big for one DT: left to the segmenting path');
});
