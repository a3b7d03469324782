/**
 * What a live session needs of a device: the IEC 61850 client seen through a narrow interface, so that
 * supervision, ownership and the API do not depend on the MMS stack's shape (and tests can drive them).
 */
import type { TlsOptions } from '@scada/iec61850';

/**
 * Where a device listens, with the OSI selectors and AP title of its SCL address when it has them, and the
 * connection's security settings, opened: the ACSE password and TLS (IEC 62351-3).
 */
export type DeviceTarget = { host: string; port: number; address?: Record<string, string>; password?: string; tls?: TlsOptions };

/** The device's answer to MMS identify. */
export type DeviceIdentity = { vendor: string; model: string; revision: string };

/**
 * A value the device sent, with the quality (`{validity, flags, source}`) and time stamp (`{time, flags,
 * accuracy}`) of its data object where the same report or read carried them.
 */
export type DeviceValue = { value: unknown; quality?: unknown; timestamp?: unknown };

/** One received report, decoded by its data set. */
export type DeviceReport = {
  rcb: string;
  rptId: string;
  seqNum?: number;
  /** The report's TimeOfEntry (ISO), when it carried one. */
  timeOfEntry?: string;
  /** Hex of the EntryID (buffered blocks). */
  entryId?: string;
  /** The device lost buffered entries before this report. */
  bufferOverflow?: boolean;
  values: ({ ref: string; reason?: string[] } & DeviceValue)[];
};

/** A control request: the value to operate with and the checks to ask for. */
export type ControlRequest = {
  value: unknown;
  test?: boolean;
  interlockCheck?: boolean;
  synchroCheck?: boolean;
  /** How long the caller still waits: a CommandTermination later than this is not waited for. */
  timeoutMs?: number;
};

/** Options of a report block when it is enabled. */
export type ReportOptions = {
  integrityPeriodMs?: number;
  generalInterrogation?: boolean;
  triggers?: string[];
  /** OptFlds to set, by the API's names (`sequence-number`, `report-time-stamp`, …). */
  optionalFields?: string[];
  bufferTimeMs?: number;
  /** Buffered blocks: resume after this EntryID (hex). */
  entryId?: string;
};

/**
 * A setting group control block as the device answered it: the logical device, `LD/LLN0.SGCB`, NumOfSG,
 * ActSG, EditSG (0: none selected for edit), LActTm (null: never) and ResvTms when the device has it.
 */
export type SettingGroupBlock = {
  ld: string;
  reference: string;
  numberOfGroups: number;
  activeGroup: number;
  editGroup: number;
  lastActivated: string | null;
  reservationSeconds?: number;
};

/** The attributes of a setting group control block a client writes: SelectActiveSG, SelectEditSG, ConfirmEditSGValues. */
export type SgcbAttribute = 'ActSG' | 'EditSG' | 'CnfEdit';

/** What a directory entry of a device's file store is: a directory, a part of a COMTRADE record, another file. */
export type DeviceFileKind = 'file' | 'directory' | 'comtrade';

/** One page of a directory of the device's file store, as the device listed it. */
export type DeviceDirectory = {
  entries: { name: string; size: number; lastModified?: string; kind: DeviceFileKind }[];
  moreFollows: boolean;
};

/** A file open on the device (FileOpen): its size and time, its pieces one FileRead at a time, FileClose. */
export type OpenDeviceFile = {
  name: string;
  size: number;
  lastModified?: string;
  read(): Promise<{ data: Uint8Array; moreFollows: boolean }>;
  close(): Promise<void>;
};

/** Which entries of a log: between two times (ms since 1970), or after an entry (its EntryID in hex and its time). */
export type DeviceLogQuery = { from: number; to: number } | { after: string; entryTime: number };

/** One page of a log's entries, each value with its reasons (`dataChange`, …) where the entry gives them. */
export type DeviceLogPage = {
  entries: { entryId: string; time: string | null; values: { ref: string; value: unknown; reason?: string[] }[] }[];
  moreFollows: boolean;
};

