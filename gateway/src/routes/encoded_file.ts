import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Context } from 'koa';
import Negotiator from 'negotiator';

/** A content coding the gateway sends a static file in: as it is, or compressed at build time. */
export type Coding = 'br' | 'gzip' | 'identity';

/** The bytes of one coding of a file and their strong ETag. */
type Variant = { body: Buffer; etag: string };

/** A static file with its media type and each coding of it the build wrote. */
export type EncodedFile = { type: string; variants: Map<Coding, Variant> };

/** The codings in the order the gateway prefers among those a client rates the same: smallest first. */
const preferred: readonly Coding[] = ['br', 'gzip', 'identity'];

/** Where each compressed coding lies beside the file. */
const suffixes: Record<Exclude<Coding, 'identity'>, string> = { br: '.br', gzip: '.gz' };

/**
 * Reads `path` and the compressed files the build wrote beside it (`.br`, `.gz`); a coding whose file is
 * missing (a build from before they were written) is simply not offered.
 */
export async function readEncodedFile(path: string, type: string): Promise<EncodedFile> {
  const variants = new Map<Coding, Variant>([['identity', variant(await readFile(path))]]);
  for (const coding of ['br', 'gzip'] as const) {
    const body = await readFile(`${path}${suffixes[coding]}`).catch(() => null);
    if (body) variants.set(coding, variant(body));
  }
  return { type, variants };
}

/** The bytes with their ETag: a hash of exactly what is sent, so each coding has its own. */
function variant(body: Buffer): Variant {
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * The coding to send: the best the client's `Accept-Encoding` accepts (q-values honoured, `q=0` refuses
 * one, Brotli before gzip when it rates them the same); `identity` without the header, and also when the
 * client refuses every coding there is, since the bytes as they are are all that is left to send.
 */
export function chooseCoding(headers: Record<string, string | string[] | undefined>, offered: readonly Coding[]): Coding {
  const order = preferred.filter((c) => offered.includes(c));
  const [best] = new Negotiator({ headers }).encodings(order, { preferred: order });
  return (best as Coding | undefined) ?? 'identity';
}

/**
 * Answers the file in the coding the client takes best, with `Content-Encoding` (unless identity),
 * `Vary: Accept-Encoding`, the coding's length and ETag, and 304 without a body when `If-None-Match`
 * names that ETag. A HEAD gets the same headers (Koa sends no body for it).
 */
export function sendEncoded(ctx: Context, file: EncodedFile): void {
  const coding = chooseCoding(ctx.headers, [...file.variants.keys()]);
  const chosen = file.variants.get(coding) as Variant;
  ctx.vary('Accept-Encoding');
  ctx.type = file.type;
  ctx.etag = chosen.etag;
  if (coding !== 'identity') ctx.set('Content-Encoding', coding);
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = chosen.body;
}
