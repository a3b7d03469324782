/**
 * The IEC 61850 model read from an SCL file, as the protocol service answers it: the parse report kept with
 * every stored file, and the browse tree of `GET /api/connections/{connectionId}/browse`. Everything here is
 * plain JSON; object references are MMS names (`LD/LN$FC$DO$DA`).
 */
import { Type, type Static } from '@sinclair/typebox';

const Optional = Type.Optional;

/** One finding of the SCL parser, with the place in the file where it was found. */
export const SclIssue = Type.Object({
  message: Type.String(),
  /** 1-based line of the element (or of the character) the finding is about. */
  line: Type.Integer({ minimum: 0 }),
  /** 1-based column on that line. */
  column: Type.Integer({ minimum: 0 }),
  /** Where in the document: element names with their identifying attribute, e.g. `/SCL/IED[simpleIO]/AccessPoint`. */
  path: Optional(Type.String()),
});
/** One finding of the SCL parser. */
export type SclIssue = Static<typeof SclIssue>;

/** What the parser found: errors reject the file, warnings are kept with it. */
export const SclParseReport = Type.Object({
  /** `2003` (edition 1), `2007A`, `2007B` or `2007B4` (edition 2, 2.1), another `version+revision`, or `unknown`. */
  edition: Type.String(),
  errors: Type.Array(SclIssue),
  warnings: Type.Array(SclIssue),
});
/** What the parser found. */
export type SclParseReport = Static<typeof SclParseReport>;

/** `Address` parameters by `P` type (`IP`, `IP-SUBNET`, `OSI-TSEL`, `MMS-Port`, `MAC-Address`, `APPID`, …). */
export const SclAddress = Type.Record(Type.String(), Type.String());

/** A data attribute, or a component of a structured one, with its dotted path below the data object. */
export const SclBrowseAttribute = Type.Object({
  /** Dotted path below the data object: `stVal`, `mag.f`, `phsA.cVal.mag.f`. */
  name: Type.String(),
  fc: Type.String(),
  bType: Type.String(),
  /** The `DAType` or `EnumType` id for `Struct` and `Enum` attributes. */
  type: Optional(Type.String()),
  /** Array size where the attribute is an array. */
  count: Optional(Type.Integer({ minimum: 0 })),
  /** The MMS object reference, e.g. `simpleIOGenericIO/GGIO1$ST$Ind1$stVal`. */
  ref: Type.String(),
  /** The configured value (`DAI`/`Val`), else the template's default. */
  value: Optional(Type.String()),
  /** The instance's `DAI`/`SDI` `desc`, else the template's `DA`/`BDA` `desc`. */
  desc: Optional(Type.String()),
  /** The unit of a measured value (`mag.f`: `kV`): the nearest `units` above it, SIUnit with its multiplier. */
  unit: Optional(Type.String()),
});

/** A data object of a logical node with its common data class and its attributes. */
export const SclBrowseDataObject = Type.Object({
  name: Type.String(),
  cdc: Type.String(),
  /** The `DOType` id. */
  type: Type.String(),
  /** The instance's `DOI` `desc`, else its `dU` value, else the `DO`'s or the `DOType`'s `desc`. */
  desc: Optional(Type.String()),
  /** The unit its `units` give (`kV`): SIUnit with its multiplier, as configured or by the template's default. */
  unit: Optional(Type.String()),
  /** The functional constraints its attributes carry, sorted. */
  fcs: Type.Array(Type.String()),
  /**
   * Its arrays, sub data objects and attributes alike (SCL `count`), by dotted path below the data object:
   * `{name: 'phsAHar', count: 16}`. An element is addressed by its index, `HA.phsAHar(2).cVal.mag.f`; the
   * attributes below an array are listed once, without an index.
   */
  arrays: Optional(Type.Array(Type.Object({ name: Type.String(), count: Type.Integer({ minimum: 0 }) }))),
  attributes: Type.Array(SclBrowseAttribute),
});

/** A member of a data set (an `FCDA`). */
export const SclBrowseDataSetMember = Type.Object({
  ref: Type.String(),
  fc: Type.String(),
  ldInst: Type.String(),
  prefix: Type.String(),
  lnClass: Type.String(),
  lnInst: Type.String(),
  doName: Type.String(),
  daName: Optional(Type.String()),
});

/** A data set with its members. */
export const SclBrowseDataSet = Type.Object({
  name: Type.String(),
  ref: Type.String(),
  desc: Optional(Type.String()),
  members: Type.Array(SclBrowseDataSetMember),
});

