/**
 * The captured libiec61850 sessions in ../shared/iec61850: every frame peels to its layers, every MMS PDU
 * decodes, the association request this stack builds is the captured one byte for byte, and the reads,
 * writes and reports carry the names and values the server sent.
 */
import t from 'tap';
import { binaryTimeToMs, bitsOf } from '../../src/mms/ber_values.ts';
import { CodecError } from '../../src/mms/codec_error.ts';
import { buildAssociationRequest, buildConnectionRequest, peelFrame, peelTsdu, type PeeledFrame } from '../../src/mms/frames.ts';
import { dataToPlain } from '../../src/mms/mms_data.ts';
import { decodeMmsPdu, type MmsPdu } from '../../src/mms/mms_pdu.ts';
import { createTpktDeframer } from '../../src/mms/tpkt.ts';
import { capturedFrames, haveCaptures, outcome, toHex, type CapturedFrame } from './helpers.ts';

const skip = haveCaptures ? false : 'the shared captures (../shared/iec61850) are not beside this clone';
const frames = capturedFrames();
const basic = frames.filter((f) => f.file === 'capture-basic-io.log');
const unique = [...new Map(frames.map((f) => [toHex(f.bytes), f])).values()];

function peel(f: CapturedFrame): PeeledFrame {
  const result = peelFrame(f.bytes);
  if (!result.ok) throw new Error(`${f.file}:${f.line}: ${result.error.message}`);
  return result.value;
}

const mmsFrames = () => basic.filter((f) => peel(f).mms !== undefined).map((f) => mmsOf(f));
const mmsOf = (f: CapturedFrame): MmsPdu => {
  const mms = peel(f).mms;
  if (!mms) throw new Error(`${f.file}:${f.line} carries no MMS PDU`);
  return mms;
};
const responseOf = (invokeId: number) => mmsFrames().find((p) => p.pdu === 'confirmed-response' && p.invokeId === invokeId);
const plainResults = (p: MmsPdu | undefined) => {
  if (p?.pdu === 'confirmed-response' && p.response.service === 'read')
    return p.response.results.map((r) => (r.ok ? dataToPlain(r.data) : r.errorText));
  if (p?.pdu === 'information-report') return p.report.results.map((r) => (r.ok ? dataToPlain(r.data) : r.errorText));
  throw new Error('not a read response or report');
};

t.test('every line of every capture is a whole frame of the length it states', { skip }, async (t) => {
  t.ok(frames.length >= 200, `${frames.length} frames`);
  t.same([...new Set(frames.map((f) => f.file))], ['capture-basic-io.log', 'capture-control.log']);
  for (const f of frames) t.equal(f.bytes.length, f.length, `${f.file}:${f.line}`);
});

t.test('every captured frame peels: CR/CC stop at COTP, every DT reaches an MMS PDU', { skip }, async (t) => {
  const tops = new Map<string, number>();
  for (const f of frames) {
    const result = peelFrame(f.bytes);
    t.ok(result.ok, `${f.file}:${f.line} ${result.ok ? '' : result.error.message}`);
    if (!result.ok) continue;
    const p = result.value;
    tops.set(`${p.cotp.kind}/${p.top}`, (tops.get(`${p.cotp.kind}/${p.top}`) ?? 0) + 1);
    if (p.cotp.kind === 'DT') t.ok(p.mms, `${f.file}:${f.line} has an MMS PDU`);
  }
  t.same([...tops.keys()].sort(), ['CC/cotp', 'CR/cotp', 'DT/mms']);
});

t.test('the association request built with the capture parameters is the captured 187-byte frame', { skip }, async (t) => {
  const captured = frames.filter((f) => f.direction === 'C->S' && f.length === 187);
  t.ok(captured.length > 1);
  for (const f of captured) t.equal(toHex(buildAssociationRequest()), toHex(f.bytes), `${f.file}:${f.line}`);
  const cr = frames.filter((f) => f.direction === 'C->S' && peel(f).cotp.kind === 'CR');
  for (const f of cr) t.equal(toHex(buildConnectionRequest()), toHex(f.bytes));
});