/**
 * An association with a device. Every failing operation rejects with a `ProblemError` that says what the
 * API answers: the device's refusal (`device_refused`), a request the model rules out, a pending control.
 */
export interface LiveDevice {
  readonly identity: DeviceIdentity;
  /** The association: the same for the device and each of its views ({@link within}). */
  readonly association: object;
  /**
   * The device with every MMS request bound to a caller's `deadline` (ms since 1970): none is sent once it
   * has passed, and one waiting for a turn leaves the wait when it passes (504 `upstream_timeout`), so an
   * operation of several requests stops between two of them. An open file's reads are not bound to it.
   */
  within(deadline: number): LiveDevice;
  /** Resolves when the association ends: with the reason, or null when it was closed on purpose. */
  readonly ended: Promise<Error | null>;
  onReport(listener: (report: DeviceReport) => void): void;
  /**
   * Reads nothing more from the device until `until` settles or `maxMs` have passed (its reports wait with
   * the device); a device that is no MMS association (a test's) may not have it.
   */
  holdReads?(until: Promise<unknown>, maxMs: number): void;
  /** The live model: logical devices, logical nodes, data objects with their attributes and types. */
  browse(): Promise<unknown>;
  /** Only the names of the logical devices and their logical nodes (cheap: no types). */
  modelNames(): Promise<{ name: string; logicalNodes: string[] }[]>;
  /** The members of data sets (`LD/LN.name` or `LD/LN$name`) with their values. */
  readDataSets(refs: string[]): Promise<{ reference: string; members: ({ reference: string } & (DeviceValue | { error: string }))[] }[]>;
  /** Values of object references, in the order asked; a reference that fails answers `{ error }`. */
  read(refs: string[]): Promise<(DeviceValue | { error: string })[]>;
  write(ref: string, value: unknown): Promise<void>;
  /** Operates a controllable data object by its control model (direct, SBO, enhanced security). */
  operate(ref: string, control: ControlRequest): Promise<void>;
  enableReport(rcb: string, options: ReportOptions): Promise<void>;
  disableReport(rcb: string): Promise<void>;
  /** The setting group control blocks of every logical device that has one. */
  settingGroupControls(): Promise<SettingGroupBlock[]>;
  /** The setting group control block of one logical device; `not_found` when it has none. */
  settingGroupControl(ld: string): Promise<SettingGroupBlock>;
  /** The settings of a logical device: its attributes under SG or SE, as `LD/LN.DO.DA`. */
  settingReferences(ld: string): Promise<string[]>;
  /** Writes one attribute of a block: ActSG or EditSG (`group`; EditSG 0 ends the selection), CnfEdit true. */
  writeSettingGroupControl(ld: string, attribute: SgcbAttribute, group?: number): Promise<void>;
  /**
   * SetEditSGValue: settings of `ld` under SE (`LD/LN.DO.DA`, or with `[SE]`) written in one request,
   * each taken or refused with the device's data access error.
   */
  setEditValues(ld: string, values: { reference: string; value: unknown }[]): Promise<{ reference: string; error?: string }[]>;
  /** One page of a directory of the file store (the root when `path` is empty), after `continueAfter`. */
  listFiles(path: string, continueAfter?: string): Promise<DeviceDirectory>;
  /** Opens a file of the file store for reading. */
  openFile(path: string): Promise<OpenDeviceFile>;
  /** Deletes a file of the file store. */
  deleteFile(path: string): Promise<void>;
  /** One page of a log's entries (`LD/LN$LogName`). */
  queryLog(log: string, query: DeviceLogQuery): Promise<DeviceLogPage>;
  /** Concludes the association (abort when the device does not answer); resolves once the socket is closed. */
  close(): Promise<void>;
}

/** Opens an association; rejects with the reason when it cannot. `signal` aborts an attempt. */
export type Connector = (target: DeviceTarget, signal: AbortSignal) => Promise<LiveDevice>;
