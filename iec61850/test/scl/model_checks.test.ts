/**
 * What the parser extracts from a known file, how it detects the edition, and which findings reject a file
 * (errors) and which are kept with it (warnings).
 */
import t from 'tap';
import { parseScl } from '../../src/scl/mod.ts';
import { toBrowseTree } from '../../src/scl/browse_tree.ts';
import { sclText, validParts, type Parts } from './fixtures.ts';

const parse = (changes: Partial<Parts>) => parseScl(sclText(changes));
const messages = (issues: { message: string }[]) => issues.map((i) => i.message);
const edition1 = 'xmlns="http://www.iec.ch/61850/2003/SCL"';

t.test('the fixture reads cleanly into IED, access point, server, logical devices and nodes', async (t) => {
  const result = await parse({});
  t.same(result.report, { edition: '2007B4', errors: [], warnings: [] });
  if (!result.ok) return;
  const [ied] = result.model.ieds;
  t.match(ied, { name: 'relay1', manufacturer: 'ACME', type: 'R100', configVersion: '2.1', desc: 'feeder relay' });
  const ld = ied.accessPoints[0].server!.logicalDevices[0];
  t.match(ld, { inst: 'CTRL', ldName: 'Feeder1Ctrl', domain: 'Feeder1Ctrl' });
  t.same(
    ld.logicalNodes.map((ln) => [ln.name, ln.lnClass, ln.inst, ln.lnType]),
    [
      ['LLN0', 'LLN0', '', 'T_LLN0'],
      ['GGIO1', 'GGIO', '1', 'T_GGIO'],
    ],
  );
  const rcb = ld.logicalNodes[0].reportControls[0];
  t.match(rcb, { name: 'brcbEvents', buffered: true, rptID: 'ev', datSet: 'ds1', confRev: 3, intgPd: 2000, bufTime: 100, max: 4 });
  t.same(rcb.instances, ['brcbEvents01', 'brcbEvents02', 'brcbEvents03', 'brcbEvents04']);
  t.same(rcb.trgOps, { dchg: true, qchg: true, dupd: false, period: false, gi: true });
  t.same(ld.logicalNodes[0].gooseControls, [
    { name: 'gcb1', type: 'GOOSE', appID: 'relay1/gcb1', datSet: 'ds1', confRev: 1, fixedOffs: false },
  ]);
  t.same(result.model.templates.enumTypes[1].values, [
    { ord: 0, value: 'status-only' },
    { ord: 1, value: 'direct-with-normal-security' },
  ]);
});

t.test('the edition comes from the root: none is 2003, then 2007A, 2007B and 2007B4', async (t) => {
  const editions: [string, string][] = [
    [edition1, '2003'],
    [`${edition1} version="2007" revision="A"`, '2007A'],
    [`${edition1} version="2007" revision="B"`, '2007B'],
    [`${edition1} version="2007" revision="B" release="4"`, '2007B4'],
  ];
  for (const [rootAttributes, edition] of editions) t.equal((await parse({ rootAttributes })).report.edition, edition);
  const odd = await parse({ rootAttributes: `${edition1} version="2031" revision="Z"` });
  t.equal(odd.report.edition, '2031Z');
  t.match(odd.report.warnings, [{ message: 'unknown SCL version 2031Z; read as edition 2' }]);
});

t.test('edition-2 attributes in an edition-1 file are warnings, and ldName still names the domain', async (t) => {
  const result = await parse({ rootAttributes: edition1 });
  t.equal(result.ok, true);
  t.same(messages(result.report.warnings), [
    'LDevice@ldName is an edition-2 attribute in an edition-1 (2003) file',
    'TrgOps@gi is an edition-2 attribute in an edition-1 (2003) file',
  ]);
  t.equal(result.ok && result.model.ieds[0].accessPoints[0].server?.logicalDevices[0].domain, 'Feeder1Ctrl');
});

t.test('without ldName the MMS domain is the IED name followed by the LD inst', async (t) => {
  const result = await parse({ ied: validParts.ied.replace(' ldName="Feeder1Ctrl"', '') });
  t.equal(result.ok && result.model.ieds[0].accessPoints[0].server?.logicalDevices[0].domain, 'relay1CTRL');
});

t.test('a missing Header, an unknown CDC and a malformed boolean are warnings that keep the file', async (t) => {
  const templates = validParts.templates.replaceAll('cdc="SPS"', 'cdc="XYZ"').replace('cdc="SPC"', 'cdc="XYZ"');
  const ied = validParts.ied.replace('buffered="true"', 'buffered="yes"');
  const result = await parse({ header: '', templates, ied });
  t.equal(result.ok, true);
  t.same(messages(result.report.warnings), [
    'ReportControl@buffered="yes" is not a boolean; false is assumed',
    'unknown common data class XYZ (DOType T_SPS) (2 times; the first is shown)',
    'the file has no Header',
  ]);
});