t.test('the association request and answer decode layer by layer', { skip }, async (t) => {
  const request = peel(basic.find((f) => f.length === 187)!);
  t.match(request, { top: 'mms', cotp: { kind: 'DT', eot: true }, session: { kind: 'connect', version: 2, userRequirements: 2 } });
  t.match(request.presentation, {
    kind: 'CP',
    contexts: [
      { id: 1, abstractSyntax: '2.2.1.0.1', transferSyntaxes: ['2.1.1'] },
      { id: 3, abstractSyntax: '1.0.9506.2.1' },
    ],
  });
  t.match(request.acse, {
    kind: 'AARQ',
    applicationContext: '1.0.9506.2.3',
    calledApTitle: '1.1.1.999.1',
    calledAeQualifier: 12,
    callingApTitle: '1.1.1.999',
    callingAeQualifier: 12,
  });
  t.match(request.mms, { pdu: 'initiate-request', localDetail: 65000, maxServOutstandingCalling: 5, nestingLevel: 10, version: 1 });
  const answer = peel(basic.find((f) => f.direction === 'S->C' && f.length === 143)!);
  t.match(answer.presentation, { kind: 'CPA', results: [{ result: 0, resultText: 'acceptance', transferSyntax: '2.1.1' }, { result: 0 }] });
  t.match(answer.acse, { kind: 'AARE', result: 0, resultText: 'accepted', diagnostic: { source: 'service-user', code: 0 } });
  t.match(answer.mms, { pdu: 'initiate-response', localDetail: 65000, maxServOutstandingCalled: 5, nestingLevel: 10, version: 1 });
  if (answer.mms?.pdu === 'initiate-response') t.equal(answer.mms.servicesSupported.bitLength, 85);
});

t.test('the read of AnIn1.mag.f names the variable and answers a float', { skip }, async (t) => {
  const [request] = mmsFrames();
  t.match(request, { pdu: 'initiate-request' });
  const read = mmsFrames().find((p) => p.pdu === 'confirmed-request' && p.invokeId === 1);
  t.same(read, {
    pdu: 'confirmed-request',
    invokeId: 1,
    request: {
      service: 'read',
      specificationWithResult: false,
      variables: { kind: 'variables', names: [{ scope: 'domain', domain: 'simpleIOGenericIO', item: 'GGIO1$MX$AnIn1$mag$f' }] },
    },
  });
  const answer = responseOf(1);
  t.match(answer, { response: { service: 'read', results: [{ ok: true, data: { type: 'float', double: false } }] } });
  t.equal(Math.fround(plainResults(answer)[0] as number), Math.fround(-0.6391589641571045));
});

t.test('the writes carry their names and values and every one succeeds', { skip }, async (t) => {
  const requests = mmsFrames().filter((p) => p.pdu === 'confirmed-request' && p.request.service === 'write');
  t.equal(requests.length, 3);
  t.match(requests[0], {
    invokeId: 2,
    request: { variables: { names: [{ item: 'GGIO1$DC$NamPlt$vendor' }] }, data: [{ type: 'visible-string', value: 'libiec61850.com' }] },
  });
  const rcb = requests[1].pdu === 'confirmed-request' && requests[1].request.service === 'write' ? requests[1].request : undefined;
  t.same(rcb?.variables.kind === 'variables' && rcb.variables.names.map((n) => n.scope === 'domain' && n.item), [
    'LLN0$RP$EventsRCB01$TrgOps',
    'LLN0$RP$EventsRCB01$IntgPd',
    'LLN0$RP$EventsRCB01$RptEna',
  ]);
  t.same(rcb?.data.map(dataToPlain), ['000111', 5000, true]);
  t.match(requests[2], { invokeId: 6, request: { data: [{ type: 'boolean', value: true }] } });
  t.same(responseOf(5), {
    pdu: 'confirmed-response',
    invokeId: 5,
    response: { service: 'write', results: [{ ok: true }, { ok: true }, { ok: true }] },
  });
  t.match(responseOf(2), { response: { service: 'write', results: [{ ok: true }] } });
});

t.test('the data-set read names the list and the report block read answers its attributes', { skip }, async (t) => {
  t.match(responseOf(3), { response: { variables: { kind: 'list', name: { domain: 'simpleIOGenericIO', item: 'LLN0$Events' } } } });
  t.same(plainResults(responseOf(3)), [true, false, true, false]);
  t.same(plainResults(responseOf(4)), [
    ['Events1', false, false, 'simpleIOGenericIO/LLN0$Events', 1, '0111100010', 50, 13, '000111', 5000, false],
  ]);
});

