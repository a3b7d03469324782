/**
 * What the SCL parser produces for others to read: its report and the browse tree of a model. Plain JSON
 * values, described here in the package's own terms; object references are MMS names (`LD/LN$FC$DO$DA`).
 * The protocol service answers them over its API, whose schemas hold it to the same shape.
 */

/** One finding of the parser, with the place in the file where it was found. */
export type SclIssue = {
  message: string;
  /** 1-based line of the element (or of the character) the finding is about. */
  line: number;
  /** 1-based column on that line. */
  column: number;
  /** Where in the document: element names with their identifying attribute, e.g. `/SCL/IED[simpleIO]/AccessPoint`. */
  path?: string;
};

/** What the parser found: errors reject the file, warnings are kept with it. */
export type SclParseReport = {
  /** `2003` (edition 1), `2007A`, `2007B` or `2007B4` (edition 2, 2.1), another `version+revision`, or `unknown`. */
  edition: string;
  errors: SclIssue[];
  warnings: SclIssue[];
};

/** `Address` parameters by `P` type (`IP`, `OSI-TSEL`, `MMS-Port`, `MAC-Address`, `APPID`, …). */
export type BrowseAddress = Record<string, string>;

/** A data attribute, or a component of a structured one, by its dotted path below the data object. */
export type BrowseAttribute = {
  /** `stVal`, `mag.f`, `phsA.cVal.mag.f`. */
  name: string;
  fc: string;
  bType: string;
  /** The `DAType` or `EnumType` id of a `Struct` or `Enum` attribute. */
  type?: string;
  /** The array's size, for an array. */
  count?: number;
  /** The MMS object reference, e.g. `simpleIOGenericIO/GGIO1$ST$Ind1$stVal`. */
  ref: string;
  /** The configured value (`DAI`/`Val`), else the template's default. */
  value?: string;
  /** The instance's `DAI`/`SDI` `desc`, else the template's `DA`/`BDA` `desc`. */
  desc?: string;
  /** The unit of a measured value (`mag.f`: `kV`), from the nearest `units` (SIUnit with its multiplier). */
  unit?: string;
};

/** A data object of a logical node: its common data class, functional constraints, arrays and attributes. */
export type BrowseDataObject = {
  name: string;
  cdc: string;
  /** The `DOType` id. */
  type: string;
  /** The instance's `DOI` `desc`, else its `dU`, else the `DO`'s or the `DOType`'s `desc`. */
  desc?: string;
  /** The unit its `units` give (`kV`), for measured values. */
  unit?: string;
  /** The functional constraints of its attributes, sorted. */
  fcs: string[];
  /** Its arrays (SCL `count`) by dotted path below the data object; an element is addressed `name(i)`. */
  arrays?: { name: string; count: number }[];
  attributes: BrowseAttribute[];
};

/** A data set and its members (`FCDA`s). */
export type BrowseDataSet = {
  name: string;
  ref: string;
  desc?: string;
  members: {
    ref: string;
    fc: string;
    ldInst: string;
    prefix: string;
    lnClass: string;
    lnInst: string;
    doName: string;
    daName?: string;
  }[];
};

/** A report control block with the MMS names of its instances. */
export type BrowseReportControl = {
  name: string;
  desc?: string;
  buffered: boolean;
  rptID?: string;
  datSet?: string;
  confRev?: number;
  intgPd: number;
  bufTime: number;
  indexed: boolean;
  max: number;
  /** The trigger options set: `dchg`, `qchg`, `dupd`, `period`, `gi`. */
  trgOps: string[];
  /** The optional fields set: `seqNum`, `timeStamp`, `dataSet`, `reasonCode`, `dataRef`, `entryID`, … */
  optFields: string[];
  /** One per instance: `EventsRCB`, or `brcbEvents01` … when indexed with `max` > 1. */
  instances: { name: string; ref: string }[];
};

/** A GOOSE (or GSSE) control block, with its multicast address. */
export type BrowseGooseControl = {
  name: string;
  ref: string;
  desc?: string;
  type: string;
  appID: string;
  datSet?: string;
  confRev?: number;
  fixedOffs: boolean;
  address?: BrowseAddress;
};

/** A sampled-value control block, with its multicast address. */
export type BrowseSampledValueControl = {
  name: string;
  ref: string;
  desc?: string;
  smvID: string;
  datSet?: string;
  confRev?: number;
  smpRate?: number;
  nofASDU?: number;
  smpMod?: string;
  multicast: boolean;
  address?: BrowseAddress;
};

/** A logical node: `prefix` + `lnClass` + `inst` is its name within the logical device. */
export type BrowseLogicalNode = {
  name: string;
  prefix: string;
  lnClass: string;
  inst: string;
  lnType: string;
  desc?: string;
  dataObjects: BrowseDataObject[];
  dataSets: BrowseDataSet[];
  reportControls: BrowseReportControl[];
  gooseControls: BrowseGooseControl[];
  sampledValueControls: BrowseSampledValueControl[];
};

/** A logical device: `name` is its MMS domain (IED name + `inst`, or `ldName` in edition 2). */
export type BrowseLogicalDevice = {
  name: string;
  inst: string;
  accessPoint: string;
  desc?: string;
  logicalNodes: BrowseLogicalNode[];
};

/** An IED: its access points with their addresses, and its logical devices. */
export type BrowseIed = {
  name: string;
  desc?: string;
  manufacturer?: string;
  type?: string;
  configVersion?: string;
  accessPoints: { name: string; desc?: string; subNetwork?: string; address?: BrowseAddress }[];
  logicalDevices: BrowseLogicalDevice[];
};

/** A subnetwork and the access points connected to it, clients the file does not describe included. */
export type BrowseSubNetwork = {
  name: string;
  type?: string;
  desc?: string;
  /** `described` is false for an IED the file does not describe (a client listed in a CID file). */
  connectedAPs: { iedName: string; apName: string; described: boolean; address: BrowseAddress }[];
};

/** The browse tree of an SCL file: IEDs → logical devices → logical nodes → data objects, and the network. */
export type BrowseTree = {
  edition: string;
  ieds: BrowseIed[];
  subNetworks: BrowseSubNetwork[];
  /** The values of the enumerations the attributes name in `type`. */
  enumTypes: { id: string; desc?: string; values: { ord: number; value: string }[] }[];
};