t.test('a ConnectedAP naming an IED the file does not describe is a warning, as CID files list clients', async (t) => {
  const communication = validParts.communication.replace(
    '</SubNetwork>',
    '<ConnectedAP iedName="hmi" apName="A1"><Address><P type="IP">192.0.2.99</P></Address></ConnectedAP></SubNetwork>',
  );
  const result = await parse({ communication });
  t.equal(result.ok, true);
  t.match(result.report.warnings, [
    {
      message: 'ConnectedAP names IED hmi, which the file does not describe',
      path: '/SCL/Communication/SubNetwork[station]/ConnectedAP[hmi/A1]',
    },
  ]);
});

t.test('an unknown access point or control block named by the communication section is a warning', async (t) => {
  const communication = validParts.communication.replace('apName="S1"', 'apName="S9"').replace('cbName="gcb1"', 'cbName="gcb9"');
  const result = await parse({ communication });
  t.equal(result.ok, true);
  t.same(messages(result.report.warnings), [
    'ConnectedAP names AccessPoint S9, which IED relay1 does not have',
    'address for control block CTRL/gcb9, which IED relay1 does not have',
  ]);
});

t.test('a logical node whose LNodeType does not exist is an error that points at the LN', async (t) => {
  const ied = validParts.ied.replace('lnType="T_GGIO"', 'lnType="T_NOPE"');
  const result = await parse({ ied });
  t.equal(result.ok, false);
  const line =
    sclText({ ied })
      .split('\n')
      .findIndex((l) => l.includes('T_NOPE')) + 1;
  t.same(result.report.errors, [
    {
      message: 'LN GGIO1 names LNodeType T_NOPE, which is not defined',
      line,
      column: 1,
      path: '/SCL/IED[relay1]/AccessPoint[S1]/Server/LDevice[CTRL]/LN[GGIO1]',
    },
  ]);
});

t.test('DO, SDO, DA and BDA types that do not exist are errors', async (t) => {
  const templates = validParts.templates
    .replace('<DO name="Ind1" type="T_SPS"/>', '<DO name="Ind1" type="T_MISSING"/>')
    .replace('type="T_AV"/></DOType>', 'type="T_NOAV"/><SDO name="sub" type="T_NOSDO"/></DOType>')
    .replace('type="CtlModel"/></DOType>\n<DOType id="T_SPS"', 'type="NoEnum"/></DOType>\n<DOType id="T_SPS"');
  const result = await parse({ templates });
  t.same(messages(result.report.errors), [
    'DO Ind1 of LNodeType T_GGIO names DOType T_MISSING, which is not defined',
    'DOType T_ENC.ctlModel names EnumType NoEnum, which is not defined',
    'DOType T_MV.mag names DAType T_NOAV, which is not defined',
    'SDO sub of DOType T_MV names DOType T_NOSDO, which is not defined',
  ]);
});

t.test('a control block whose data set does not exist is an error', async (t) => {
  const result = await parse({ ied: validParts.ied.replace('datSet="ds1" confRev="3"', 'datSet="dsGone" confRev="3"') });
  t.same(messages(result.report.errors), ['control block brcbEvents names DataSet dsGone, which LN LLN0 does not have']);
});

t.test('missing required names are errors', async (t) => {
  const ied = validParts.ied.replace('<IED name="relay1"', '<IED').replace('<LN prefix="" lnClass="GGIO"', '<LN prefix=""');
  const templates = validParts.templates.replace('<DA name="q" fc="ST"', '<DA name="q"');
  const result = await parse({ ied, templates });
  t.same(messages(result.report.errors), [
    'IED without the required attribute name',
    'LN without the required attribute lnClass',
    'DA without the required attribute fc',
  ]);
});

t.test('two IEDs of one name, two types of one id and an LDevice without LN0 are errors', async (t) => {
  const second = validParts.ied
    .replace('<LN0 lnClass="LLN0" inst="" lnType="T_LLN0">', '<LN lnClass="LLN0" inst="0" lnType="T_LLN0">')
    .replace('</LN0>', '</LN>');
  const withoutLn0 = second.replace('lnClass="LLN0" inst="0"', 'lnClass="GGIO" inst="9"').replace('lnType="T_LLN0"', 'lnType="T_GGIO"');
  const templates = validParts.templates.replace(
    '</DataTypeTemplates>',
    '<EnumType id="Mod"><EnumVal ord="1">on</EnumVal></EnumType></DataTypeTemplates>',
  );
  const result = await parse({ ied: `${validParts.ied}\n${withoutLn0}`, templates });
  t.equal(result.ok, false);
  t.same(messages(result.report.errors), [
    'EnumType id Mod is defined twice, differently',
    'IED relay1 is given twice',
    'LDevice CTRL has no LN0',
  ]);
});

t.test('a configured value that names no attribute of its type is a warning', async (t) => {
  const result = await parse({
    ied: validParts.ied.replace('<DAI name="ctlModel"><Val>status-only', '<DAI name="ctlModle"><Val>status-only'),
  });
  t.equal(result.ok, true);
  t.same(messages(result.report.warnings), ['LN LLN0: configured value Mod.ctlModle names no attribute of LNodeType T_LLN0']);
});

