/**
 * A device's file store through MMS file services (IEC 61850-8-1 §23): a directory a page at a time, what
 * each entry is (a directory, a part of a COMTRADE record, another file), COMTRADE records grouped by their
 * base name (IEEE C37.111 / IEC 60255-24: `.cfg` and `.dat`, with `.hdr` and `.inf` where written, or one
 * `.cff`), a file read in the device's pieces from FileOpen to FileClose, and a file deleted (FileDelete).
 */
import type { MmsRequester } from '../mms/client.ts';
import type { DirectoryEntry, FileAttributes } from '../mms/mms_files.ts';

/** What a directory entry is: a directory (its name ends in `/`), a part of a COMTRADE record, or another file. */
export type FileKind = 'directory' | 'comtrade' | 'file';

/** A directory entry with what it is. */
export type FileEntry = DirectoryEntry & { kind: FileKind };

/** The files of one COMTRADE record, by their full names; `name` is their common name without the extension. */
export type ComtradeRecord = { name: string; cfg?: string; dat?: string; hdr?: string; inf?: string; cff?: string };

const COMTRADE_PARTS = ['cfg', 'dat', 'hdr', 'inf', 'cff'] as const;

/** The extension of a name, lower case, and the name without it; undefined for a name without one. */
function splitExtension(name: string): { base: string; ext: string } | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot < name.lastIndexOf('/')) return undefined;
  return { base: name.slice(0, dot), ext: name.slice(dot + 1).toLowerCase() };
}

/** What a directory entry is, by its name. */
export function fileKind(name: string): FileKind {
  if (name.endsWith('/')) return 'directory';
  const ext = splitExtension(name)?.ext;
  return ext !== undefined && (COMTRADE_PARTS as readonly string[]).includes(ext) ? 'comtrade' : 'file';
}

/**
 * The COMTRADE records among `entries`: files of one base name with a `.cfg` and a `.dat` (extensions of
 * either case, as relays write `DR_0001.CFG`), or a `.cff`; a `.cfg` without its `.dat` is no record.
 */
export function comtradeRecords(entries: readonly Pick<DirectoryEntry, 'name'>[]): ComtradeRecord[] {
  const byBase = new Map<string, ComtradeRecord>();
  for (const { name } of entries) {
    const split = splitExtension(name);
    if (!split || !(COMTRADE_PARTS as readonly string[]).includes(split.ext)) continue;
    const record = byBase.get(split.base) ?? { name: split.base };
    record[split.ext as (typeof COMTRADE_PARTS)[number]] = name;
    byBase.set(split.base, record);
  }
  return [...byBase.values()].filter((r) => (r.cfg !== undefined && r.dat !== undefined) || r.cff !== undefined);
}

/**
 * One page of a directory (FileDirectory): `path` names it (the device's root when absent), `continueAfter`
 * the last name of the page before. Each entry says what it is.
 */
export async function fileDirectory(
  client: MmsRequester,
  path?: string,
  continueAfter?: string,
): Promise<{ entries: FileEntry[]; moreFollows: boolean }> {
  const { entries, moreFollows } = await client.request({
    service: 'fileDirectory',
    ...(path === undefined || path === '' ? {} : { fileSpecification: path }),
    ...(continueAfter === undefined ? {} : { continueAfter }),
  });
  return { entries: entries.map((e) => ({ ...e, kind: fileKind(e.name) })), moreFollows };
}

/** Deletes a file of the device's file store (FileDelete); the device's refusal is an `MmsError` of class `file`. */
export async function deleteFile(client: MmsRequester, name: string): Promise<void> {
  await client.request({ service: 'fileDelete', fileName: name });
}

/** One piece of a file as FileRead answers it, and whether more follow. */
export type FilePiece = { data: Uint8Array; moreFollows: boolean };

/**
 * A file opened on the device (FileOpen): its size and time, its pieces one FileRead at a time, and
 * FileClose. The device keeps the file open (its FRSM) until closed or the association ends.
 */
export class DeviceFile {
  readonly name: string;
  readonly attributes: FileAttributes;
  readonly #client: MmsRequester;
  readonly #frsmId: number;
  #closed = false;

  private constructor(client: MmsRequester, name: string, frsmId: number, attributes: FileAttributes) {
    this.#client = client;
    this.name = name;
    this.#frsmId = frsmId;
    this.attributes = attributes;
  }

  /**
   * Opens `name` from its start through `client`; its reads and its close go through `later` (`client` by
   * default): a file opened within one caller's deadline may be read for others.
   */
  static async open(client: MmsRequester, name: string, later: MmsRequester = client): Promise<DeviceFile> {
    const { frsmId, size, lastModified } = await client.request({ service: 'fileOpen', fileName: name, initialPosition: 0 });
    return new DeviceFile(later, name, frsmId, lastModified === undefined ? { size } : { size, lastModified });
  }

  /** The next piece. */
  async read(): Promise<FilePiece> {
    const { data, moreFollows } = await this.#client.request({ service: 'fileRead', frsmId: this.#frsmId });
    return { data, moreFollows };
  }

  /** Closes the file on the device; once, whatever happens to the association meanwhile. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#client.closeReason) return;
    await this.#client.request({ service: 'fileClose', frsmId: this.#frsmId });
  }
}
