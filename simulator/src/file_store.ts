/**
 * The simulated device's file store and its MMS file services: a tree of files held in memory (a
 * protection relay's disturbance records, say), listed by FileDirectory as relays list theirs: the
 * entries directly in the directory named, each with its full name, a directory as its name with a `/`,
 * a page at a time (continueAfter, moreFollows); files read by FileOpen, FileRead in pieces of the PDU
 * size, FileClose; files deleted by FileDelete. Each association has its own open files (FRSMs), closed
 * with it. A name with `..` is file-non-existent, as libiec61850 answers it.
 */
import type { DirectoryEntry, FileRequest, FileResponse } from '@scada/iec61850/wire';
import type { ServerError } from './server_pdus.ts';

/** One file of the store: its content and when it last changed (ISO). */
export type StoredFile = { data: Uint8Array; lastModified: string };

/** File service error codes (ISO 9506-2 FileProblem) the store answers with. */
export const FILE_ERROR = { other: 0, fileAccessDenied: 6, fileNonExistent: 7 } as const;

/** What the store answers a request with. */
export type FileOutcome = { ok: true; response: FileResponse } | { ok: false; error: ServerError };

type OpenFile = { file: StoredFile; position: number };

const fileProblem = (code: number): FileOutcome => ({ ok: false, error: { errorClass: 'file', code } });

/** Strips the slashes a client may put around a name: the store's names are relative (`COMTRADE/DR_0001.CFG`). */
function normalized(name: string): string {
  return name.replace(/^\/+/, '').replace(/\/+$/, '');
}

/** An association as the file store sees it: its FileRead answers hold what its negotiated PDU size leaves room for. */
export type FileClient = { readonly pduSize: number };

/** Octets of a FileRead answer besides its data (invoke id, tags, lengths, moreFollows). */
const FILE_READ_OVERHEAD = 20;

/** The files of a device and the files its associations have open. */
export class FileStore {
  readonly #files: Map<string, StoredFile>;
  readonly #open = new Map<object, Map<number, OpenFile>>();
  readonly #pageSize: () => number;
  readonly #refusals: () => Record<string, number> | undefined;
  readonly #deleteRefusals: () => Record<string, number> | undefined;
  #nextFrsm = 1;

  /**
   * `files` by name (`COMTRADE/DR_0001.CFG`); `pageSize` entries at most in one FileDirectory answer;
   * a FileRead answers as much as the association's PDU size holds; `refusals` names files whose opening is refused,
   * with the FileProblem code, and `deleteRefusals` those whose deletion is (each read at every request:
   * tests change them while the simulator runs).
   */
  constructor(
    files: Map<string, StoredFile>,
    options: {
      pageSize: () => number;
      refusals: () => Record<string, number> | undefined;
      deleteRefusals?: () => Record<string, number> | undefined;
    },
  ) {
    this.#files = files;
    this.#pageSize = options.pageSize;
    this.#refusals = options.refusals;
    this.#deleteRefusals = options.deleteRefusals ?? (() => undefined);
  }

  /** Answers a file service request of the association `owner`. */
  serve(owner: FileClient, r: FileRequest): FileOutcome {
    switch (r.service) {
      case 'fileDirectory':
        return this.#directory(r.fileSpecification ?? '', r.continueAfter);
      case 'fileOpen':
        return this.#openFile(owner, r.fileName);
      case 'fileRead':
        return this.#read(owner, r.frsmId);
      case 'fileClose': {
        const files = this.#open.get(owner);
        if (!files?.delete(r.frsmId)) return fileProblem(FILE_ERROR.other);
        return { ok: true, response: { service: 'fileClose' } };
      }
      case 'fileDelete':
        return this.#delete(r.fileName);
    }
  }

  /** Forgets the files an association had open (it ended). */
  release(owner: object): void {
    this.#open.delete(owner);
  }

  /** Files the association has open now. */
  openCount(owner?: object): number {
    if (owner !== undefined) return this.#open.get(owner)?.size ?? 0;
    let n = 0;
    for (const files of this.#open.values()) n += files.size;
    return n;
  }

  /** The entries directly in a directory (or the one file a name names), sorted by name. */
  #entries(spec: string): DirectoryEntry[] | undefined {
    const name = normalized(spec);
    const file = this.#files.get(name);
    if (file) return [{ name, size: file.data.length, lastModified: file.lastModified }];
    const prefix = name === '' ? '' : `${name}/`;
    const entries = new Map<string, DirectoryEntry>();
    for (const [path, f] of this.#files) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) entries.set(path, { name: path, size: f.data.length, lastModified: f.lastModified });
      else {
        const dir = `${prefix}${rest.slice(0, slash)}/`;
        const seen = entries.get(dir);
        if (!seen || (seen.lastModified ?? '') < f.lastModified) entries.set(dir, { name: dir, size: 0, lastModified: f.lastModified });
      }
    }
    if (entries.size === 0 && name !== '') return undefined;
    return [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #directory(spec: string, continueAfter: string | undefined): FileOutcome {
    if (spec.includes('..') || continueAfter?.includes('..')) return fileProblem(FILE_ERROR.fileNonExistent);
    const all = this.#entries(spec);
    if (!all) return fileProblem(FILE_ERROR.fileNonExistent);
    const start = continueAfter === undefined ? 0 : all.findIndex((e) => e.name > continueAfter);
    const rest = start < 0 ? [] : all.slice(start);
    const entries = rest.slice(0, this.#pageSize());
    return { ok: true, response: { service: 'fileDirectory', entries, moreFollows: entries.length < rest.length } };
  }

  #openFile(owner: object, fileName: string): FileOutcome {
    const name = normalized(fileName);
    if (fileName.includes('..')) return fileProblem(FILE_ERROR.fileNonExistent);
    const refusal = this.#refusals()?.[name];
    if (refusal !== undefined) return fileProblem(refusal);
    const file = this.#files.get(name);
    if (!file) return fileProblem(FILE_ERROR.fileNonExistent);
    const frsmId = this.#nextFrsm++;
    const files = this.#open.get(owner) ?? new Map<number, OpenFile>();
    files.set(frsmId, { file, position: 0 });
    this.#open.set(owner, files);
    return { ok: true, response: { service: 'fileOpen', frsmId, size: file.data.length, lastModified: file.lastModified } };
  }

  /** Deletes a file (not a directory), as libiec61850's server does: refused first, then looked for. */
  #delete(fileName: string): FileOutcome {
    const name = normalized(fileName);
    if (fileName.includes('..')) return fileProblem(FILE_ERROR.fileNonExistent);
    const refusal = this.#deleteRefusals()?.[name];
    if (refusal !== undefined) return fileProblem(refusal);
    if (!this.#files.delete(name)) return fileProblem(FILE_ERROR.fileNonExistent);
    return { ok: true, response: { service: 'fileDelete' } };
  }

  #read(owner: FileClient, frsmId: number): FileOutcome {
    const open = this.#open.get(owner)?.get(frsmId);
    if (!open) return fileProblem(FILE_ERROR.other);
    const data = open.file.data.subarray(open.position, open.position + owner.pduSize - FILE_READ_OVERHEAD);
    open.position += data.length;
    return { ok: true, response: { service: 'fileRead', data, moreFollows: open.position < open.file.data.length } };
  }
}
