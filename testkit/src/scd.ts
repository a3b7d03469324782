/**
 * A station file (SCD) of `count` IEDs, generated: each IED with four logical devices of 131 logical
 * nodes (breakers, switches, measurements, protection) with configured values, four data sets of 20
 * members and four buffered report blocks per device. 200 IEDs make about 48 MB. Used by the SCL
 * benchmark and by tests that need a model larger than one bus message.
 */
export function generateScd(count: number): Uint8Array {
  const lnTypes = ['MMXU', 'XCBR', 'CSWI', 'GGIO', 'PTOC'];
  const ln = (cls: string, inst: number) =>
    `<LN lnClass="${cls}" inst="${inst}" lnType="T_${cls}" prefix="Q${inst}" desc="${cls} ${inst} of the bay"><DOI name="Pos" desc="Position"><DAI name="ctlModel"><Val>sbo-with-enhanced-security</Val></DAI>` +
    `<DAI name="sboTimeout"><Val>30000</Val></DAI></DOI><DOI name="Mod" desc="Mode"><DAI name="ctlModel"><Val>status-only</Val></DAI></DOI>` +
    `<DOI name="Beh" desc="Behaviour"><DAI name="stVal"><Val>on</Val></DAI></DOI></LN>`;
  const fcdas = (n: number) =>
    Array.from(
      { length: n },
      (_, i) => `<FCDA ldInst="LD0" prefix="Q${i + 1}" lnClass="XCBR" lnInst="${i + 1}" doName="Pos" daName="stVal" fc="ST"/>`,
    ).join('');
  const ld = (inst: string) =>
    `<LDevice inst="${inst}"><LN0 lnClass="LLN0" inst="" lnType="T_LLN0">` +
    [1, 2, 3, 4].map((n) => `<DataSet name="ds${n}">${fcdas(20)}</DataSet>`).join('') +
    [1, 2, 3, 4]
      .map(
        (n) =>
          `<ReportControl name="brcb${n}" rptID="r${n}" datSet="ds${n}" confRev="1" buffered="true" intgPd="1000"><TrgOps dchg="true" qchg="true"/><OptFields seqNum="true"/><RptEnabled max="5"/></ReportControl>`,
      )
      .join('') +
    `<DOI name="Mod"><DAI name="ctlModel"><Val>status-only</Val></DAI></DOI></LN0>` +
    Array.from({ length: 130 }, (_, i) => ln(lnTypes[i % lnTypes.length], Math.floor(i / lnTypes.length) + 1)).join('') +
    '</LDevice>';
  const parts: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<SCL xmlns="http://www.iec.ch/61850/2003/SCL" version="2007" revision="B" release="4"><Header id="bench"/><Communication><SubNetwork name="station">',
  ];
  for (let i = 0; i < count; i++)
    parts.push(
      `<ConnectedAP iedName="IED${i}" apName="S1"><Address><P type="IP">10.0.${i >> 8}.${i & 255}</P><P type="OSI-TSEL">0001</P></Address></ConnectedAP>`,
    );
  parts.push('</SubNetwork></Communication>');
  for (let i = 0; i < count; i++)
    parts.push(
      `<IED name="IED${i}" manufacturer="bench"><AccessPoint name="S1"><Server><Authentication/>${['LD0', 'LD1', 'LD2', 'LD3'].map(ld).join('')}</Server></AccessPoint></IED>`,
    );
  const dos = '<DO name="Mod" type="T_ENC"/><DO name="Beh" type="T_ENS"/><DO name="Pos" type="T_DPC"/>';
  parts.push(`<DataTypeTemplates><LNodeType id="T_LLN0" lnClass="LLN0"><DO name="Mod" type="T_ENC"/></LNodeType>`);
  for (const cls of lnTypes) parts.push(`<LNodeType id="T_${cls}" lnClass="${cls}">${dos}</LNodeType>`);
  parts.push(
    '<DOType id="T_ENC" cdc="ENC"><DA name="stVal" fc="ST" bType="Enum" type="E"/><DA name="ctlModel" fc="CF" bType="Enum" type="E"/></DOType>',
  );
  parts.push('<DOType id="T_ENS" cdc="ENS"><DA name="stVal" fc="ST" bType="Enum" type="B"/></DOType>');
  parts.push(
    '<DOType id="T_DPC" cdc="DPC"><DA name="stVal" fc="ST" bType="Dbpos"/><DA name="q" fc="ST" bType="Quality"/><DA name="ctlModel" fc="CF" bType="Enum" type="E"/><DA name="sboTimeout" fc="CF" bType="INT32U"/></DOType>',
  );
  parts.push(
    '<EnumType id="E"><EnumVal ord="0">status-only</EnumVal><EnumVal ord="4">sbo-with-enhanced-security</EnumVal></EnumType><EnumType id="B"><EnumVal ord="1">on</EnumVal><EnumVal ord="5">off</EnumVal></EnumType></DataTypeTemplates></SCL>\n',
  );
  return new TextEncoder().encode(parts.join(''));
}
