import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * Unpacks a store template (a data folder dumped by PGlite, `.tar` or gzip-compressed `.tar.gz`) into
 * `dir`, synchronously, every folder 0700 and every file 0600; answers how many files it wrote.
 *
 * The archive is inflated in one piece, into one buffer of the size its gzip trailer names, and each file
 * is written from a view of that buffer, so nothing but that buffer is allocated; it goes back to the
 * system as a whole once collected. Read and inflated piece by piece (the `tar` package, 64 KiB at a
 * time), the thousands of small buffers came from the C allocator's main heap, which kept 18 MiB of them
 * for the life of the process after they were freed (bench/README.md, "An edge box").
 *
 * Only what PGlite's dumps hold is taken: regular files and folders with names of up to 100 characters
 * (its names start at the root, `/base/...`, and are made relative to `dir`). Anything else (links,
 * devices, long names, a name leaving `dir`, a damaged header) is refused with an error.
 */
export function unpackStoreTemplate(file: string, dir: string): number {
  const packed = readFileSync(file);
  const bytes = packed[0] === 0x1f && packed[1] === 0x8b ? inflate(packed) : packed;
  let files = 0;
  let at = 0;
  for (;;) {
    if (at + 512 > bytes.length) throw new Error(`${file}: the archive ends without its end marker`);
    const header = bytes.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return files;
    if (checksum(header) !== octal(header, 148, 8)) throw new Error(`${file}: a damaged header at byte ${at}`);
    const name = text(header, 0, 100);
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156]!);
    at += 512;
    if (type === '5' && /^[/.]*$/.test(name)) continue; // the root itself
    const path = inside(dir, name, file);
    if (type === '5') {
      mkdirSync(path, { recursive: true, mode: 0o700 });
    } else if (type === '0' || type === '\0') {
      if (at + size > bytes.length) throw new Error(`${file}: ${name} is cut short`);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, bytes.subarray(at, at + size), { mode: 0o600 });
      files++;
    } else {
      throw new Error(`${file}: ${name} is neither a file nor a folder (type ${JSON.stringify(type)})`);
    }
    at += Math.ceil(size / 512) * 512;
  }
}

/** Inflates a gzip file into one buffer: its trailer names the size (modulo 2^32), so zlib writes one piece. */
function inflate(packed: Buffer): Buffer {
  const named = packed.readUInt32LE(packed.length - 4);
  return gunzipSync(packed, { chunkSize: Math.max(64 * 1024, named + 1) });
}

function text(header: Buffer, start: number, length: number): string {
  const field = header.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
}

function octal(header: Buffer, start: number, length: number): number {
  const digits = text(header, start, length).trim();
  if (!/^[0-7]+$/.test(digits)) return Number.NaN;
  return Number.parseInt(digits, 8);
}

/** The header's checksum: the sum of its bytes with the checksum field read as spaces. */
function checksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return sum;
}

/** Where an entry goes: its name from the root made relative to `dir`; a name that leaves `dir` is refused. */
function inside(dir: string, name: string, file: string): string {
  const relative = normalize(name.replace(/^\/+/, ''));
  if (relative === '' || relative === '.' || relative === '..' || relative.startsWith(`..${sep}`)) {
    throw new Error(`${file}: the entry ${JSON.stringify(name)} does not name a place inside the data folder`);
  }
  return join(dir, relative);
}
