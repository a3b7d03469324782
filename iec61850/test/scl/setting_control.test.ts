/**
 * LLN0's setting group control block in SCL (`SettingControl`): read into the logical node with its
 * number of groups, active group and reservation time; a misplaced or empty one is a warning. A setting's
 * per-group values (`Val sGroup`) of an attribute under SG and SE are SG values, not a warning.
 */
import t from 'tap';
import { parseScl } from '@scada/iec61850';

const scl = (lln0: string, ln = '') => `<?xml version="1.0"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL" version="2007" revision="B">
  <Header id="sg"/>
  <IED name="R"><AccessPoint name="AP"><Server><LDevice inst="P">
    <LN0 lnClass="LLN0" inst="" lnType="L0">${lln0}</LN0>
    <LN lnClass="PTOC" inst="1" lnType="PT">${ln}</LN>
  </LDevice></Server></AccessPoint></IED>
  <DataTypeTemplates>
    <LNodeType id="L0" lnClass="LLN0"/>
    <LNodeType id="PT" lnClass="PTOC"><DO name="OpDlTmms" type="ING"/></LNodeType>
    <DOType id="ING" cdc="ING"><DA name="setVal" bType="INT32" fc="SG"/><DA name="setVal" bType="INT32" fc="SE"/></DOType>
  </DataTypeTemplates>
</SCL>`;

async function parsed(text: string) {
  const result = await parseScl(text);
  if (!result.ok) throw new Error(JSON.stringify(result.report.errors));
  const [lln0, ptoc] = result.model.ieds[0].accessPoints[0].server!.logicalDevices[0].logicalNodes;
  return { lln0, ptoc, warnings: result.report.warnings.map((w) => w.message) };
}

t.test('SettingControl in LLN0 gives its logical device setting groups', async (t) => {
  const { lln0, ptoc, warnings } = await parsed(
    scl(
      '<SettingControl desc="protection" numOfSGs="3" actSG="2" resvTms="60"/>',
      '<DOI name="OpDlTmms"><DAI name="setVal"><Val sGroup="1">100</Val><Val sGroup="2">200</Val><Val sGroup="3">300</Val></DAI></DOI>',
    ),
  );
  t.same(lln0.settingControl, { numOfSGs: 3, actSG: 2, resvTms: 60, desc: 'protection' });
  t.same(
    ptoc.values.map((v) => [v.sGroup, v.fc, v.value]),
    [
      [1, 'SG', '100'],
      [2, 'SG', '200'],
      [3, 'SG', '300'],
    ],
    'per-group values of a setting under SG and SE are its SG values',
  );
  t.same(warnings, []);
  t.equal(ptoc.settingControl, undefined, 'other logical nodes have none');
});

t.test('the active group defaults to 1; one outside the groups is a warning and reads as 1', async (t) => {
  t.same((await parsed(scl('<SettingControl numOfSGs="2"/>'))).lln0.settingControl, { numOfSGs: 2, actSG: 1 });
  const outside = await parsed(scl('<SettingControl numOfSGs="2" actSG="3"/>'));
  t.same(outside.lln0.settingControl, { numOfSGs: 2, actSG: 1 });
  t.match(outside.warnings, [/actSG="3" is not one of the 2 setting groups/]);
});

t.test('a SettingControl without groups, or outside LLN0, is ignored with a warning', async (t) => {
  const none = await parsed(scl('<SettingControl numOfSGs="0"/>'));
  t.equal(none.lln0.settingControl, undefined);
  t.match(none.warnings, [/describes no setting groups/]);
  const misplaced = await parsed(scl('', '<SettingControl numOfSGs="2"/>'));
  t.equal(misplaced.ptoc.settingControl, undefined);
  t.match(misplaced.warnings, [/only LLN0 holds a setting group control block/]);
});