/** A report control block with the MMS names of its instances. */
export const SclBrowseReportControl = Type.Object({
  name: Type.String(),
  desc: Optional(Type.String()),
  buffered: Type.Boolean(),
  rptID: Optional(Type.String()),
  datSet: Optional(Type.String()),
  confRev: Optional(Type.Integer({ minimum: 0 })),
  intgPd: Type.Integer({ minimum: 0 }),
  bufTime: Type.Integer({ minimum: 0 }),
  indexed: Type.Boolean(),
  max: Type.Integer({ minimum: 0 }),
  /** Trigger options that are set: `dchg`, `qchg`, `dupd`, `period`, `gi`. */
  trgOps: Type.Array(Type.String()),
  /** Optional fields that are set: `seqNum`, `timeStamp`, `dataSet`, `reasonCode`, `dataRef`, `entryID`, … */
  optFields: Type.Array(Type.String()),
  /** One per instance: `EventsRCB`, or `brcbEvents01` … `brcbEventsNN` when indexed with `max` > 1. */
  instances: Type.Array(Type.Object({ name: Type.String(), ref: Type.String() })),
});

/** A GOOSE (or GSSE) control block, with its multicast address from the communication section. */
export const SclBrowseGooseControl = Type.Object({
  name: Type.String(),
  ref: Type.String(),
  desc: Optional(Type.String()),
  type: Type.String(),
  appID: Type.String(),
  datSet: Optional(Type.String()),
  confRev: Optional(Type.Integer({ minimum: 0 })),
  fixedOffs: Type.Boolean(),
  address: Optional(SclAddress),
});

/** A sampled-value control block, with its multicast address from the communication section. */
export const SclBrowseSampledValueControl = Type.Object({
  name: Type.String(),
  ref: Type.String(),
  desc: Optional(Type.String()),
  smvID: Type.String(),
  datSet: Optional(Type.String()),
  confRev: Optional(Type.Integer({ minimum: 0 })),
  smpRate: Optional(Type.Integer({ minimum: 0 })),
  nofASDU: Optional(Type.Integer({ minimum: 0 })),
  smpMod: Optional(Type.String()),
  multicast: Type.Boolean(),
  address: Optional(SclAddress),
});

/** A logical node: `prefix` + `lnClass` + `inst` is its name within the logical device. */
export const SclBrowseLogicalNode = Type.Object({
  name: Type.String(),
  prefix: Type.String(),
  lnClass: Type.String(),
  inst: Type.String(),
  lnType: Type.String(),
  desc: Optional(Type.String()),
  dataObjects: Type.Array(SclBrowseDataObject),
  dataSets: Type.Array(SclBrowseDataSet),
  reportControls: Type.Array(SclBrowseReportControl),
  gooseControls: Type.Array(SclBrowseGooseControl),
  sampledValueControls: Type.Array(SclBrowseSampledValueControl),
});

/** A logical device: `name` is its MMS domain (IED name + `inst`, or `ldName` in edition 2). */
export const SclBrowseLogicalDevice = Type.Object({
  name: Type.String(),
  inst: Type.String(),
  accessPoint: Type.String(),
  desc: Optional(Type.String()),
  logicalNodes: Type.Array(SclBrowseLogicalNode),
});

/** An access point of an IED with the addresses the communication section gives it. */
export const SclBrowseAccessPoint = Type.Object({
  name: Type.String(),
  desc: Optional(Type.String()),
  subNetwork: Optional(Type.String()),
  address: Optional(SclAddress),
});

/** An IED and its logical devices. */
export const SclBrowseIed = Type.Object({
  name: Type.String(),
  desc: Optional(Type.String()),
  manufacturer: Optional(Type.String()),
  type: Optional(Type.String()),
  configVersion: Optional(Type.String()),
  accessPoints: Type.Array(SclBrowseAccessPoint),
  logicalDevices: Type.Array(SclBrowseLogicalDevice),
});

/** A subnetwork and the access points connected to it, including clients the file does not describe. */
export const SclBrowseSubNetwork = Type.Object({
  name: Type.String(),
  type: Optional(Type.String()),
  desc: Optional(Type.String()),
  connectedAPs: Type.Array(
    Type.Object({
      iedName: Type.String(),
      apName: Type.String(),
      /** False when the file does not describe that IED (a client listed in a CID file). */
      described: Type.Boolean(),
      address: SclAddress,
    }),
  ),
});

/** The browse tree of an SCL file: IEDs → logical devices → logical nodes → data objects, and the network. */
export const SclBrowseTree = Type.Object({
  edition: Type.String(),
  ieds: Type.Array(SclBrowseIed),
  subNetworks: Type.Array(SclBrowseSubNetwork),
  /** Values of the enumerations the attributes name in `type`; an enumeration is named by its `id`. */
  enumTypes: Type.Array(
    Type.Object({
      id: Type.String(),
      desc: Optional(Type.String()),
      values: Type.Array(Type.Object({ ord: Type.Integer(), value: Type.String() })),
    }),
  ),
});
/** The browse tree of an SCL file. */
export type SclBrowseTree = Static<typeof SclBrowseTree>;
