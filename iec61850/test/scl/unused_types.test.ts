/**
 * Types that no logical node uses may be incomplete, as tools leave them (libiec61850's `sg_demo.cid`): a
 * broken reference inside one is a warning in the parse report, not a refusal; the same reference inside a
 * type a logical node uses, directly or through other types, still refuses the file.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { parseScl, toBrowseTree } from '@scada/iec61850';

const file = await readFile(new URL('./fixtures/unused_incomplete_types.icd', import.meta.url), 'utf8');
const messages = (issues: { message: string }[]) => issues.map((i) => i.message);

t.test('broken references inside types no logical node uses are warnings, with their place', async (t) => {
  const result = await parseScl(file);
  t.equal(result.ok, true, 'the file is accepted');
  t.same(result.report.errors, []);
  t.match(result.report.warnings, [
    {
      message:
        'DO PhyNam of LNodeType LPHD_UNUSED names DOType DPL_NOWHERE, which is not defined (no logical node uses LNodeType LPHD_UNUSED, so it is not refused)',
      line: 22,
      path: '/SCL/DataTypeTemplates/LNodeType[LPHD_UNUSED]/DO[PhyNam]',
    },
    {
      message:
        'DOType APC_UNUSED.Oper names DAType APCOperate, which is not defined (no logical node uses DOType APC_UNUSED, so it is not refused)',
      line: 30,
      path: '/SCL/DataTypeTemplates/DOType[APC_UNUSED]/DA[Oper]',
    },
    {
      message:
        'DAType RANGE_UNUSED.unit names EnumType SIUnitNowhere, which is not defined (no logical node uses DAType RANGE_UNUSED, so it is not refused)',
      line: 35,
    },
  ]);
  t.equal(result.report.warnings.length, 3, 'and nothing else');
  if (!result.ok) return;
  const ln = toBrowseTree(result.model).ieds[0].logicalDevices[0].logicalNodes[1];
  t.same(
    ln.dataObjects.map((d) => [d.name, d.attributes.map((a) => a.name)]),
    [
      ['Mod', ['stVal', 'q', 't']],
      ['StrVal', ['setMag', 'setMag.f']],
    ],
    'the logical nodes browse as before',
  );
});

t.test('a data object of the incomplete type makes it used: the file is refused', async (t) => {
  const result = await parseScl(file.replace('<DO name="StrVal" type="SGD_ASG"/>', '<DO name="StrVal" type="APC_UNUSED"/>'));
  t.equal(result.ok, false);
  t.same(messages(result.report.errors), [
    'DOType APC_UNUSED.Oper names DAType APCOperate, which is not defined',
    'DAType RANGE_UNUSED.unit names EnumType SIUnitNowhere, which is not defined',
  ]);
});

t.test('a logical node of an incomplete LNodeType is refused, and so is an SDO of an undefined type in a used DOType', async (t) => {
  const lphd = await parseScl(
    file.replace('<LN lnClass="PTOC"', '<LN lnClass="LPHD" inst="1" lnType="LPHD_UNUSED"/>\n          <LN lnClass="PTOC"'),
  );
  t.equal(lphd.ok, false);
  t.same(messages(lphd.report.errors), ['DO PhyNam of LNodeType LPHD_UNUSED names DOType DPL_NOWHERE, which is not defined']);
  const sdo = await parseScl(file.replace('<DA name="setMag" fc="SE"', '<SDO name="sub" type="NO_SUCH_DO"/><DA name="setMag" fc="SE"'));
  t.equal(sdo.ok, false);
  t.same(messages(sdo.report.errors), ['SDO sub of DOType SGD_ASG names DOType NO_SUCH_DO, which is not defined']);
});
