/**
 * The real-world SCL files in ../shared/scl: each parses with the model, errors and warnings it deserves.
 */
import t from 'tap';
import { parseScl, toBrowseTree, type SclModel } from '../../src/scl/mod.ts';
import { haveSharedScl, sharedScl } from './fixtures.ts';

const skip = haveSharedScl ? false : 'the shared SCL files are not beside this clone';
const parse = async (name: string) => parseScl(await sharedScl(name));
const model = async (name: string): Promise<SclModel> => {
  const result = await parse(name);
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.report.errors)}`);
  return result.model;
};
const lds = (m: SclModel) => m.ieds.flatMap((i) => i.accessPoints.flatMap((ap) => ap.server?.logicalDevices ?? []));
const lns = (m: SclModel) => lds(m).flatMap((ld) => ld.logicalNodes);
const refs = (m: SclModel) => {
  const lnsOf = toBrowseTree(m).ieds.flatMap((i) => i.logicalDevices.flatMap((ld) => ld.logicalNodes));
  return new Set(lnsOf.flatMap((ln) => ln.dataObjects.flatMap((d) => d.attributes.map((a) => a.ref))));
};

t.test(
  'simpleIO_direct_control.cid reads as the basic IO server: one LD, datasets, buffered and unbuffered reports',
  { skip },
  async (t) => {
    const m = await model('simpleIO_direct_control.cid');
    t.equal(m.edition, '2003');
    t.same(
      m.ieds.map((i) => i.name),
      ['simpleIO'],
    );
    t.same(
      lds(m).map((ld) => ld.domain),
      ['simpleIOGenericIO'],
    );
    t.same(
      lns(m).map((ln) => ln.name),
      ['LLN0', 'LPHD1', 'GGIO1'],
    );
    const lln0 = lns(m)[0];
    t.same(
      lln0.dataSets.map((d) => [d.name, d.members.length]),
      [
        ['Events', 4],
        ['Events2', 4],
        ['Measurements', 8],
      ],
    );
    t.same(lln0.dataSets[2].members[0], {
      ldInst: 'GenericIO',
      prefix: '',
      lnClass: 'GGIO',
      lnInst: '1',
      doName: 'AnIn1',
      daName: 'mag.f',
      fc: 'MX',
    });
    t.equal(lln0.reportControls.length, 6);
    const brcb = lln0.reportControls.find((r) => r.name === 'EventsBRCB')!;
    t.match(brcb, {
      buffered: true,
      rptID: 'Events2',
      datSet: 'Events',
      confRev: 1,
      intgPd: 1000,
      bufTime: 50,
      max: 1,
      instances: ['EventsBRCB01'],
    });
    t.same(brcb.trgOps, { dchg: false, qchg: false, dupd: false, period: true, gi: true });
    t.match(brcb.optFields, { seqNum: true, timeStamp: true, dataSet: true, reasonCode: true, configRef: true, entryID: false });
    t.same(lln0.reportControls.find((r) => r.name === 'EventsIndexed')!.instances, [
      'EventsIndexed01',
      'EventsIndexed02',
      'EventsIndexed03',
    ]);
    t.match(lln0.reportControls.find((r) => r.name === 'EventsRCBPreConf')!.clients, [
      { iedName: 'remoteClient', ldInst: 'LD0', lnClass: 'IHMI', lnInst: '1' },
    ]);
    t.same(
      lns(m)[2].values.find((v) => v.path === 'SPCSO1.ctlModel'),
      { path: 'SPCSO1.ctlModel', value: 'direct-with-normal-security', fc: 'CF' },
    );
    const all = refs(m);
    for (const ref of [
      'simpleIOGenericIO/GGIO1$ST$Ind1$stVal',
      'simpleIOGenericIO/GGIO1$MX$AnIn1$mag$f',
      'simpleIOGenericIO/GGIO1$CO$SPCSO1$Oper$ctlVal',
      'simpleIOGenericIO/LLN0$DC$NamPlt$vendor',
    ]) {
      t.ok(all.has(ref), ref);
    }
    const [sn] = m.subNetworks;
    t.equal(sn.name, 'subnetwork1');
    t.same(
      sn.connectedAPs.map((c) => c.iedName),
      ['simpleIO', 'remoteClient'],
    );
    t.same(
      { ...sn.connectedAPs[0].address },
      {
        IP: '0.0.0.0',
        'IP-SUBNET': '255.255.255.0',
        'IP-GATEWAY': '192.168.2.1',
        'OSI-AP-Title': '1,3,9999,33',
        'OSI-AE-Qualifier': '33',
        'OSI-PSEL': '00000001',
        'OSI-SSEL': '0001',
        'OSI-TSEL': '0001',
        'MMS-Port': '102',
      },
    );
  },
);

t.test(
  'simpleIO_direct_control.cid warns about its client ConnectedAP and its edition-2 attributes, without errors',
  { skip },
  async (t) => {
    const { report } = await parse('simpleIO_direct_control.cid');
    t.same(report.errors, []);
    t.same(report.warnings.map((w) => w.message).sort(), [
      'ClientLN@apRef is an edition-2 attribute in an edition-1 (2003) file',
      'ConnectedAP names IED remoteClient, which the file does not describe',
      'ReportControl@indexed is an edition-2 attribute in an edition-1 (2003) file (2 times; the first is shown)',
    ]);
    t.match(
      report.warnings.find((w) => w.message.includes('remoteClient')),
      { line: 20, column: 7, path: '/SCL/Communication/SubNetwork[subnetwork1]/ConnectedAP[remoteClient/accessPoint1]' },
    );
  },
);

t.test('simpleIO_control_tests.cid carries every control model and an indexed report block of two', { skip }, async (t) => {
  const m = await model('simpleIO_control_tests.cid');
  const ggio = lns(m).find((ln) => ln.name === 'GGIO1')!;
  const ctl = Object.fromEntries(ggio.values.filter((v) => v.path.endsWith('.ctlModel')).map((v) => [v.path, v.value]));
  t.equal(ctl['SPCSO2.ctlModel'], 'sbo-with-normal-security');
  t.equal(ctl['SPCSO4.ctlModel'], 'sbo-with-enhanced-security');
  t.same(
    new Set(Object.values(ctl)),
    new Set([
      'status-only',
      'direct-with-normal-security',
      'sbo-with-normal-security',
      'direct-with-enhanced-security',
      'sbo-with-enhanced-security',
    ]),
  );
  t.same(
    ggio.values.find((v) => v.path === 'SPCSO2.sboTimeout'),
    { path: 'SPCSO2.sboTimeout', value: '2000', fc: 'CF' },
  );
  const rcb = lns(m)[0].reportControls[0];
  t.match(rcb, {
    name: 'ControlEventsRCB',
    buffered: false,
    indexed: true,
    max: 2,
    instances: ['ControlEventsRCB01', 'ControlEventsRCB02'],
  });
  t.equal(lns(m)[0].dataSets[0].members.length, 12);
  t.ok(refs(m).has('simpleIOGenericIO/GGIO1$CO$SPCSO8$SBOw$ctlVal'));
});

t.test('cid_example_deadband.cid is detected as edition 2 (2007A) and keeps its deadband settings', { skip }, async (t) => {
  const result = await parse('cid_example_deadband.cid');
  t.same(result.report, { edition: '2007A', errors: [], warnings: [] }, 'starts with a BOM and still reads cleanly');
  const m = await model('cid_example_deadband.cid');
  t.match(m.ieds[0], { name: 'IED1', originalSclVersion: '2007', originalSclRevision: 'B' });
  t.same(m.header, { id: '', nameStructure: 'IEDName', toolID: 'FUHUA Model Designer ICT' });
  t.same(
    lns(m).map((ln) => ln.name),
    ['LLN0', 'LPHD1', 'AnInGGIO1'],
  );
  const ggio = lns(m)[2];
  t.same(
    ggio.values.filter((v) => v.path.startsWith('AnIn3.')).map((v) => [v.path, v.value, v.fc]),
    [
      ['AnIn3.db', '10000', 'CF'],
      ['AnIn3.zeroDb', '1000', 'CF'],
      ['AnIn3.rangeC.min.f', '-5', 'CF'],
      ['AnIn3.rangeC.max.f', '5', 'CF'],
    ],
  );
  t.same(
    lns(m)[0].reportControls.map((r) => [r.name, r.buffered, r.instances]),
    [
      ['BRCB_Events', true, ['BRCB_Events01', 'BRCB_Events02']],
      ['URCB_Events', false, ['URCB_Events01', 'URCB_Events02']],
    ],
  );
  t.ok(refs(m).has('IED1LD1/AnInGGIO1$CF$AnIn3$rangeC$min$f'));
  t.equal(m.subNetworks[0].connectedAPs[0].address['OSI-AP-Title'], '1,1,1,999,1');
});

t.test('sampleModel.icd has six logical nodes and warns only about the 7-420 class SCA', { skip }, async (t) => {
  const result = await parse('sampleModel.icd');
  t.equal(result.ok, true);
  t.same(result.report.errors, []);
  t.same(
    result.report.warnings.map((w) => w.message),
    ['unknown common data class SCA (DOType SCA_1_SchdAbsTm)'],
  );
  const m = await model('sampleModel.icd');
  t.same(
    lds(m).map((ld) => ld.domain),
    ['SampleIEDDevice1'],
  );
  t.same(
    lns(m).map((ln) => ln.name),
    ['LLN0', 'LPHD1', 'DGEN1', 'DSCH1', 'MMXU1', 'MMXU2'],
  );
  t.same(
    m.templates.doTypes.find((d) => d.id === 'SCA_1_SchdAbsTm')?.children.map((c) => c.kind === 'DA' && c.count),
    [255, 255],
  );
  t.equal(m.subNetworks.length, 0);
});

t.test('sampleModel_errors.icd is refused: its AccessPoint has no name', { skip }, async (t) => {
  const result = await parse('sampleModel_errors.icd');
  t.equal(result.ok, false);
  t.same(result.report.errors, [
    { message: 'AccessPoint without the required attribute name', line: 20, column: 5, path: '/SCL/IED[SampleIED]/AccessPoint' },
  ]);
});

t.test('complexModel.icd has three logical devices and warns about data set members named by domain', { skip }, async (t) => {
  const result = await parse('complexModel.icd');
  t.same(result.report.errors, []);
  t.equal(result.report.warnings.length, 4);
  t.match(result.report.warnings[0].message, /member ied1Inverter\/LLN0\.Mod\.q \[ST\] names no data of IED ied1/);
  const m = await model('complexModel.icd');
  t.same(
    lds(m).map((ld) => ld.domain),
    ['ied1Inverter', 'ied1Battery', 'ied1Physical_Measurements'],
  );
  t.same(
    lds(m).map((ld) => ld.logicalNodes.length),
    [4, 4, 2],
  );
  t.equal(lns(m).find((ln) => ln.name === 'MMXU1')!.dataSets[0].members.length, 4);
  const all = refs(m);
  t.ok(all.has('ied1Inverter/MMXU1$MX$PhV$phsA$cVal$mag$f'), 'SDOs of a WYE expand into the reference');
  t.ok(all.has('ied1Battery/ZBTC1$CF$Mod$ctlModel'));
});

t.test('sv.icd has a sampled-value block with its multicast address and skips the substation section', { skip }, async (t) => {
  const result = await parse('sv.icd');
  t.same(result.report.errors, []);
  t.same(
    result.report.warnings.map((w) => w.message),
    ['SampledValueControl@smpMod is an edition-2 attribute in an edition-1 (2003) file'],
  );
  const m = await model('sv.icd');
  const svcb = lns(m)[0].sampledValueControls[0];
  t.match(svcb, {
    name: 'MSVCB01',
    datSet: 'PhsMeas1',
    smvID: 'xxxxMUnn01',
    smpRate: 80,
    nofASDU: 1,
    confRev: 1,
    smpMod: 'SmpPerPeriod',
    multicast: true,
  });
  t.match(svcb.opts, { sampleSynchronized: true, refreshTime: false });
  t.same(
    lns(m).map((ln) => ln.name),
    ['LLN0', 'TCTR1', 'TCTR2', 'TCTR3', 'TCTR4', 'TVTR1', 'TVTR2', 'TVTR3', 'TVTR4'],
  );
  t.same(
    { ...m.subNetworks[0].connectedAPs[0].smv[0].address },
    { 'VLAN-ID': '1', 'VLAN-PRIORITY': '4', 'MAC-Address': '01-0c-cd-04-00-01', APPID: '1001' },
  );
  t.equal(m.subNetworks[0].bitRate, '10 b/s');
  const tree = toBrowseTree(m);
  t.match(tree.ieds[0].logicalDevices[0].logicalNodes[0].sampledValueControls[0], {
    ref: 'TEMPLATEMUnn/LLN0$MS$MSVCB01',
    address: { APPID: '1001' },
  });
  t.ok(refs(m).has('TEMPLATEMUnn/TCTR1$CF$Amp$sVC$scaleFactor'));
});

t.test('the browse names the report blocks that libiec61850 servers built from these files expose', { skip }, async (t) => {
  // What GetNameList answered, asked of server_example_basic_io, server_example_control and
  // server_example_deadband (libiec61850 1.5), each built from one of these files.
  const exposed: Record<string, string[]> = {
    'simpleIO_direct_control.cid': [
      'LLN0$BR$EventsBRCB01',
      'LLN0$BR$EventsBRCBPreConf01',
      'LLN0$BR$Measurements01',
      'LLN0$BR$Measurements02',
      'LLN0$BR$Measurements03',
      'LLN0$RP$EventsIndexed01',
      'LLN0$RP$EventsIndexed02',
      'LLN0$RP$EventsIndexed03',
      'LLN0$RP$EventsRCB01',
      'LLN0$RP$EventsRCBPreConf01',
    ],
    'simpleIO_control_tests.cid': ['LLN0$RP$ControlEventsRCB01', 'LLN0$RP$ControlEventsRCB02'],
    'cid_example_deadband.cid': ['LLN0$BR$BRCB_Events01', 'LLN0$BR$BRCB_Events02', 'LLN0$RP$URCB_Events01', 'LLN0$RP$URCB_Events02'],
  };
  for (const [file, names] of Object.entries(exposed)) {
    const lnsOf = toBrowseTree(await model(file)).ieds.flatMap((i) => i.logicalDevices.flatMap((ld) => ld.logicalNodes));
    const browsed = lnsOf.flatMap((ln) => ln.reportControls.flatMap((rc) => rc.instances.map((i) => i.ref.slice(i.ref.indexOf('/') + 1))));
    t.same(browsed.sort(), [...names].sort(), file);
  }
});
