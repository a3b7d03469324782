/**
 * A small SCL file for the simulator tests, so they run without the shared files: one IED `SIM`, one
 * logical device `SIMLD0` with LLN0 (data set `Events`, an indexed URCB and a BRCB) and GGIO1 with a
 * status point, a measurement and one control object per control model.
 */
import { parseScl, utcTimeFromMs, type SclModel } from '@scada/iec61850';
import type { Simulator } from '@scada/simulator';

const SPC = (id: string, extra: string) => `
    <DOType id="${id}" cdc="SPC">
      ${extra}
      <DA name="stVal" bType="BOOLEAN" fc="ST" dchg="true"/>
      <DA name="q" bType="Quality" fc="ST" qchg="true"/>
      <DA name="t" bType="Timestamp" fc="ST"/>
      <DA name="ctlModel" bType="Enum" type="CtlModels" fc="CF"/>
      <DA name="sboTimeout" bType="INT32U" fc="CF"/>
    </DOType>`;

const ctl = (name: string, model: string) => `<DOI name="${name}"><DAI name="ctlModel"><Val>${model}</Val></DAI></DOI>`;

/** The fixture's SCL text. */
export const FIXTURE_SCL = `<?xml version="1.0" encoding="UTF-8"?>
<SCL xmlns="http://www.iec.ch/61850/2003/SCL" version="2007" revision="B">
  <Header id="simulator-fixture"/>
  <IED name="SIM" manufacturer="ACME" type="SimIED" configVersion="1.2">
    <AccessPoint name="AP1">
      <Server>
        <LDevice inst="LD0">
          <LN0 lnClass="LLN0" lnType="LLN0_T" inst="">
            <DataSet name="Events">
              <FCDA ldInst="LD0" lnClass="GGIO" lnInst="1" doName="Ind1" daName="stVal" fc="ST"/>
              <FCDA ldInst="LD0" lnClass="GGIO" lnInst="1" doName="Ind1" daName="q" fc="ST"/>
              <FCDA ldInst="LD0" lnClass="GGIO" lnInst="1" doName="AnIn1" fc="MX"/>
              <FCDA ldInst="LD0" lnClass="GGIO" lnInst="1" doName="SPCSO1" daName="stVal" fc="ST"/>
            </DataSet>
            <ReportControl name="urcb" rptID="EventsRpt" datSet="Events" confRev="1" buffered="false" intgPd="0" bufTime="0" indexed="true">
              <TrgOps dchg="true" qchg="true" period="true" gi="true"/>
              <OptFields seqNum="true" timeStamp="true" dataSet="true" reasonCode="true" dataRef="true" configRef="true"/>
              <RptEnabled max="2"/>
            </ReportControl>
            <ReportControl name="brcb" datSet="Events" confRev="1" buffered="true" bufTime="0" indexed="false">
              <TrgOps dchg="true"/>
              <OptFields seqNum="true" entryID="true"/>
            </ReportControl>
            ${ctl('Mod', 'status-only')}
            <DOI name="NamPlt"><DAI name="vendor"><Val>ACME</Val></DAI></DOI>
          </LN0>
          <LN lnClass="GGIO" inst="1" lnType="GGIO_T" prefix="">
            ${ctl('SPCSO1', 'direct-with-normal-security')}
            ${ctl('SPCSO2', 'sbo-with-normal-security')}
            ${ctl('SPCSO3', 'direct-with-enhanced-security')}
            ${ctl('SPCSO4', 'sbo-with-enhanced-security')}
            ${ctl('SPCSO5', 'status-only')}
            <DOI name="AnIn1"><SDI name="mag"><DAI name="f"><Val>1.5</Val></DAI></SDI></DOI>
          </LN>
        </LDevice>
      </Server>
    </AccessPoint>
  </IED>
  <DataTypeTemplates>
    <LNodeType id="LLN0_T" lnClass="LLN0">
      <DO name="Mod" type="INC_T"/>
      <DO name="NamPlt" type="LPL_T"/>
    </LNodeType>
    <LNodeType id="GGIO_T" lnClass="GGIO">
      <DO name="Mod" type="INC_T"/>
      <DO name="Ind1" type="SPS_T"/>
      <DO name="AnIn1" type="MV_T"/>
      <DO name="SPCSO1" type="SPC_DIRECT"/>
      <DO name="SPCSO2" type="SPC_SBO"/>
      <DO name="SPCSO3" type="SPC_DIRECT"/>
      <DO name="SPCSO4" type="SPC_SBOW"/>
      <DO name="SPCSO5" type="SPC_DIRECT"/>
    </LNodeType>
    <DOType id="INC_T" cdc="INC">
      <DA name="stVal" bType="INT32" fc="ST" dchg="true"/>
      <DA name="q" bType="Quality" fc="ST" qchg="true"/>
      <DA name="t" bType="Timestamp" fc="ST"/>
      <DA name="ctlModel" bType="Enum" type="CtlModels" fc="CF"/>
    </DOType>
    <DOType id="LPL_T" cdc="LPL">
      <DA name="vendor" bType="VisString255" fc="DC"/>
      <DA name="swRev" bType="VisString255" fc="DC"/>
    </DOType>
    <DOType id="SPS_T" cdc="SPS">
      <DA name="stVal" bType="BOOLEAN" fc="ST" dchg="true"/>
      <DA name="q" bType="Quality" fc="ST" qchg="true"/>
      <DA name="t" bType="Timestamp" fc="ST"/>
    </DOType>
    <DOType id="MV_T" cdc="MV">
      <DA name="mag" bType="Struct" type="AnalogueValue" fc="MX" dchg="true"/>
      <DA name="q" bType="Quality" fc="MX" qchg="true"/>
      <DA name="t" bType="Timestamp" fc="MX"/>
      <DA name="db" bType="INT32U" fc="CF"/>
    </DOType>
    ${SPC('SPC_DIRECT', '<DA name="Oper" bType="Struct" type="SPCOperate" fc="CO"/>')}
    ${SPC('SPC_SBO', '<DA name="SBO" bType="VisString64" fc="CO"/><DA name="Oper" bType="Struct" type="SPCOperate" fc="CO"/><DA name="Cancel" bType="Struct" type="SPCCancel" fc="CO"/><DA name="stSeld" bType="BOOLEAN" fc="ST"/>')}
    ${SPC('SPC_SBOW', '<DA name="SBOw" bType="Struct" type="SPCOperate" fc="CO"/><DA name="Oper" bType="Struct" type="SPCOperate" fc="CO"/><DA name="Cancel" bType="Struct" type="SPCCancel" fc="CO"/>')}
    <DAType id="AnalogueValue"><BDA name="f" bType="FLOAT32"/></DAType>
    <DAType id="Originator"><BDA name="orCat" bType="Enum" type="OrCat"/><BDA name="orIdent" bType="Octet64"/></DAType>
    <DAType id="SPCOperate">
      <BDA name="ctlVal" bType="BOOLEAN"/>
      <BDA name="origin" bType="Struct" type="Originator"/>
      <BDA name="ctlNum" bType="INT8U"/>
      <BDA name="T" bType="Timestamp"/>
      <BDA name="Test" bType="BOOLEAN"/>
      <BDA name="Check" bType="Check"/>
    </DAType>
    <DAType id="SPCCancel">
      <BDA name="ctlVal" bType="BOOLEAN"/>
      <BDA name="origin" bType="Struct" type="Originator"/>
      <BDA name="ctlNum" bType="INT8U"/>
      <BDA name="T" bType="Timestamp"/>
      <BDA name="Test" bType="BOOLEAN"/>
    </DAType>
    <EnumType id="CtlModels">
      <EnumVal ord="0">status-only</EnumVal>
      <EnumVal ord="1">direct-with-normal-security</EnumVal>
      <EnumVal ord="2">sbo-with-normal-security</EnumVal>
      <EnumVal ord="3">direct-with-enhanced-security</EnumVal>
      <EnumVal ord="4">sbo-with-enhanced-security</EnumVal>
    </EnumType>
    <EnumType id="OrCat">
      <EnumVal ord="0">not-supported</EnumVal>
      <EnumVal ord="3">remote-control</EnumVal>
    </EnumType>
  </DataTypeTemplates>
</SCL>
`;

/** The fixture parsed; throws with the report when the parser refuses it. */
export async function fixtureModel(): Promise<SclModel> {
  const result = await parseScl(FIXTURE_SCL);
  if (!result.ok) throw new Error(`fixture SCL refused: ${JSON.stringify(result.report.errors)}`);
  return result.model;
}

/**
 * The fixture's measurement `SIMLD0/GGIO1.AnIn1` as a counter: each `next()` gives its magnitude the next
 * number (1, 2, …) with the device's time of it, which a buffered block reports as one entry.
 */
export function fixtureCounter(sim: Pick<Simulator, 'value' | 'setValue'>): { next(): number; readonly last: number } {
  let n = 0;
  const q = sim.value('SIMLD0/GGIO1$MX$AnIn1$q');
  return {
    next() {
      sim.setValue('SIMLD0/GGIO1$MX$AnIn1', {
        type: 'structure',
        value: [
          { type: 'structure', value: [{ type: 'float', value: ++n, double: false }] },
          q,
          { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
        ],
      });
      return n;
    },
    get last() {
      return n;
    },
  };
}
