import { pipeline, type Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { ProblemError } from '@scada/contracts';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { assertClean } from './clean.ts';
import { readMultipart, undecodable, type MultipartRules } from './multipart.ts';
import { decodeUtf8, parseJsonText } from './text.ts';

/** The body media types a route may take. */
export type BodyType = 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data' | 'text/plain';

/** A request body as read: a JSON value, the fields of a form (a repeated field as a list), or text. */
export type Body =
  | { type: 'application/json'; value: unknown }
  | { type: 'application/x-www-form-urlencoded' | 'multipart/form-data'; value: Record<string, string | string[]> }
  | { type: 'text/plain'; value: string };

/** What a route takes as its body. */
export type BodyRules = {
  accepts: readonly BodyType[];
  /** Largest body, counted after its content coding is undone. */
  limit: number;
  /** Parts a multipart body may have (20 unless said). */
  maxParts?: number;
};

/** The content codings every route takes besides `identity`, and how each is undone. */
const decoders: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => createInflate(),
};

/**
 * Reads a request body by the route's rules; undefined when the request has none. Everything a client
 * can get wrong is a 4xx here and nothing reaches a service: a media type the route does not take, a
 * charset other than UTF-8 or a content coding other than identity, gzip and deflate (415); bytes that
 * do not decode under their coding, text that is not UTF-8, JSON that is not JSON (400 `malformed_body`);
 * a string with U+0000 or an unpaired surrogate, nesting past 64 levels, a file part (400
 * `validation_failed`); more than the limit (413).
 */
export async function readBody(ctx: Context, rules: BodyRules): Promise<Body | undefined> {
  if (!hasBody(ctx)) return undefined;
  const type = mediaTypeOf(ctx, rules.accepts);
  if (type === 'multipart/form-data') {
    const form = await readMultipart(ctx, decodedStream(ctx), {
      textBytes: rules.limit,
      maxParts: rules.maxParts ?? 20,
    } satisfies MultipartRules);
    return { type, value: Object.fromEntries([...form.fields].map(([k, v]) => [k, v.length === 1 ? (v[0] as string) : v])) };
  }
  const text = decodeUtf8(await readBytes(ctx, rules.limit));
  if (type === 'text/plain') {
    assertClean(text, '/body');
    return { type, value: text };
  }
  if (type === 'application/x-www-form-urlencoded') return { type, value: parseUrlencoded(text) };
  return { type, value: parseJsonText(text, '/body') };
}

/** True when the request says it carries a body. */
export function hasBody(ctx: Context): boolean {
  return Boolean(ctx.request.length) || ctx.get('transfer-encoding') !== '';
}

/** The route's media type the body is sent as; 415 for another type or a charset other than UTF-8. */
export function mediaTypeOf<T extends BodyType>(ctx: Context, accepts: readonly T[]): T {
  const type = ctx.is(accepts as unknown as string[]);
  if (!type) throw new ProblemError('unsupported_media_type', `Send the body as ${accepts.join(' or ')}`);
  const charset = ctx.request.charset.toLowerCase();
  if (type !== 'multipart/form-data' && charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ProblemError('unsupported_media_type', `Send ${type} as UTF-8`);
  }
  return type as T;
}

/**
 * The request's bytes with their content coding undone. One coding at most, of identity, gzip and
 * deflate; any other answers 415 before a byte is read.
 */
export function decodedStream(ctx: Context): Readable {
  const codings = ctx
    .get('content-encoding')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return ctx.req;
  const make = codings.length === 1 ? decoders[codings[0] as string] : undefined;
  if (!make) throw new ProblemError('unsupported_media_type', 'Send the body with no content coding, or with gzip or deflate');
  const decoder = make();
  pipeline(ctx.req, decoder, () => {});
  return decoder as unknown as Readable;
}

/** The whole body, decoded, at most `limit` bytes (413 past it). */
async function readBytes(ctx: Context, limit: number): Promise<Buffer> {
  const source = decodedStream(ctx);
  const plain = source === ctx.req;
  try {
    return await getRawBody(source, { limit, length: plain ? ctx.request.length : undefined });
  } catch (err) {
    if ((err as { status?: unknown }).status === 413)
      throw new ProblemError('payload_too_large', `The body is larger than ${limit} bytes`, { cause: err });
    throw undecodable(err);
  }
}

/**
 * A urlencoded form, read by `URLSearchParams`: a repeated field becomes a list. Percent-escapes that are
 * not UTF-8 answer 400 `malformed_body` (`URLSearchParams` would read them as U+FFFD or leave them as
 * they are); the values are checked by {@link assertClean}.
 */
export function parseUrlencoded(text: string): Record<string, string | string[]> {
  if (text.includes('%')) {
    try {
      decodeURIComponent(text);
    } catch {
      throw new ProblemError('malformed_body', 'The form is not UTF-8 percent-encoding');
    }
  }
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const was = fields.get(name);
    fields.set(name, was === undefined ? value : Array.isArray(was) ? [...was, value] : [was, value]);
  }
  // Own properties, whatever the names (`__proto__` too).
  const form = Object.fromEntries(fields);
  assertClean(form, '/body');
  return form;
}

/** Past this many declared bytes a refused body is not read to its end: the connection is closed instead. */
const drainLimitBytes = 64 * 1024 * 1024;

/**
 * Lets go of the unread rest of a refused request's body. Read and dropped, so the client's keep-alive
 * connection stays usable for its next request; a body declared larger than 64 MiB is not read, and the
 * answer closes the connection instead.
 */
export function releaseBody(ctx: Context): void {
  if (ctx.req.complete || !hasBody(ctx)) return;
  if ((ctx.request.length ?? 0) > drainLimitBytes) {
    ctx.set('Connection', 'close');
    return;
  }
  ctx.req.unpipe();
  ctx.req.resume();
}
