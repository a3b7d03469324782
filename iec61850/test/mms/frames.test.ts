/**
 * Whole frames: what the client builds goes through every layer and peels back; frames that carry no MMS
 * PDU say which layer they belong to; and peelFrame answers every input with a value, never a throw.
 */
import t from 'tap';
import { cons } from '../../src/mms/ber.ts';
import { intTlv } from '../../src/mms/ber_fields.ts';
import { aareRefusal, type Aare } from '../../src/mms/acse.ts';
import { CodecError } from '../../src/mms/codec_error.ts';
import { createDtReassembler, decodeCotp, encodeData, segmentData } from '../../src/mms/cotp.ts';
import {
  buildAbort,
  buildAssociationRequest,
  buildConnectionRequest,
  buildMmsDataFrame,
  buildMmsFrames,
  buildReleaseRequest,
  peelFrame,
  peelTsdu,
} from '../../src/mms/frames.ts';
import { objectNameOf } from '../../src/mms/mms_access.ts';
import type { MmsPdu } from '../../src/mms/mms_pdu.ts';
import { encodeAbortPresentation, encodeUserData } from '../../src/mms/presentation.ts';
import { encodeAbort, encodeDataSpdu, encodeFinish } from '../../src/mms/session.ts';
import { decodeTpkt, encodeTpkt } from '../../src/mms/tpkt.ts';
import { fromHex, toHex } from './helpers.ts';

const peeled = (frame: Uint8Array) => {
  const result = peelFrame(frame);
  if (!result.ok) throw result.error;
  return result.value;
};
const frameOf = (spdu: Uint8Array) => encodeTpkt(encodeData(spdu));
/** An SPDU with one user-data parameter (short lengths only). */
const spduWith = (si: number, userData: Uint8Array) => Uint8Array.of(si, userData.length + 2, 0xc1, userData.length, ...userData);
const READ: MmsPdu = {
  pdu: 'confirmed-request',
  invokeId: 42,
  request: {
    service: 'read',
    specificationWithResult: false,
    variables: { kind: 'variables', names: [objectNameOf('LD0/GGIO1$ST$Ind1$stVal')] },
  },
};
/** An AARE rejecting the association: authentication failure. */
const REJECTING_AARE = fromHex('6115a107060528ca220203a203020101a305a10302010d');

t.test('the connection request and association request peel back to their layers', async (t) => {
  t.match(peeled(buildConnectionRequest()), { top: 'cotp', cotp: { kind: 'CR', tpduSize: 8192 } });
  t.match(peeled(buildConnectionRequest({ tpduSize: 1024, srcRef: 7 })), { cotp: { kind: 'CR', srcRef: 7, tpduSize: 1024 } });
  const association = peeled(
    buildAssociationRequest({
      acse: { password: 'secret' },
      sessionSelectors: { called: fromHex('0002') },
      presentationSelectors: { called: fromHex('00000002') },
    }),
  );
  t.match(association, {
    top: 'mms',
    session: { kind: 'connect', calledSelector: fromHex('0002') },
    presentation: { kind: 'CP', calledSelector: fromHex('00000002') },
    acse: { kind: 'AARQ', mechanism: '2.2.3.1' },
    mms: { pdu: 'initiate-request' },
  });
});

t.test('the one-allocation frame of a request holds the octets of the layered encoders, at every length form', async (t) => {
  for (const size of [0, 1, 100, 120, 127, 128, 200, 255, 256, 1000, 8000]) {
    const pdu = Uint8Array.from({ length: size }, (_, i) => i & 0xff);
    const layered = segmentData(encodeDataSpdu(encodeUserData({ contextId: 3, data: pdu })), 8192).map(encodeTpkt);
    const frame = buildMmsDataFrame(pdu, 8192);
    if (layered.length === 1) t.equal(toHex(frame!), toHex(layered[0]), `a PDU of ${size} octets`);
    else t.equal(frame, undefined, `a PDU of ${size} octets needs several DTs`);
  }
  t.equal(buildMmsDataFrame(new Uint8Array(200), 128), undefined, 'too big for the TPDU size: left to the segmenting path');
});

t.test('an MMS PDU is framed in one DT, or in several that reassemble, and peels back', async (t) => {
  const [frame, ...rest] = buildMmsFrames(READ);
  t.equal(rest.length, 0);
  t.match(peeled(frame), {
    top: 'mms',
    cotp: { kind: 'DT', eot: true },
    session: { kind: 'data' },
    presentation: { kind: 'TD', userData: [{ contextId: 3 }] },
    mms: READ,
  });
  const small = buildMmsFrames(READ, 128).concat(buildMmsFrames(READ, 16));
  const reassembler = createDtReassembler();
  const tsdus: Uint8Array[] = [];
  for (const f of small) {
    // peelFrame reads one-DT TSDUs only; a segmented TSDU goes through the reassembler, then peelTsdu
    const dt = decodeCotp(decodeTpkt(f));
    if (dt.kind !== 'DT') throw new Error('not DT');
    if (!dt.eot) t.equal(peeled(f).top, 'cotp', 'a DT without EOT stops at COTP');
    const tsdu = reassembler.push(dt);
    if (tsdu) tsdus.push(tsdu);
  }
  t.equal(tsdus.length, 2);
  for (const tsdu of tsdus) t.same(peelTsdu(tsdu).mms, READ);
});

