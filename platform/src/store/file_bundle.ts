import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The part of Emscripten's file system API this module uses (PGlite's `Module.FS`). */
export type MemoryFS = {
  readdir(path: string): string[];
  lookupPath(path: string, opts: { follow: boolean }): { node: MemoryNode };
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
};

type MemoryNode = { mode: number; contents?: unknown };

/** The file bundle PGlite loads at start (`pglite.data`), beside its module. */
export function fileBundlePath(): string {
  return fileURLToPath(new URL('pglite.data', import.meta.resolve('@electric-sql/pglite')));
}

/**
 * Gives back the memory of PGlite's file bundle once PostgreSQL has started. PGlite reads `pglite.data`
 * (PostgreSQL's `share` and `lib` folders: time zones, text-search dictionaries, encoding conversions,
 * initdb's catalogue, 6 MB) into one buffer, and every file of Emscripten's in-memory file system is a
 * view of it, all resident for the life of the process; a started PostgreSQL reads a few of them. Here
 * each such file's contents becomes a view read from the bundle's file on disk when PostgreSQL first
 * touches it (the same bytes, at the offset its view had), and the buffer is detached, so the memory
 * goes back once collected. Files written afterwards keep what was written. Answers how many files now
 * read on demand: 0, with nothing changed, when the bundle's file is not found or the buffer is not it (another PGlite
 * version or layout) or cannot be detached.
 */
export function releaseFileBundle(fs: MemoryFS, file?: string): number {
  let bundleFile: string;
  let size: number;
  try {
    bundleFile = file ?? fileBundlePath();
    size = statSync(bundleFile).size;
  } catch {
    // Not found where the package should be (a runtime that resolves packages elsewhere): kept in memory.
    return 0;
  }
  const views: { node: MemoryNode; view: Uint8Array }[] = [];
  const walk = (path: string) => {
    for (const name of fs.readdir(path)) {
      if (name === '.' || name === '..') continue;
      const child = path === '/' ? `/${name}` : `${path}/${name}`;
      // The kernel's and devices' folders are not memory files; the database's folder is on the disk.
      if (child === '/proc' || child === '/dev') continue;
      let node: MemoryNode;
      try {
        node = fs.lookupPath(child, { follow: false }).node;
      } catch {
        continue;
      }
      // A folder of another file system (the database's, on the disk) holds no contents of its own here.
      if (fs.isDir(node.mode)) {
        if (typeof node.contents === 'object' && node.contents !== null) walk(child);
      } else if (fs.isFile(node.mode) && node.contents instanceof Uint8Array && node.contents.buffer.byteLength === size)
        views.push({ node, view: node.contents });
    }
  };
  walk('/');
  const bundle = views[0]?.view.buffer;
  if (bundle === undefined || views.some((v) => v.view.buffer !== bundle) || !sameHead(new Uint8Array(bundle), bundleFile)) return 0;
  for (const { node, view } of views) onDemand(node, bundleFile, view.byteOffset, view.byteLength);
  try {
    // Moved into a buffer nobody holds: its memory goes with the next collection.
    structuredClone(bundle, { transfer: [bundle as ArrayBuffer] });
  } catch {
    // Not detachable here: the views above read the same bytes; the buffer stays as before.
  }
  return views.length;
}

/** Whether the buffer starts as the file does (its first 4 KiB). */
function sameHead(bytes: Uint8Array, file: string): boolean {
  const n = Math.min(4096, bytes.byteLength);
  const head = readRange(file, 0, n);
  return head.every((b, i) => b === bytes[i]);
}

function readRange(file: string, offset: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const fd = openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const n = readSync(fd, out, done, length - done, offset + done);
      if (n === 0) throw new Error(`${file}: ended at ${offset + done}, ${length - done} bytes short`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** The node's contents, read from `file` when first asked for; whatever is set afterwards is kept as set. */
function onDemand(node: MemoryNode, file: string, offset: number, length: number): void {
  let contents: unknown;
  let read = false;
  Object.defineProperty(node, 'contents', {
    configurable: true,
    enumerable: true,
    get() {
      if (!read) {
        contents = readRange(file, offset, length);
        read = true;
      }
      return contents;
    },
    set(value: unknown) {
      contents = value;
      read = true;
    },
  });
}
