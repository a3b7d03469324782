/**
 * The simulator against the shared material (skipped when ../shared is absent): the captured libiec61850
 * client frames replayed one by one, each answer decoding, and the control models of
 * simpleIO_control_tests.cid operated.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { dataToPlain, decodeCotp, decodeTpkt, parseScl, peelFrame, utcTimeFromMs, type MmsData } from '@scada/iec61850/wire';
import { startSimulator } from '../src/server.ts';
import { capturedFrames, haveCaptures } from '@scada/testkit/captures';
import { RawClient } from './raw_client.ts';

const SCL = fileURLToPath(new URL('../../../shared/scl/', import.meta.url));
const skip = haveCaptures && existsSync(SCL) ? false : 'the shared captures and SCL files (../shared) are not beside this clone';

async function model(file: string) {
  const result = await parseScl(readFileSync(`${SCL}${file}`));
  if (!result.ok) throw new Error(`${file} refused`);
  return result.model;
}

t.test('every captured client frame of capture-basic-io.log gets answers that decode', { skip }, async (t) => {
  const sim = await startSimulator({ model: await model('simpleIO_direct_control.cid'), port: 0 });
  const c = await RawClient.open(sim.port);
  const frames = capturedFrames().filter((f) => f.file === 'capture-basic-io.log' && f.direction === 'C->S');
  t.ok(frames.length >= 5);
  for (const f of frames) {
    const cotp = decodeCotp(decodeTpkt(f.bytes));
    c.write(f.bytes);
    if (cotp.kind === 'CR') {
      await c.take((r) => r.kind === 'cc');
      continue;
    }
    const sent = peelFrame(f.bytes);
    if (!sent.ok) throw sent.error;
    if (sent.value.acse?.kind === 'AARQ') {
      const aare = await c.take((r) => r.kind === 'tsdu');
      t.equal(
        aare.kind === 'tsdu' && aare.peeled.acse?.kind === 'AARE' && aare.peeled.acse.result,
        0,
        `line ${f.line}: association accepted`,
      );
      continue;
    }
    const mms = sent.value.mms;
    if (mms?.pdu !== 'confirmed-request') continue;
    const answer = await c.take(
      (r) => r.kind === 'tsdu' && (r.peeled.mms?.pdu === 'confirmed-response' || r.peeled.mms?.pdu === 'confirmed-error'),
    );
    if (answer.kind !== 'tsdu') throw new Error('unreachable');
    t.equal(answer.peeled.mms?.pdu, 'confirmed-response', `line ${f.line}: ${mms.request.service} answered`);
    for (const frame of answer.frames) t.ok(peelFrame(frame).ok, `line ${f.line}: the answer frame peels`);
  }
  t.same(
    c.received.filter((r) => r.kind === 'bad'),
    [],
    'nothing undecodable arrived',
  );
  const reports = c.received.filter((r) => r.kind === 'tsdu' && r.peeled.mms?.pdu === 'information-report');
  t.ok(reports.length >= 1, `${reports.length} reports after the captured GI`);
  await c.close();
  await sim.stop();
});

t.test('simpleIO_control_tests.cid: each control model operates SPCSO1..SPCSO4', { skip }, async (t) => {
  const sim = await startSimulator({ model: await model('simpleIO_control_tests.cid'), port: 0 });
  const d = sim.domains[0];
  t.equal(d, 'simpleIOGenericIO');
  const c = await RawClient.associated(sim.port);
  const origin: MmsData = {
    type: 'structure',
    value: [
      { type: 'integer', value: 3 },
      { type: 'octet-string', value: new Uint8Array(0) },
    ],
  };
  const oper = (withOperTm: boolean): MmsData => ({
    type: 'structure',
    value: [
      { type: 'boolean', value: true },
      ...(withOperTm ? [{ type: 'utc-time', value: utcTimeFromMs(0) } as MmsData] : []),
      origin,
      { type: 'unsigned', value: 1 },
      { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      { type: 'boolean', value: false },
      { type: 'bit-string', value: { bitLength: 2, bytes: Uint8Array.of(0) } },
    ],
  });
  const write = async (item: string, value: MmsData) => {
    const r = await c.ok({
      service: 'write',
      variables: { kind: 'variables', names: [{ scope: 'domain', domain: d, item }] },
      data: [value],
    });
    return r.service === 'write' && r.results[0].ok;
  };
  t.ok(await write('GGIO1$CO$SPCSO1$Oper', oper(false)), 'direct');
  await c.ok({
    service: 'read',
    specificationWithResult: false,
    variables: { kind: 'variables', names: [{ scope: 'domain', domain: d, item: 'GGIO1$CO$SPCSO2$SBO' }] },
  });
  t.ok(await write('GGIO1$CO$SPCSO2$Oper', oper(false)), 'SBO');
  t.ok(await write('GGIO1$CO$SPCSO3$Oper', oper(false)), 'direct enhanced');
  await c.report('GGIO1$CO$SPCSO3$Oper');
  t.ok(await write('GGIO1$CO$SPCSO4$SBOw', oper(false)), 'SBOw');
  t.ok(await write('GGIO1$CO$SPCSO4$Oper', oper(false)), 'SBO enhanced');
  for (const n of [1, 2, 3, 4]) t.equal(dataToPlain(sim.value(`${d}/GGIO1$ST$SPCSO${n}$stVal`)), true, `SPCSO${n}`);
  t.ok(await write('GGIO1$CO$SPCSO8$SBOw', oper(true)), 'an Oper with operTm is typed from its DAType');
  await c.close();
  await sim.stop();
});
