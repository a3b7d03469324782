/**
 * The browse tree: plain JSON, with MMS references, data sets, control blocks and addresses where an
 * engineer looks for them. (That the protocol service answers it as the API's schema says is tested there.)
 */
import t from 'tap';
import { parseScl, toBrowseTree, type SclModel } from '../../src/scl/mod.ts';
import { haveSharedScl, sclText, sharedScl, validParts } from './fixtures.ts';

async function modelOf(text: string | Uint8Array): Promise<SclModel> {
  const result = await parseScl(text);
  if (!result.ok) throw new Error(JSON.stringify(result.report.errors));
  return result.model;
}

t.test('the tree of the fixture survives a JSON round trip unchanged', async (t) => {
  const tree = toBrowseTree(await modelOf(sclText()));
  t.same(JSON.parse(JSON.stringify(tree)), tree);
});

t.test('the tree lists IEDs → logical devices → logical nodes → data objects with FCs, types and references', async (t) => {
  const tree = toBrowseTree(await modelOf(sclText()));
  const [ied] = tree.ieds;
  t.match(ied, {
    name: 'relay1',
    manufacturer: 'ACME',
    accessPoints: [{ name: 'S1', subNetwork: 'station', address: { IP: '192.0.2.10', 'MMS-Port': '102', 'OSI-TSEL': '0001' } }],
  });
  const [ld] = ied.logicalDevices;
  t.match(ld, { name: 'Feeder1Ctrl', inst: 'CTRL', accessPoint: 'S1' });
  const ggio = ld.logicalNodes[1];
  t.same(
    ggio.dataObjects.map((d) => [d.name, d.cdc, d.type, d.fcs]),
    [
      ['Ind1', 'SPS', 'T_SPS', ['ST']],
      ['SPCSO1', 'SPC', 'T_SPC', ['CF', 'ST']],
      ['AnIn1', 'MV', 'T_MV', ['MX']],
    ],
  );
  t.same(ggio.dataObjects[2].attributes, [
    { name: 'mag', fc: 'MX', bType: 'Struct', type: 'T_AV', ref: 'Feeder1Ctrl/GGIO1$MX$AnIn1$mag' },
    { name: 'mag.f', fc: 'MX', bType: 'FLOAT32', ref: 'Feeder1Ctrl/GGIO1$MX$AnIn1$mag$f' },
  ]);
  t.match(ggio.dataObjects[1].attributes[1], {
    name: 'ctlModel',
    type: 'CtlModel',
    ref: 'Feeder1Ctrl/GGIO1$CF$SPCSO1$ctlModel',
    value: 'direct-with-normal-security',
  });
  const lln0 = ld.logicalNodes[0];
  t.same(
    lln0.dataSets[0].members.map((m) => m.ref),
    ['Feeder1Ctrl/GGIO1$ST$Ind1$stVal', 'Feeder1Ctrl/GGIO1$ST$Ind1'],
  );
  t.match(lln0.reportControls[0], {
    trgOps: ['dchg', 'qchg', 'gi'],
    optFields: ['seqNum', 'timeStamp', 'entryID', 'bufOvfl'],
    instances: [{ name: 'brcbEvents01', ref: 'Feeder1Ctrl/LLN0$BR$brcbEvents01' }],
  });
  t.match(lln0.gooseControls[0], { ref: 'Feeder1Ctrl/LLN0$GO$gcb1', address: { 'MAC-Address': '01-0C-CD-01-00-01', APPID: '0001' } });
  t.same(
    tree.enumTypes.map((e) => e.id),
    ['Mod', 'CtlModel'],
  );
});

t.test('one IED can be asked for; the subnetworks mark which connected IEDs the file describes', async (t) => {
  const communication = validParts.communication.replace(
    '</SubNetwork>',
    '<ConnectedAP iedName="hmi" apName="A1"><Address><P type="IP">192.0.2.99</P></Address></ConnectedAP></SubNetwork>',
  );
  const model = await modelOf(sclText({ communication }));
  t.same(toBrowseTree(model, { iedName: 'nobody' }).ieds, []);
  t.equal(toBrowseTree(model, { iedName: 'relay1' }).ieds.length, 1);
  t.same(
    toBrowseTree(model).subNetworks[0].connectedAPs.map((c) => [c.iedName, c.described]),
    [
      ['relay1', true],
      ['hmi', false],
    ],
  );
});

t.test('every shared SCL file gives a tree that is plain JSON', { skip: !haveSharedScl }, async (t) => {
  for (const name of [
    'simpleIO_direct_control.cid',
    'simpleIO_control_tests.cid',
    'cid_example_deadband.cid',
    'sampleModel.icd',
    'complexModel.icd',
    'sv.icd',
  ]) {
    const tree = toBrowseTree(await modelOf(await sharedScl(name)));
    t.same(JSON.parse(JSON.stringify(tree)), tree, name);
  }
  const basic = toBrowseTree(await modelOf(await sharedScl('simpleIO_direct_control.cid')));
  const ggio = basic.ieds[0].logicalDevices[0].logicalNodes[2];
  t.match(ggio.dataObjects.find((d) => d.name === 'Ind1')?.attributes[0], {
    name: 'stVal',
    fc: 'ST',
    bType: 'BOOLEAN',
    ref: 'simpleIOGenericIO/GGIO1$ST$Ind1$stVal',
  });
  t.same(
    basic.ieds[0].logicalDevices[0].logicalNodes[0].reportControls.map((r) => r.instances.length),
    [1, 1, 1, 1, 3, 3],
  );
});
