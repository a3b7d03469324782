/**
 * Downloads of device files under way on the replica holding their connections. A download is a file the
 * device opened (FileOpen) and hands over one FileRead at a time, each read started as the one before is
 * answered, while up to {@link READ_AHEAD_BYTES} wait to be asked for. The gateway asks for the file in
 * chunks, one after the other: a chunk is what the device has sent since the chunk before (waited for only
 * when nothing is there yet), at most one bus message. A file larger than the limit is closed at once
 * (413); so is one whose device sends more than it announced, one whose download the gateway ends, and one
 * nobody asked a chunk of for `idleMs`. The file is closed on the device after its last piece. A connection
 * has at most `maxDownloadsPerConnection` downloads under way (opening ones included): each holds a file
 * open on the device and what is read ahead here; one more is refused at once with 503 `overloaded`.
 */
import { randomUUID } from 'node:crypto';
import { maxDownloadsPerConnection, ProblemError } from '@scada/contracts';
import type { LiveDevice, OpenDeviceFile } from './live_device.ts';

/** What the opening of a download answers. */
export type OpenedDownload = { download: string; name: string; size: number; lastModified: string | null };

type Piece = { data: Uint8Array; moreFollows: boolean };

type Download = {
  id: string;
  /** The space and connection it belongs to: only requests of that connection reach it. */
  owner: string;
  file: OpenDeviceFile;
  /** The index of the chunk asked for next. */
  next: number;
  /** Pieces read from the device and not handed over yet. */
  queue: Uint8Array[];
  queued: number;
  /** The FileRead under way. */
  reading: Promise<void> | undefined;
  /** Why reading stopped: a failed FileRead, or a piece past the limits. */
  failure: unknown;
  /** Octets the device has sent. */
  received: number;
  /** The device's last piece has arrived. */
  deviceDone: boolean;
  /** A chunk is being answered. */
  busy: boolean;
  /** Empty pieces in a row. */
  empty: number;
  idle: NodeJS.Timeout | undefined;
};

/** Empty pieces a device may send in a row (with more following) before it is taken to be stuck. */
const MAX_EMPTY_PIECES = 3;

/**
 * Octets read ahead from the device at most, while the ones before travel to the client: four pieces of
 * the usual largest PDU (65,000), so that the device is never kept waiting by a chunk on its way, and a
 * download holds no more than this (and one piece) however large its file.
 */
export const READ_AHEAD_BYTES = 256 * 1024;

/** Seconds a refused download is told to wait: a download under way usually ends within them (one nobody reads ends after `idleMs`). */
const RETRY_AFTER_SECONDS = 5;

/** The downloads of one replica. */
export class FileDownloads {
  readonly #downloads = new Map<string, Download>();
  /** Downloads being opened on the device, by connection. */
  readonly #opening = new Map<string, number>();
  readonly #maxBytes: number;
  readonly #idleMs: number;
  readonly #chunkBytes: number;

  /**
   * `maxBytes`: MAX_FILE_DOWNLOAD_BYTES; `chunkBytes`: the most octets of a chunk (what one bus message
   * carries, less room for its headers); `idleMs`: how long a download waits for its next chunk to be asked.
   */
  constructor(options: { maxBytes: number; chunkBytes: number; idleMs?: number }) {
    this.#maxBytes = options.maxBytes;
    this.#chunkBytes = options.chunkBytes;
    this.#idleMs = options.idleMs ?? 30_000;
  }

  /** Downloads under way. */
  get size(): number {
    return this.#downloads.size;
  }