t.test('the information reports are RPT with the data set values, GI then integrity', { skip }, async (t) => {
  const reportFrames = basic.filter((f) => peel(f).mms?.pdu === 'information-report');
  const reports = reportFrames.map((f) => mmsOf(f));
  t.equal(reports.length, 2);
  for (const [i, report] of reports.entries()) {
    if (report.pdu !== 'information-report') continue;
    t.same(report.report.variables, { kind: 'list', name: { scope: 'vmd', item: 'RPT' } });
    const values = plainResults(report);
    t.same(values.slice(0, 3), ['Events1', '0111100010', i]);
    t.same(values.slice(4, 11), ['simpleIOGenericIO/LLN0$Events', 1, '1111', true, false, true, false]);
    const reason = i === 0 ? '000001' : '000010';
    t.same(values.slice(11), [reason, reason, reason, reason], i === 0 ? 'general interrogation' : 'integrity');
    const time = report.report.results[3];
    t.ok(time.ok && time.data.type === 'binary-time');
    const stamp = time.ok && time.data.type === 'binary-time' ? binaryTimeToMs(time.data.value) : undefined;
    t.ok(stamp !== undefined && Math.abs(stamp - reportFrames[i].time) < 5, 'the entry time is the capture time, within 5 ms');
  }
  const first = reports[0].pdu === 'information-report' ? reports[0].report.results[1] : undefined;
  t.same(
    first?.ok && first.data.type === 'bit-string' && bitsOf(first.data.value),
    [false, true, true, true, true, false, false, false, true, false],
    'OptFlds: seqNum, time, reason, data set, confRev',
  );
});

t.test('the control capture asks the VMD for its domains and gets the one logical device', { skip }, async (t) => {
  const control = frames.filter((f) => f.file === 'capture-control.log' && peel(f).mms?.pdu.startsWith('confirmed'));
  t.ok(control.length > 0);
  for (const f of control) {
    const p = mmsOf(f);
    if (p.pdu === 'confirmed-request') t.same(p.request, { service: 'getNameList', objectClass: 'domain', scope: { scope: 'vmd' } });
    else
      t.same(p, {
        pdu: 'confirmed-response',
        invokeId: 1,
        response: { service: 'getNameList', identifiers: ['simpleIOGenericIO'], moreFollows: false },
      });
  }
});

t.test('every prefix of every captured frame is refused with a CodecError, at every layer', { skip }, async (t) => {
  const wrong: string[] = [];
  let checked = 0;
  for (const f of unique) {
    for (let n = 0; n < f.bytes.length; n++) {
      const result = peelFrame(f.bytes.subarray(0, n));
      if (result.ok || !(result.error instanceof CodecError)) wrong.push(`${f.file}:${f.line} prefix ${n} was not refused`);
      if (createTpktDeframer().push(f.bytes.slice(0, n)).length !== 0) wrong.push(`${f.file}:${f.line} prefix ${n} made a frame`);
      checked++;
    }
    const whole = peel(f);
    if (whole.cotp.kind !== 'DT') continue;
    const tsdu = whole.cotp.data;
    for (let n = 0; n < tsdu.length; n++) {
      if (outcome(() => peelTsdu(tsdu.subarray(0, n))) === 'ok') wrong.push(`${f.file}:${f.line} TSDU prefix ${n} was accepted`);
      checked++;
    }
  }
  t.same(wrong, []);
  t.ok(checked > 1000, `${checked} prefixes`);
});

t.test('every captured frame with any one byte altered peels or is refused with a CodecError', { skip }, async (t) => {
  const codes = new Set<string>();
  for (const f of unique) {
    for (let i = 0; i < f.bytes.length; i++) {
      for (const value of [0x00, 0x7f, 0x80, 0x84, 0xff, (f.bytes[i] + 1) & 0xff]) {
        const bytes = f.bytes.slice();
        bytes[i] = value;
        const result = peelFrame(bytes);
        if (!result.ok) codes.add(`${result.error.layer}/${result.error.code}`);
      }
    }
  }
  t.ok(codes.has('ber/length_past_end'), 'lying BER lengths are caught');
  t.ok(codes.has('tpkt/bad_version'));
  t.ok(codes.size > 10, [...codes].sort().join(' '));
});

t.test('each MMS PDU of the captures decodes on its own and every prefix of it is refused', { skip }, async (t) => {
  const pdus = unique.flatMap((f) => {
    const p = peel(f);
    const pdv = p.presentation && 'userData' in p.presentation ? p.presentation.userData[0] : undefined;
    return pdv && pdv.contextId === 3 ? [pdv.data] : [];
  });
  t.ok(pdus.length > 15);
  const accepted: string[] = [];
  for (const pdu of pdus) {
    t.equal(
      outcome(() => decodeMmsPdu(pdu)),
      'ok',
    );
    for (let n = 0; n < pdu.length; n++)
      if (outcome(() => decodeMmsPdu(pdu.subarray(0, n))) === 'ok') accepted.push(`${toHex(pdu)} cut at ${n}`);
  }
  t.same(accepted, []);
});
