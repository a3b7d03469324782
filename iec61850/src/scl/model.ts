/**
 * The device model read from an SCL file (IEC 61850-6). Plain objects and arrays, so the model can be kept,
 * logged or serialised as it is. Data types stay in `templates` and are shared by every logical node that
 * names them; `template_index.ts` resolves them.
 */

/** The model of one SCL file. */
export type SclModel = {
  /** `2003`, `2007A`, `2007B`, `2007B4`, or what the file declares. */
  edition: string;
  header?: SclHeader;
  ieds: Ied[];
  subNetworks: SubNetwork[];
  templates: DataTypeTemplates;
};

/** The `Header` element. */
export type SclHeader = { id: string; version?: string; revision?: string; toolID?: string; nameStructure?: string };

/** An IED with its access points. */
export type Ied = {
  name: string;
  desc?: string;
  manufacturer?: string;
  type?: string;
  configVersion?: string;
  originalSclVersion?: string;
  originalSclRevision?: string;
  accessPoints: AccessPoint[];
};

/** An access point: a server, or (`serverAt`, edition 2) a pointer to the server of another access point. */
export type AccessPoint = { name: string; desc?: string; serverAt?: string; server?: Server };

/** The MMS server behind an access point. */
export type Server = { desc?: string; timeout?: number; logicalDevices: LogicalDevice[] };

/** A logical device; `domain` is its MMS domain name (IED name + `inst`, or `ldName`). */
export type LogicalDevice = { inst: string; ldName?: string; desc?: string; domain: string; logicalNodes: LogicalNode[] };

/** A logical node (`LN0` or `LN`). `name` is `prefix` + `lnClass` + `inst`, e.g. `GGIO1`. */
export type LogicalNode = {
  name: string;
  prefix: string;
  lnClass: string;
  inst: string;
  lnType: string;
  desc?: string;
  dataSets: DataSet[];
  reportControls: ReportControl[];
  gooseControls: GooseControl[];
  sampledValueControls: SampledValueControl[];
  values: ConfiguredValue[];
  /** Descriptions the instance gives its data objects and attributes (`DOI`/`SDI`/`DAI` `desc`); absent when none does. */
  descs?: InstanceDesc[];
  /** LLN0 only: its setting group control block (`SettingControl`), when the logical device has setting groups. */
  settingControl?: SettingControl;
};

/**
 * A setting group control block (`SettingControl` in LLN0, IEC 61850-6): how many setting groups the
 * logical device has, the one active at start, and (edition 2.1) the edit reservation in seconds.
 */
export type SettingControl = { numOfSGs: number; actSG: number; resvTms?: number; desc?: string };

/**
 * A value configured in the instance (`DOI`/`SDI`/`DAI`/`Val`). `path` is dotted from the data object down:
 * `Mod.ctlModel`, `AnIn3.rangeC.min.f`. `fc` is filled in when the path resolves through the templates.
 */
export type ConfiguredValue = { path: string; value: string; sGroup?: number; fc?: string };

/** A description the instance gives (`DOI`, `SDI` or `DAI` `desc`), by dotted path from the data object down. */
export type InstanceDesc = { path: string; desc: string };

/** A data set and its members. */
export type DataSet = { name: string; desc?: string; members: Fcda[] };

/** A data set member: a functionally constrained data object or attribute. */
export type Fcda = {
  ldInst: string;
  prefix: string;
  lnClass: string;
  lnInst: string;
  doName: string;
  daName?: string;
  fc: string;
  ix?: number;
};

/** Trigger options of a report control block. */
export type TrgOps = { dchg: boolean; qchg: boolean; dupd: boolean; period: boolean; gi: boolean };

/** Optional fields of a report control block. */
export type OptFields = {
  seqNum: boolean;
  timeStamp: boolean;
  dataSet: boolean;
  reasonCode: boolean;
  dataRef: boolean;
  entryID: boolean;
  configRef: boolean;
  bufOvfl: boolean;
  segmentation: boolean;
};

/** A client named in `RptEnabled` (`ClientLN`). */
export type ClientLn = { iedName: string; ldInst: string; prefix: string; lnClass: string; lnInst: string; apRef?: string };

/** A report control block. `instances` are the names the server gives its instances. */
export type ReportControl = {
  name: string;
  desc?: string;
  buffered: boolean;
  rptID?: string;
  datSet?: string;
  confRev?: number;
  intgPd: number;
  bufTime: number;
  indexed: boolean;
  trgOps: TrgOps;
  optFields: OptFields;
  max: number;
  clients: ClientLn[];
  instances: string[];
};

/** A GOOSE or GSSE control block (`GSEControl`). */
export type GooseControl = {
  name: string;
  desc?: string;
  type: 'GOOSE' | 'GSSE';
  appID: string;
  datSet?: string;
  confRev?: number;
  fixedOffs: boolean;
};

/** A sampled-value control block. `opts` holds the `SmvOpts` flags. */
export type SampledValueControl = {
  name: string;
  desc?: string;
  smvID: string;
  datSet?: string;
  confRev?: number;
  smpRate?: number;
  nofASDU?: number;
  smpMod?: string;
  multicast: boolean;
  opts: Record<string, boolean>;
};

/** `Address` parameters by `P` type; a null-prototype record. */
export type Address = Record<string, string>;

/** A subnetwork of the communication section. */
export type SubNetwork = { name: string; type?: string; desc?: string; bitRate?: string; connectedAPs: ConnectedAp[] };

/** An access point connected to a subnetwork, with its addresses and those of its GOOSE and SV blocks. */
export type ConnectedAp = {
  iedName: string;
  apName: string;
  desc?: string;
  address: Address;
  gse: ControlBlockAddress[];
  smv: ControlBlockAddress[];
};

/** The multicast address of a GOOSE (`GSE`) or SV (`SMV`) control block. */
export type ControlBlockAddress = { ldInst: string; cbName: string; address: Address };

/** The `DataTypeTemplates` section. */
export type DataTypeTemplates = {
  lNodeTypes: LNodeType[];
  doTypes: DoType[];
  daTypes: DaType[];
  enumTypes: EnumType[];
};

/** A logical node type: the data objects of a logical node. */
export type LNodeType = { id: string; lnClass: string; desc?: string; dataObjects: DoDefinition[] };

/** A `DO` of a logical node type. */
export type DoDefinition = { name: string; type: string; desc?: string };

/** A data object type: its sub data objects and data attributes, in file order. */
export type DoType = { id: string; cdc: string; desc?: string; children: (SdoDefinition | DaDefinition)[] };

/** An `SDO` of a data object type; `count` (edition 2) makes it an array of that many sub data objects. */
export type SdoDefinition = { kind: 'SDO'; name: string; type: string; desc?: string; count?: number };

/** A `DA` of a data object type: a data attribute with its functional constraint. */
export type DaDefinition = {
  kind: 'DA';
  name: string;
  fc: string;
  bType: string;
  type?: string;
  count?: number;
  value?: string;
  desc?: string;
};

/** A data attribute type: the components (`BDA`) of a structured attribute. */
export type DaType = { id: string; desc?: string; components: BdaDefinition[] };

/** A `BDA` of a data attribute type. */
export type BdaDefinition = { name: string; bType: string; type?: string; count?: number; value?: string; desc?: string };

/** An enumeration with its values. */
export type EnumType = { id: string; desc?: string; values: { ord: number; value: string }[] };
