import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';

/**
 * Unpacks a store template (a data folder dumped by PGlite, `.tar` or gzip-compressed `.tar.gz`) into
 * `dir`, synchronously, every folder 0700 and every file 0600; answers how many files it wrote.
 *
 * The archive is inflated in one piece, into one buffer of the size its gzip trailer names, and handed to
 * the `tar` package's parser whole: its entries' data are views of that buffer, each written as it comes,
 * so nothing but that buffer is allocated and it goes back to the system as a whole once collected. Read
 * and inflated piece by piece (64 KiB at a time), the thousands of small buffers came from the C
 * allocator's main heap, which kept 18 MiB of them for the life of the process after they were freed
 * (bench/README.md, "An edge box").
 *
 * Only what PGlite's dumps hold is taken: regular files and folders (their names start at the root,
 * `/base/...`, and are made relative to `dir`). Anything else (links, devices, a name leaving `dir`, a
 * damaged header: the parser is strict) is refused with an error.
 */
export function unpackStoreTemplate(file: string, dir: string): number {
  const packed = readFileSync(file);
  const bytes = packed[0] === 0x1f && packed[1] === 0x8b ? inflate(packed) : packed;
  let files = 0;
  let failure: Error | null = null;
  const fail = (err: Error) => {
    failure ??= err;
  };
  const take = (entry: ReadEntry) => {
    if (failure) return entry.resume();
    try {
      if (entry.type === 'Directory') {
        if (!/^[/.]*$/.test(entry.path)) mkdirSync(inside(dir, entry.path, file), { recursive: true, mode: 0o700 });
        return entry.resume();
      }
      if (entry.type !== 'File' && entry.type !== 'OldFile') {
        throw new Error(`${file}: ${entry.path} is neither a file nor a folder (${entry.type})`);
      }
      const path = inside(dir, entry.path, file);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const pieces: Buffer[] = [];
      // The parser hands a file's data on at once (the archive is in memory), as views of `bytes`.
      entry.on('data', (piece: Buffer) => pieces.push(piece));
      entry.on('end', () => {
        if (failure) return;
        try {
          writeFileSync(path, pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces), { mode: 0o600 });
          files++;
        } catch (err) {
          fail(err as Error);
        }
      });
    } catch (err) {
      fail(err as Error);
      entry.resume();
    }
  };
  const parser = new Parser({ strict: true, onReadEntry: take });
  parser.on('error', (err: Error) => fail(new Error(`${file}: ${err.message}`)));
  let ended = false;
  parser.on('end', () => {
    ended = true;
  });
  parser.end(bytes);
  if (failure) throw failure;
  if (!ended) throw new Error(`${file}: the archive ends without its end marker`);
  return files;
}

/** Inflates a gzip file into one buffer: its trailer names the size (modulo 2^32), so zlib writes one piece. */
function inflate(packed: Buffer): Buffer {
  const named = packed.readUInt32LE(packed.length - 4);
  return gunzipSync(packed, { chunkSize: Math.max(64 * 1024, named + 1) });
}

/** Where an entry goes: its name from the root made relative to `dir`; a name that leaves `dir` is refused. */
function inside(dir: string, name: string, file: string): string {
  const relative = normalize(name.replace(/^\/+/, ''));
  if (relative === '' || relative === '.' || relative === '..' || relative.startsWith(`..${sep}`)) {
    throw new Error(`${file}: the entry ${JSON.stringify(name)} does not name a place inside the data folder`);
  }
  return join(dir, relative);
}
