/**
 * The file services and ReadJournal, frame by frame: requests as libiec61850's client writes them, the
 * responses as its server writes them, both ways; GeneralizedTime in its forms; malformed answers refused
 * with the stack's own error.
 */
import t from 'tap';
import { cons, prim } from '../../src/mms/ber.ts';
import { boolTlv, intTlv } from '../../src/mms/ber_fields.ts';
import { binaryTimeFromMs, encodeBinaryTime } from '../../src/mms/ber_values.ts';
import {
  decodeFileResponse,
  encodeFileResponse,
  generalizedTimeOf,
  timeOfGeneralized,
  type FileResponse,
} from '../../src/mms/mms_files.ts';
import { encodeReadJournalResponse, type ReadJournalResponse } from '../../src/mms/mms_journal.ts';
import { decodeMmsPdu, encodeMmsPdu, type MmsPdu } from '../../src/mms/mms_pdu.ts';
import type { ConfirmedRequest } from '../../src/mms/mms_services.ts';
import { codecError, fromHex, toHex } from './helpers.ts';

const request = (invokeId: number, r: ConfirmedRequest) => encodeMmsPdu({ pdu: 'confirmed-request', invokeId, request: r });
/** A confirmed-response PDU as a server sends it. */
const response = (invokeId: number, r: FileResponse | ReadJournalResponse) =>
  cons('context', 1, intTlv('universal', 2, invokeId), r.service === 'readJournal' ? encodeReadJournalResponse(r) : encodeFileResponse(r));

t.test('file service requests are the octets libiec61850 sends', async (t) => {
  t.equal(
    toHex(request(1, { service: 'fileOpen', fileName: 'test', initialPosition: 0 })),
    'a011020101bf480ba006190474657374810100',
    'FileOpen: the name in a SEQUENCE OF GraphicString, the position',
  );
  t.equal(toHex(request(2, { service: 'fileRead', frsmId: 1 })), 'a0070201029f490101', 'FileRead: the FRSM id, primitive [73]');
  t.equal(toHex(request(3, { service: 'fileClose', frsmId: 1 })), 'a0070201039f4a0101', 'FileClose: the FRSM id, primitive [74]');
  t.equal(
    toHex(request(4, { service: 'fileDirectory', fileSpecification: 'COMTRADE', continueAfter: 'COMTRADE/A.CFG' })),
    'a024020104bf4d1ea00a1908434f4d5452414445a110190e434f4d54524144452f412e434647',
    'FileDirectory: specification [0], continueAfter [1]',
  );
  t.equal(toHex(request(5, { service: 'fileDirectory' })), 'a006020105bf4d00', 'the root: no specification');
  t.equal(
    toHex(request(6, { service: 'fileDelete', fileName: 'test' })),
    'a00c020106bf4c06190474657374',
    'FileDelete: the name straight inside [76], as libiec61850 writes it',
  );
});

t.test('every file and journal request reads back as sent', async (t) => {
  const requests: ConfirmedRequest[] = [
    { service: 'fileOpen', fileName: 'COMTRADE/DR_0001.DAT', initialPosition: 1000 },
    { service: 'fileRead', frsmId: 70000 },
    { service: 'fileClose', frsmId: 3 },
    { service: 'fileDelete', fileName: 'COMTRADE/DR_0001.CFG' },
    { service: 'fileDirectory' },
    { service: 'fileDirectory', fileSpecification: '/COMTRADE/' },
    { service: 'fileDirectory', continueAfter: 'x' },
    {
      service: 'readJournal',
      journal: { scope: 'domain', domain: 'LD0', item: 'LLN0$EventLog' },
      start: { time: binaryTimeFromMs(Date.UTC(2026, 0, 1)) },
      stop: { time: binaryTimeFromMs(Date.UTC(2026, 0, 2)) },
    },
    {
      service: 'readJournal',
      journal: { scope: 'domain', domain: 'LD0', item: 'LLN0$EventLog' },
      after: { time: binaryTimeFromMs(Date.UTC(2026, 0, 1, 12)), entry: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8) },
    },
    {
      service: 'readJournal',
      journal: { scope: 'domain', domain: 'LD0', item: 'LLN0$EventLog' },
      start: { entry: Uint8Array.of(9) },
      stop: { count: 10 },
      variables: ['LD0/GGIO1$ST$Ind1$stVal'],
    },
  ];
  for (const r of requests) {
    const pdu: MmsPdu = { pdu: 'confirmed-request', invokeId: 7, request: r };
    t.same(decodeMmsPdu(encodeMmsPdu(pdu)), pdu, r.service);
  }
});