t.test('release and abort frames peel to RLRQ and ABRT', async (t) => {
  t.equal(toHex(buildReleaseRequest()), '0300001902f0800910c10e610c300a020101a0056203800100');
  t.match(peeled(buildReleaseRequest()), { top: 'acse', session: { kind: 'finish' }, acse: { kind: 'RLRQ', reason: 0 } });
  t.match(peeled(buildAbort()), {
    top: 'acse',
    session: { kind: 'abort' },
    presentation: { kind: 'ARU' },
    acse: { kind: 'ABRT', source: 0 },
  });
});

t.test('frames without MMS data name their layer: CC, DR, ER', async (t) => {
  t.match(peeled(fromHex('0300001611d00001000100c0010dc2020001c1020001')), { top: 'cotp', cotp: { kind: 'CC' } });
  t.match(peeled(encodeTpkt(fromHex('06800001000203'))), { top: 'cotp', cotp: { kind: 'DR', reasonText: 'address unknown' } });
  t.match(peeled(encodeTpkt(fromHex('0470000102'))), { top: 'cotp', cotp: { kind: 'ER', causeText: 'invalid TPDU type' } });
});

t.test('a session REFUSE without user data stops at the session layer', async (t) => {
  t.match(peeled(frameOf(fromHex('0c03320181'))), { top: 'session', session: { kind: 'refuse', reasonText: 'session selector unknown' } });
  t.match(peeled(frameOf(fromHex('1a00'))), { top: 'session', session: { kind: 'abort-accept' } });
});

t.test('a REFUSE with a CPR holding a rejecting AARE says why the association was refused', async (t) => {
  const cpr = cons('universal', 16, intTlv('context', 10, 0), encodeUserData({ contextId: 1, data: REJECTING_AARE }));
  const p = peeled(frameOf(Uint8Array.of(0x0c, cpr.length + 3, 50, cpr.length + 1, 2, ...cpr)));
  t.match(p, {
    top: 'acse',
    session: { kind: 'refuse', reason: 2 },
    presentation: { kind: 'CPR', reasonText: 'reason not specified' },
    acse: { kind: 'AARE', result: 1 },
  });
  t.equal(aareRefusal(p.acse as Aare), 'association rejected (permanent): authentication failure (peer application)');
});

t.test('an ACCEPT carrying a rejecting AARE peels to the AARE and its reason', async (t) => {
  const cpa = cons(
    'universal',
    17,
    cons('context', 0, intTlv('context', 0, 1)),
    cons('context', 2, encodeUserData({ contextId: 1, data: REJECTING_AARE })),
  );
  const p = peeled(frameOf(spduWith(0x0e, cpa)));
  t.match(p, {
    top: 'acse',
    session: { kind: 'accept' },
    presentation: { kind: 'CPA' },
    acse: { kind: 'AARE', resultText: 'rejected (permanent)' },
  });
  t.notOk(p.mms);
});

t.test('DISCONNECT with an RLRE, and ABORT with an ARP, name their layers', async (t) => {
  const rlre = encodeUserData({ contextId: 1, data: fromHex('6303800100') });
  t.match(peeled(frameOf(spduWith(0x0a, rlre))), {
    top: 'acse',
    session: { kind: 'disconnect' },
    acse: { kind: 'RLRE', reasonText: 'normal' },
  });
  t.match(peeled(frameOf(encodeAbort(fromHex('3003800102')))), {
    top: 'presentation',
    presentation: { kind: 'ARP', reasonText: 'unexpected PPDU' },
  });
  t.match(peeled(frameOf(encodeAbort(encodeAbortPresentation(fromHex('6406800101810102'))))), {
    acse: { kind: 'ABRT', sourceText: 'service provider', diagnosticText: 'protocol error' },
  });
  t.match(peeled(frameOf(encodeFinish(encodeUserData()))), { top: 'presentation', presentation: { kind: 'TD', userData: [] } });
});

t.test('a PDV of a context never proposed is refused', async (t) => {
  const result = peelFrame(frameOf(new Uint8Array([1, 0, 1, 0, ...encodeUserData({ contextId: 5, data: fromHex('8b00') })])));
  t.match(result, { ok: false, error: { layer: 'presentation', code: 'unknown_context' } });
});

t.test('peelFrame answers garbage, cut frames and lying lengths with an error value, never a throw', async (t) => {
  const frame = buildMmsFrames(READ)[0];
  const wrong: string[] = [];
  for (let n = 0; n < frame.length; n++) {
    const result = peelFrame(frame.subarray(0, n));
    if (result.ok || !(result.error instanceof CodecError)) wrong.push(`prefix ${n}`);
  }
  let state = 7;
  const random = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) & 0xff;
  for (let i = 0; i < 3000; i++) {
    const bytes = Uint8Array.from({ length: 7 + (i % 60) }, random);
    // a valid header prefix of varying length lets the noise reach the deeper layers
    bytes.set([3, 0, 0, bytes.length, 2, 0xf0, 0x80].slice(0, i % 8));
    const result = peelFrame(bytes);
    if (!result.ok && !(result.error instanceof CodecError)) wrong.push(toHex(bytes));
  }
  t.same(wrong, []);
  t.match(peelFrame(fromHex('0300000702f080')), { ok: false, error: { layer: 'session', code: 'truncated' } });
  t.equal(toHex(decodeTpkt(buildAbort()).subarray(0, 3)), '02f080');
  t.equal(decodeCotp(decodeTpkt(buildReleaseRequest())).kind, 'DT');
});