t.test('report instances: an indexed block gets two-digit instance numbers even when max is 1; others keep their name', async (t) => {
  const ied = validParts.ied.replace('intgPd="2000">', 'intgPd="2000" indexed="false">');
  const result = await parse({ ied });
  t.same(result.ok && result.model.ieds[0].accessPoints[0].server?.logicalDevices[0].logicalNodes[0].reportControls[0].instances, [
    'brcbEvents',
  ]);
  const single = await parse({ ied: validParts.ied.replace('<RptEnabled max="4"', '<RptEnabled max="1"') });
  t.same(single.ok && single.model.ieds[0].accessPoints[0].server?.logicalDevices[0].logicalNodes[0].reportControls[0].instances, [
    'brcbEvents01',
  ]);
  const { reportInstances } = await import('../../src/scl/mod.ts');
  t.same(reportInstances('urcb', true, 1), ['urcb01']);
  t.same(reportInstances('urcb', true, 12).slice(-2), ['urcb11', 'urcb12']);
  t.same(
    [reportInstances('urcb', true, 120)[0], reportInstances('urcb', true, 120)[119]],
    ['urcb01', 'urcb120'],
    'numbered as the device numbers them',
  );
  t.same(reportInstances('urcb', false, 1), ['urcb']);
});

t.test('a type repeated identically is a warning and kept once; repeated with another content it is an error', async (t) => {
  const sps = '<DOType id="T_SPS" cdc="SPS"><DA name="stVal" fc="ST" bType="BOOLEAN"/><DA name="q" fc="ST" bType="Quality"/></DOType>';
  const mod = '<EnumType id="Mod"><EnumVal ord="1">on</EnumVal><EnumVal ord="5">off</EnumVal></EnumType>';
  const repeated = validParts.templates.replace(
    '</DataTypeTemplates>',
    `${sps.replace('cdc="SPS">', 'cdc="SPS" desc="again">')}${mod}</DataTypeTemplates>`,
  );
  const result = await parse({ templates: repeated });
  t.equal(result.ok, true, 'accepted');
  t.same(messages(result.report.warnings), [
    'DOType id T_SPS is defined twice, identically; the first definition is used',
    'EnumType id Mod is defined twice, identically; the first definition is used',
  ]);
  const line =
    sclText({ templates: repeated })
      .split('\n')
      .findIndex((l) => l.includes('desc="again"')) + 1;
  t.match(result.report.warnings[0], { line, path: '/SCL/DataTypeTemplates/DOType[T_SPS]' }, 'pointing at the repeat');
  if (result.ok) {
    t.equal(result.model.templates.doTypes.filter((d) => d.id === 'T_SPS').length, 1, 'the model keeps one');
    t.equal(result.model.templates.enumTypes.filter((e) => e.id === 'Mod').length, 1);
  }
  const conflicting = validParts.templates.replace(
    '</DataTypeTemplates>',
    `${sps.replace('bType="Quality"', 'bType="BOOLEAN"')}</DataTypeTemplates>`,
  );
  const refused = await parse({ templates: conflicting });
  t.equal(refused.ok, false);
  t.same(messages(refused.report.errors), ['DOType id T_SPS is defined twice, differently']);
});

t.test('an empty type id referenced consistently is a warning; an empty reference to nothing, or two empty ids, are errors', async (t) => {
  const emptyEnum = validParts.templates
    .replace('<EnumType id="Mod">', '<EnumType id="">')
    .replace('bType="Enum" type="Mod"', 'bType="Enum" type=""');
  const emptyDo = emptyEnum
    .replace('<DOType id="T_SPS"', '<DOType id=""')
    .replace('<DO name="Ind1" type="T_SPS"/>', '<DO name="Ind1" type=""/>');
  const result = await parse({ templates: emptyDo });
  t.equal(result.ok, true, 'accepted');
  t.same(messages(result.report.errors), []);
  t.same(messages(result.report.warnings), [
    'DOType with an empty id; 1 reference with an empty type name it',
    'EnumType with an empty id; 1 reference with an empty type name it',
  ]);
  if (result.ok) {
    const tree = toBrowseTree(result.model);
    const ggio = tree.ieds[0].logicalDevices[0].logicalNodes.find((ln) => ln.name === 'GGIO1')!;
    t.match(
      ggio.dataObjects.find((d) => d.name === 'Ind1'),
      { cdc: 'SPS', fcs: ['ST'] },
      'the data object of the empty-id type browses with its attributes',
    );
  }
  const dangling = await parse({ templates: validParts.templates.replace('<DO name="Ind1" type="T_SPS"/>', '<DO name="Ind1" type=""/>') });
  t.same(messages(dangling.report.errors), ['DO Ind1 of LNodeType T_GGIO names DOType "" (the empty id), which is not defined']);
  const twoEmpty = emptyDo.replace('<DOType id="T_SPC"', '<DOType id=""');
  const conflict = await parse({ templates: twoEmpty });
  t.equal(conflict.ok, false);
  t.match(messages(conflict.report.errors), ['DOType id "" (the empty id) is defined twice, differently']);
  const missing = await parse({ templates: validParts.templates.replace('<DOType id="T_MV"', '<DOType') });
  t.equal(missing.ok, false, 'a missing id is still an error');
  t.match(messages(missing.report.errors), ['DOType without the required attribute id']);
});