  /**
   * Opens `path` on the device for the connection `owner` (space and id); a file past the limit is closed
   * again and refused, and so is one the device opened after the caller's `deadline` (ms since 1970): its
   * caller was answered 504 and would never read it.
   */
  async open(owner: string, device: LiveDevice, path: string, deadline = Infinity): Promise<OpenedDownload> {
    const opening = this.#opening.get(owner) ?? 0;
    let underWay = opening;
    for (const d of this.#downloads.values()) if (d.owner === owner) underWay++;
    if (underWay >= maxDownloadsPerConnection)
      throw new ProblemError('overloaded', `The connection has ${underWay} file downloads under way, as many as it takes`, {
        retryAfter: RETRY_AFTER_SECONDS,
      });
    this.#opening.set(owner, opening + 1);
    let file: OpenDeviceFile;
    try {
      file = await device.openFile(path);
    } finally {
      const left = (this.#opening.get(owner) ?? 1) - 1;
      if (left > 0) this.#opening.set(owner, left);
      else this.#opening.delete(owner);
    }
    if (Date.now() >= deadline) {
      await file.close().catch(() => undefined);
      throw new ProblemError('upstream_timeout', `The device opened ${path} after the request's deadline; it was closed again`);
    }
    if (file.size > this.#maxBytes) {
      await file.close().catch(() => undefined);
      throw new ProblemError(
        'payload_too_large',
        `${path} has ${file.size} octets, more than MAX_FILE_DOWNLOAD_BYTES (${this.#maxBytes}); it was closed on the device`,
      );
    }
    const d: Download = {
      id: randomUUID(),
      owner,
      file,
      next: 0,
      queue: [],
      queued: 0,
      reading: undefined,
      failure: undefined,
      received: 0,
      deviceDone: false,
      busy: false,
      empty: 0,
      idle: undefined,
    };
    this.#downloads.set(d.id, d);
    this.#pump(d);
    this.#armIdle(d);
    return { download: d.id, name: file.name, size: file.size, lastModified: file.lastModified ?? null };
  }

  /** The chunk `index` of a download (the next one, always); the file is closed once its last chunk is out. */
  async chunk(owner: string, id: string, index: number): Promise<{ data: Uint8Array; done: boolean }> {
    const d = this.#find(owner, id);
    if (d.busy || index !== d.next) throw new ProblemError('conflict', `Chunk ${index} of download ${id} was asked; ${d.next} is next`);
    d.busy = true;
    clearTimeout(d.idle);
    try {
      await this.#fill(d);
      const data = this.#take(d);
      d.next++;
      const done = d.deviceDone && d.queued === 0;
      // the FileClose leaves now, but the last chunk does not wait for its answer
      if (done) void this.#end(d);
      else this.#pump(d);
      return { data, done };
    } catch (err) {
      await this.#end(d);
      throw err;
    } finally {
      d.busy = false;
      if (this.#downloads.has(d.id)) this.#armIdle(d);
    }
  }

  /** Ends a download before its last chunk: the file is closed on the device. One already ended changes nothing. */
  async close(owner: string, id: string): Promise<void> {
    const d = this.#downloads.get(id);
    if (d && d.owner === owner) await this.#end(d);
  }

  #find(owner: string, id: string): Download {
    const d = this.#downloads.get(id);
    if (!d || d.owner !== owner)
      throw new ProblemError('not_found', `Download ${id} is not under way here (it ended, or the connection moved)`);
    return d;
  }

  /** Waits until the device has sent something not handed over yet, or its last piece; a failure of reading is the chunk's. */
  async #fill(d: Download): Promise<void> {
    for (;;) {
      if (d.failure !== undefined) throw d.failure;
      if (d.queued > 0 || d.deviceDone) return;
      // ended meanwhile: nothing would be read any more, and waiting for it would spin
      if (!this.#downloads.has(d.id)) throw new ProblemError('not_found', `Download ${d.id} ended while its chunk was awaited`);
      this.#pump(d);
      await d.reading;
    }
  }

  /** Takes a piece the device sent, holding it to the size it announced and to the limit. */
  #accept(d: Download, piece: Piece): void {
    d.received += piece.data.length;
    if (d.received > this.#maxBytes)
      throw new ProblemError('payload_too_large', `${d.file.name} grew past MAX_FILE_DOWNLOAD_BYTES (${this.#maxBytes}) while it was read`);
    if (d.received > d.file.size)
      throw new ProblemError('bad_gateway', `The device sent more of ${d.file.name} than the ${d.file.size} octets it announced`);
    d.empty = piece.data.length === 0 && piece.moreFollows ? d.empty + 1 : 0;
    if (d.empty > MAX_EMPTY_PIECES) throw new ProblemError('bad_gateway', `The device sends empty pieces of ${d.file.name}`);
    if (piece.data.length > 0) d.queue.push(piece.data);
    d.queued += piece.data.length;
    if (!piece.moreFollows) d.deviceDone = true;
  }

  /** Starts the next FileRead unless one is under way, the device is done, or enough is read ahead. */
  #pump(d: Download): void {
    if (d.reading || d.deviceDone || d.failure !== undefined || d.queued >= READ_AHEAD_BYTES) return;
    if (!this.#downloads.has(d.id)) return;
    d.reading = d.file.read().then(
      (piece) => {
        d.reading = undefined;
        try {
          this.#accept(d, piece);
        } catch (err) {
          d.failure = err;
          return;
        }
        this.#pump(d);
      },
      (err: unknown) => {
        d.reading = undefined;
        d.failure = err;
      },
    );
  }

  /** At most one chunk's octets off the front of the queue: the piece itself when it is the only one. */
  #take(d: Download): Uint8Array {
    const size = Math.min(d.queued, this.#chunkBytes);
    const out = d.queue.length === 1 && d.queue[0].length === size ? d.queue[0] : new Uint8Array(size);
    if (out === d.queue[0]) d.queue.shift();
    else {
      for (let at = 0; at < size; ) {
        const head = d.queue[0];
        const n = Math.min(head.length, size - at);
        out.set(head.subarray(0, n), at);
        at += n;
        if (n === head.length) d.queue.shift();
        else d.queue[0] = head.subarray(n);
      }
    }
    d.queued -= size;
    return out;
  }

  #armIdle(d: Download): void {
    clearTimeout(d.idle);
    d.idle = setTimeout(() => void this.#end(d), this.#idleMs);
    d.idle.unref();
  }

  /** Forgets a download and closes its file on the device (once the read under way has settled). */
  async #end(d: Download): Promise<void> {
    if (!this.#downloads.delete(d.id)) return;
    clearTimeout(d.idle);
    await d.reading;
    d.queue = [];
    await d.file.close().catch(() => undefined);
  }
}
