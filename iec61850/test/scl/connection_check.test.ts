/**
 * Whether a connection's ip, port and IED agree with its SCL file: every disagreement is one warning.
 */
import t from 'tap';
import { canonicalIp, checkConnection, parseScl, type SclModel } from '../../src/scl/mod.ts';
import { haveSharedScl, sclText, sharedScl, validParts } from './fixtures.ts';

async function modelOf(text: string | Uint8Array): Promise<SclModel> {
  const result = await parseScl(text);
  if (!result.ok) throw new Error(JSON.stringify(result.report.errors));
  return result.model;
}
const codes = (warnings: { code: string }[]) => warnings.map((w) => w.code);

t.test('a connection to the IP and MMS port of the file agrees, named or not', async (t) => {
  const model = await modelOf(sclText());
  t.same(checkConnection(model, { ip: '192.0.2.10', port: 102 }), []);
  t.same(checkConnection(model, { ip: '192.0.2.10', port: 102, iedName: 'relay1' }), []);
  t.same(checkConnection(model, { ip: '192.000.002.010', port: 102 }), [], 'leading zeros are the same address');
});

t.test('another IP or port is a warning each', async (t) => {
  const model = await modelOf(sclText());
  const warnings = checkConnection(model, { ip: '192.0.2.11', port: 3782 });
  t.same(codes(warnings), ['ip_mismatch', 'port_mismatch']);
  t.equal(warnings[0].message, 'the connection uses 192.0.2.11; the SCL file gives IED relay1 192.0.2.10');
  t.equal(warnings[1].message, 'the connection uses port 3782; the SCL file gives IED relay1 MMS port 102');
});

t.test('an IED the file does not describe is a warning', async (t) => {
  t.same(checkConnection(await modelOf(sclText()), { ip: '192.0.2.10', port: 102, iedName: 'relay9' }), [
    { code: 'ied_not_in_scl', message: 'the SCL file does not describe IED relay9' },
  ]);
});

t.test('without an MMS-Port the default 102 is expected', async (t) => {
  const model = await modelOf(sclText({ communication: validParts.communication.replace('<P type="MMS-Port">102</P>', '') }));
  t.same(checkConnection(model, { ip: '192.0.2.10', port: 102 }), []);
  t.match(checkConnection(model, { ip: '192.0.2.10', port: 10102 }), [
    { code: 'port_mismatch', message: /names no MMS port for IED relay1 \(102 by default\)/ },
  ]);
});

t.test('a host name cannot be compared and says so; a file without an address says so too', async (t) => {
  t.same(codes(checkConnection(await modelOf(sclText()), { ip: 'relay1.substation.example', port: 102 })), ['ip_unchecked']);
  const model = await modelOf(sclText({ communication: '' }));
  t.same(codes(checkConnection(model, { ip: '192.0.2.10', port: 102 })), ['no_address']);
});

t.test('with several IEDs the address picks one; when it picks none, the IED must be named', async (t) => {
  const second = validParts.ied.replace('name="relay1"', 'name="relay2"');
  const communication = validParts.communication.replace(
    '</SubNetwork>',
    '<ConnectedAP iedName="relay2" apName="S1"><Address><P type="IP">192.0.2.20</P></Address></ConnectedAP></SubNetwork>',
  );
  const model = await modelOf(sclText({ ied: `${validParts.ied}\n${second}`, communication }));
  t.same(checkConnection(model, { ip: '192.0.2.20', port: 102 }), []);
  t.match(checkConnection(model, { ip: '192.0.2.30', port: 102 }), [
    { code: 'ied_ambiguous', message: /describes 2 IEDs \(relay1, relay2\)/ },
  ]);
  t.same(codes(checkConnection(model, { ip: '192.0.2.10', port: 102, iedName: 'relay2' })), ['ip_mismatch']);
});

t.test('an example file that leaves the address open (0.0.0.0) accepts any IP', { skip: !haveSharedScl }, async (t) => {
  const model = await modelOf(await sharedScl('simpleIO_direct_control.cid'));
  t.same(checkConnection(model, { ip: '10.1.2.3', port: 102 }), [], 'the client ConnectedAP (remoteClient) is not a server');
  t.same(codes(checkConnection(model, { ip: '10.1.2.3', port: 8102 })), ['port_mismatch']);
});

t.test('IP literals are compared in canonical form', async (t) => {
  t.equal(canonicalIp('010.0.0.1'), '10.0.0.1');
  t.equal(canonicalIp('256.0.0.1'), undefined);
  t.equal(canonicalIp('FE80::0001'), canonicalIp('fe80:0:0:0:0:0:0:1'));
  t.equal(canonicalIp('[::1]'), '0:0:0:0:0:0:0:1');
  t.equal(canonicalIp('plc.local'), undefined);
});
