/**
 * The captured MMS traffic of real devices beside the project (`../shared/iec61850`, absent in some clones),
 * frame by frame, and hex in and out.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The folder of the shared captures (`../shared/iec61850`). */
export const CAPTURES = fileURLToPath(new URL('../../../shared/iec61850/', import.meta.url));

/** True when the captures are there to read. */
export const haveCaptures = existsSync(CAPTURES);

/** One captured frame. */
export type CapturedFrame = {
  file: string;
  line: number /** Capture time, ms since 1970. */;
  time: number;
  direction: 'C->S' | 'S->C';
  length: number;
  bytes: Uint8Array;
};

/** Bytes from hex, spaces allowed. */
export function fromHex(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, '');
  if (!/^([0-9a-f]{2})*$/i.test(clean)) throw new Error(`not hex: ${hex}`);
  return Uint8Array.from(clean.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** Hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Every frame line of every capture log; marker lines (`----`, no bytes) are skipped. */
export function capturedFrames(): CapturedFrame[] {
  if (!haveCaptures) return [];
  const out: CapturedFrame[] = [];
  for (const file of readdirSync(CAPTURES)
    .filter((f) => f.endsWith('.log'))
    .sort()) {
    readFileSync(`${CAPTURES}${file}`, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        const [stamp, direction, len, hex] = text.trim().split(/\s+/);
        if (direction !== 'C->S' && direction !== 'S->C') return;
        out.push({
          file,
          line: i + 1,
          time: Math.round(Number(stamp) * 1000),
          direction,
          length: Number(len.replace('len=', '')),
          bytes: fromHex(hex ?? ''),
        });
      });
  }
  return out;
}