t.test('ReadJournal by time is the request libiec61850 sends', async (t) => {
  const at = binaryTimeFromMs(Date.UTC(2026, 10, 20, 10));
  const time = toHex(encodeBinaryTime(at));
  const bytes = request(1, {
    service: 'readJournal',
    journal: { scope: 'domain', domain: 'LD', item: 'LLN0$Log' },
    start: { time: at },
    stop: { time: at },
  });
  // journalName [0] { domain-specific [1] { VisibleString, VisibleString } }, start [1] { [0] TimeOfDay }, stop [2] { [0] TimeOfDay }
  t.equal(toHex(bytes), `a02c020101bf4126a010a10e1a024c441a084c4c4e30244c6f67a1088006${time}a2088006${time}`);
});

t.test('file responses as libiec61850 writes them read back', async (t) => {
  const responses: FileResponse[] = [
    {
      service: 'fileDirectory',
      entries: [
        { name: 'COMTRADE/DR_0001.CFG', size: 812, lastModified: '2026-11-20T10:00:00.250Z' },
        { name: 'COMTRADE/DR_0001.DAT', size: 4_000_000, lastModified: '2026-11-20T10:00:01.000Z' },
      ],
      moreFollows: true,
    },
    { service: 'fileDirectory', entries: [], moreFollows: false },
    { service: 'fileOpen', frsmId: 1, size: 5, lastModified: '2026-01-01T00:00:00.000Z' },
    { service: 'fileRead', data: Uint8Array.of(1, 2, 3), moreFollows: true },
    { service: 'fileRead', data: new Uint8Array(0), moreFollows: false },
    { service: 'fileClose' },
    { service: 'fileDelete' },
  ];
  for (const r of responses) {
    const bytes = response(9, r);
    t.same(decodeMmsPdu(bytes), { pdu: 'confirmed-response', invokeId: 9, response: r }, r.service);
  }
  // libiec61850's server: a FileRead that ends carries moreFollows FALSE; its directory wraps the entries in a SEQUENCE
  t.match(toHex(response(1, { service: 'fileRead', data: Uint8Array.of(0xaa), moreFollows: false })), /bf49068001aa810100$/);
  t.equal(
    toHex(response(1, { service: 'fileDelete' })),
    'a1060201019f4c00',
    "FileDelete's answer: an empty [76], as libiec61850's server sends it",
  );
  t.match(
    toHex(response(1, { service: 'fileDirectory', entries: [{ name: 'a', size: 1 }], moreFollows: false })),
    /bf4d10a00e300c300aa003190161a103800101$/,
  );
});

t.test('a directory whose entries sit straight in [0], or whose time has no zone or fraction, still reads', async (t) => {
  const entry = cons(
    'universal',
    16,
    cons('context', 0, prim('universal', 25, new TextEncoder().encode('R1.CFG'))),
    cons('context', 1, intTlv('context', 0, 10), prim('context', 1, new TextEncoder().encode('20261120100000'))),
  );
  const decoded = decodeFileResponse({ cls: 'context', constructed: true, tag: 77, value: cons('context', 0, entry) });
  t.same(decoded, {
    service: 'fileDirectory',
    entries: [{ name: 'R1.CFG', size: 10, lastModified: '2026-11-20T10:00:00.000Z' }],
    moreFollows: false,
  });
  t.equal(timeOfGeneralized('20261120100000.5+0100'), '2026-11-20T09:00:00.500Z');
  t.equal(timeOfGeneralized('2026112010'), '2026-11-20T10:00:00.000Z');
  t.equal(timeOfGeneralized('yesterday'), undefined, 'a time that is none costs only the time');
  t.equal(generalizedTimeOf('2026-11-20T10:00:00.250Z'), '20261120100000.250Z');
});

t.test('malformed file and journal answers are refused with a CodecError', async (t) => {
  const respond = (service: Uint8Array) => () => decodeMmsPdu(cons('context', 1, intTlv('universal', 2, 1), service));
  t.equal(codecError(respond(cons('context', 72, intTlv('context', 0, 1)))).code, 'bad_response', 'FileOpen without attributes');
  t.equal(codecError(respond(cons('context', 73, boolTlv('context', 1, false)))).code, 'bad_response', 'FileRead without data');
  t.equal(
    codecError(respond(cons('context', 65, cons('context', 0, cons('universal', 16, prim('context', 0, Uint8Array.of(1))))))).code,
    'bad_response',
    'a journal entry without content',
  );
  t.ok(codecError(respond(fromHex('bf4d03a00130'))), 'a truncated directory');
});
