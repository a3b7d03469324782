/**
 * Arrays in SCL: an SDO or an attribute with `count`, the sizes the browse tree shows for them, and data set
 * members that name an array element by its index (`HA.phsAHar(7)`, in doName or daName, as tools write it),
 * checked against the array's size.
 */
import t from 'tap';
import { toBrowseTree } from '../../src/scl/browse_tree.ts';
import { parseScl } from '../../src/scl/mod.ts';

const scl = (members: string) => `<?xml version="1.0" encoding="UTF-8"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL" version="2007" revision="B" release="4">
  <Header id="arrays"/>
  <IED name="HARM"><AccessPoint name="AP1"><Server><LDevice inst="LD0">
    <LN0 lnClass="LLN0" inst="" lnType="T_LLN0"><DataSet name="Har">${members}</DataSet></LN0>
    <LN lnClass="MHAI" inst="1" lnType="T_MHAI" prefix=""/>
  </LDevice></Server></AccessPoint></IED>
  <DataTypeTemplates>
    <LNodeType id="T_LLN0" lnClass="LLN0"><DO name="Mod" type="T_INS"/></LNodeType>
    <LNodeType id="T_MHAI" lnClass="MHAI"><DO name="HA" type="T_HWYE"/><DO name="Crv" type="T_CSD"/></LNodeType>
    <DOType id="T_INS" cdc="INS"><DA name="stVal" bType="INT32" fc="ST"/></DOType>
    <DOType id="T_HWYE" cdc="HWYE"><SDO name="phsAHar" type="T_CMV" count="16"/><DA name="numHar" bType="INT16U" fc="CF"/></DOType>
    <DOType id="T_CMV" cdc="CMV">
      <DA name="cVal" bType="Struct" type="T_Vector" fc="MX"/><DA name="q" bType="Quality" fc="MX"/><DA name="t" bType="Timestamp" fc="MX"/>
    </DOType>
    <DOType id="T_CSD" cdc="CSD"><DA name="crvPts" bType="Struct" type="T_Point" count="8" fc="SP"/></DOType>
    <DAType id="T_AV"><BDA name="f" bType="FLOAT32"/></DAType>
    <DAType id="T_Vector"><BDA name="mag" bType="Struct" type="T_AV"/><BDA name="ang" bType="Struct" type="T_AV"/></DAType>
    <DAType id="T_Point"><BDA name="xVal" bType="FLOAT32"/><BDA name="yVal" bType="FLOAT32"/></DAType>
  </DataTypeTemplates>
</SCL>`;
const fcda = (doName: string, daName: string | undefined, fc: string) =>
  `<FCDA ldInst="LD0" lnClass="MHAI" lnInst="1" doName="${doName}"${daName ? ` daName="${daName}"` : ''} fc="${fc}"/>`;

t.test('an SDO with count is an array, and the browse tree gives the sizes of the arrays of each data object', async (t) => {
  const result = await parseScl(scl(fcda('HA', 'phsAHar(2)', 'MX')));
  if (!result.ok) return t.fail(JSON.stringify(result.report.errors));
  t.same(result.model.templates.doTypes.find((d) => d.id === 'T_HWYE')?.children[0], {
    kind: 'SDO',
    name: 'phsAHar',
    type: 'T_CMV',
    count: 16,
  });
  const ln = toBrowseTree(result.model).ieds[0].logicalDevices[0].logicalNodes[1];
  const [ha, crv] = ln.dataObjects;
  t.same(ha.arrays, [{ name: 'phsAHar', count: 16 }]);
  t.same(crv.arrays, [{ name: 'crvPts', count: 8 }]);
  t.match(
    crv.attributes.find((a) => a.name === 'crvPts'),
    { fc: 'SP', bType: 'Struct', count: 8 },
    'an array attribute keeps its own count',
  );
  t.notOk(
    toBrowseTree(result.model).ieds[0].logicalDevices[0].logicalNodes[0].dataObjects[0].arrays,
    'a data object without arrays has no list of them',
  );
  t.same(ln.dataSets, [], 'the data set is in LLN0');
});

t.test('data set members may name array elements at any depth, the index in doName or daName', async (t) => {
  const members = [
    fcda('HA', 'phsAHar(7)', 'MX'),
    fcda('HA.phsAHar(8)', undefined, 'MX'),
    fcda('HA.phsAHar(9)', 'cVal', 'MX'),
    fcda('HA', 'phsAHar(10).cVal.mag', 'MX'),
    fcda('HA', 'phsAHar(15).cVal.mag.f', 'MX'),
    fcda('Crv', 'crvPts(0).xVal', 'SP'),
  ].join('');
  const result = await parseScl(scl(members));
  t.same(result.report.warnings, []);
  if (!result.ok) return;
  const set = toBrowseTree(result.model).ieds[0].logicalDevices[0].logicalNodes[0].dataSets[0];
  t.same(
    set.members.map((m) => m.ref),
    [
      'HARMLD0/MHAI1$MX$HA$phsAHar(7)',
      'HARMLD0/MHAI1$MX$HA$phsAHar(8)',
      'HARMLD0/MHAI1$MX$HA$phsAHar(9)$cVal',
      'HARMLD0/MHAI1$MX$HA$phsAHar(10)$cVal$mag',
      'HARMLD0/MHAI1$MX$HA$phsAHar(15)$cVal$mag$f',
      'HARMLD0/MHAI1$SP$Crv$crvPts(0)$xVal',
    ],
  );
});

t.test('a member whose index lies outside its array, or that indexes what is no array, names no data', async (t) => {
  const result = await parseScl(
    scl(
      [
        fcda('HA', 'phsAHar(16)', 'MX'),
        fcda('HA', 'numHar(0)', 'CF'),
        fcda('Crv', 'crvPts(8).xVal', 'SP'),
        fcda('HA', 'phsAHar(x)', 'MX'),
      ].join(''),
    ),
  );
  t.match(
    result.report.warnings.map((w) => w.message),
    [
      /phsAHar\(16\) \[MX\] names no data/,
      /numHar\(0\) \[CF\] names no data/,
      /crvPts\(8\)\.xVal \[SP\] names no data/,
      /phsAHar\(x\) \[MX\] names no data/,
    ],
  );
});
