/**
 * The tests' own SCL: a small, valid edition-2 file made of parts that a test can replace one at a time,
 * and readers for the shared real-world files (present beside the repository, absent in some clones).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The folder of the real-world SCL files shared with the project (`../shared/scl`). */
export const SHARED_SCL = fileURLToPath(new URL('../../../../shared/scl/', import.meta.url));

/** True when the shared SCL files are there to read. */
export const haveSharedScl = existsSync(SHARED_SCL);

/** Reads one shared SCL file. */
export function sharedScl(name: string): Promise<Buffer> {
  return readFile(`${SHARED_SCL}${name}`);
}

/** The parts of the fixture file. */
export type Parts = {
  prolog: string;
  rootAttributes: string;
  header: string;
  communication: string;
  ied: string;
  templates: string;
};

/** A valid edition-2 file: one IED `relay1` with LD `CTRL`, a GGIO with a data set and a report block. */
export const validParts: Parts = {
  prolog: '<?xml version="1.0" encoding="UTF-8"?>\n',
  rootAttributes: 'xmlns="http://www.iec.ch/61850/2003/SCL" version="2007" revision="B" release="4"',
  header: '<Header id="fixture" toolID="tests"/>',
  communication: `<Communication><SubNetwork name="station" type="8-MMS"><ConnectedAP iedName="relay1" apName="S1"><Address>
<P type="IP">192.0.2.10</P><P type="IP-SUBNET">255.255.255.0</P><P type="OSI-TSEL">0001</P><P type="OSI-SSEL">0001</P>
<P type="OSI-PSEL">00000001</P><P type="OSI-AP-Title">1,3,9999,23</P><P type="OSI-AE-Qualifier">23</P><P type="MMS-Port">102</P>
</Address><GSE ldInst="CTRL" cbName="gcb1"><Address><P type="MAC-Address">01-0C-CD-01-00-01</P><P type="APPID">0001</P></Address></GSE>
</ConnectedAP></SubNetwork></Communication>`,
  ied: `<IED name="relay1" manufacturer="ACME" type="R100" configVersion="2.1" desc="feeder relay">
<AccessPoint name="S1"><Server><Authentication/><LDevice inst="CTRL" ldName="Feeder1Ctrl">
<LN0 lnClass="LLN0" inst="" lnType="T_LLN0">
<DataSet name="ds1"><FCDA ldInst="CTRL" lnClass="GGIO" lnInst="1" doName="Ind1" daName="stVal" fc="ST"/><FCDA ldInst="CTRL" lnClass="GGIO" lnInst="1" doName="Ind1" fc="ST"/></DataSet>
<ReportControl name="brcbEvents" rptID="ev" datSet="ds1" confRev="3" buffered="true" bufTime="100" intgPd="2000">
<TrgOps dchg="true" qchg="true" gi="true"/><OptFields seqNum="true" timeStamp="true" entryID="true"/><RptEnabled max="4"/></ReportControl>
<GSEControl name="gcb1" appID="relay1/gcb1" datSet="ds1" confRev="1"/>
<DOI name="Mod"><DAI name="ctlModel"><Val>status-only</Val></DAI></DOI>
</LN0>
<LN prefix="" lnClass="GGIO" inst="1" lnType="T_GGIO"><DOI name="SPCSO1"><DAI name="ctlModel"><Val>direct-with-normal-security</Val></DAI></DOI></LN>
</LDevice></Server></AccessPoint></IED>`,
  templates: `<DataTypeTemplates>
<LNodeType id="T_LLN0" lnClass="LLN0"><DO name="Mod" type="T_ENC"/></LNodeType>
<LNodeType id="T_GGIO" lnClass="GGIO"><DO name="Ind1" type="T_SPS"/><DO name="SPCSO1" type="T_SPC"/><DO name="AnIn1" type="T_MV"/></LNodeType>
<DOType id="T_ENC" cdc="ENC"><DA name="stVal" fc="ST" bType="Enum" type="Mod"/><DA name="ctlModel" fc="CF" bType="Enum" type="CtlModel"/></DOType>
<DOType id="T_SPS" cdc="SPS"><DA name="stVal" fc="ST" bType="BOOLEAN"/><DA name="q" fc="ST" bType="Quality"/></DOType>
<DOType id="T_SPC" cdc="SPC"><DA name="stVal" fc="ST" bType="BOOLEAN"/><DA name="ctlModel" fc="CF" bType="Enum" type="CtlModel"/></DOType>
<DOType id="T_MV" cdc="MV"><DA name="mag" fc="MX" bType="Struct" type="T_AV"/></DOType>
<DAType id="T_AV"><BDA name="f" bType="FLOAT32"/></DAType>
<EnumType id="Mod"><EnumVal ord="1">on</EnumVal><EnumVal ord="5">off</EnumVal></EnumType>
<EnumType id="CtlModel"><EnumVal ord="0">status-only</EnumVal><EnumVal ord="1">direct-with-normal-security</EnumVal></EnumType>
</DataTypeTemplates>`,
};

/** The fixture file with some parts replaced. */
export function sclText(changes: Partial<Parts> = {}): string {
  const p = { ...validParts, ...changes };
  return `${p.prolog}<SCL ${p.rootAttributes}>\n${p.header}\n${p.communication}\n${p.ied}\n${p.templates}\n</SCL>\n`;
}

/** Feeds bytes in chunks of the given size, as an upload would arrive. */
export async function* inChunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
