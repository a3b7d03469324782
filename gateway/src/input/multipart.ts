import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { ProblemError } from '@scada/contracts';
import type { Context } from 'koa';
import { decodeUtf8 } from './text.ts';
import { assertClean } from './clean.ts';

/** A file part written to a temporary file; whoever receives it removes it. */
export type ReceivedFile = { path: string; name: string | null; size: number };

/** A multipart form as read: the text parts by name (in order), and the one file a route may take. */
export type MultipartForm = { fields: Map<string, string[]>; file: ReceivedFile | null };

/** What a route takes in a multipart body. */
export type MultipartRules = {
  /** Bytes of all text parts together. */
  textBytes: number;
  /** Most parts of any kind. */
  maxParts: number;
  /** The names of the parts the route takes; any other part is refused. Absent: any name. */
  names?: readonly string[];
  /** The part that carries a file, and its largest size. Absent: the route takes no file. */
  file?: { name: string; maxBytes: number };
};

/**
 * Reads a `multipart/form-data` body (already freed of its content coding) by the route's rules. A
 * text part is a part without a file name, or one whose type is `application/json` (what a browser's
 * `FormData` sends for a JSON `Blob`); it is read into memory as strict UTF-8. Only the route's file part
 * goes to disk, into a temporary file; any other file part answers 400 before a byte of it is kept.
 * When the form is refused, every file it wrote is removed before this returns.
 */
export async function readMultipart(ctx: Context, source: Readable, rules: MultipartRules): Promise<MultipartForm> {
  const reader = new FormReader(rules);
  let parser: InstanceType<typeof Busboy>;
  try {
    parser = new Busboy({
      headers: ctx.req.headers as never,
      isPartAFile: () => true,
      limits: { parts: rules.maxParts, fieldNameSize: 200, headerPairs: 20, fileSize: Infinity },
    });
  } catch (err) {
    throw new ProblemError('malformed_body', 'The multipart body has no usable boundary', { cause: err });
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (err: unknown) => {
        source.unpipe(parser);
        reject(err);
      };
      reader.onFail = fail;
      parser.on('file', (name, stream, filename, _encoding, mimeType) => reader.part(name, stream, filename, mimeType));
      parser.on('partsLimit', () =>
        fail(
          new ProblemError('validation_failed', `Send at most ${rules.maxParts} parts`, {
            errors: [{ path: '/body', message: `more than ${rules.maxParts} parts` }],
          }),
        ),
      );
      parser.on('error', (err: unknown) =>
        fail(new ProblemError('malformed_body', 'The multipart body is not well-formed', { cause: err })),
      );
      parser.on('finish', () => void reader.settled().then(resolve, fail));
      source.on('error', (err) => fail(undecodable(err)));
      ctx.req.once('close', () => {
        if (!ctx.req.complete) fail(new ProblemError('malformed_body', 'The body ended before it was complete'));
      });
      source.pipe(parser);
    });
    return reader.result();
  } catch (err) {
    await reader.discard();
    throw err;
  }
}

/** The problem for a body whose bytes stopped or did not decode on the way. */
export function undecodable(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_'))
    return new ProblemError('malformed_body', 'The body does not decode under its Content-Encoding', { cause: err });
  return new ProblemError('malformed_body', 'The body ended before it was complete', { cause: err });
}

const jsonType = /^application\/json$/i;

/** Collects the parts of one form and tracks what it wrote to disk. */
class FormReader {
  onFail: (err: unknown) => void = () => {};
  private readonly rules: MultipartRules;
  private readonly fields = new Map<string, string[]>();
  private readonly pending: Promise<void>[] = [];
  private readonly written: { path: string; stream: WriteStream }[] = [];
  private file: ReceivedFile | null = null;
  private textBytes = 0;
  private failed = false;

  constructor(rules: MultipartRules) {
    this.rules = rules;
  }

  part(name: string | undefined, stream: BusboyFileStream, filename: string | undefined, mimeType: string): void {
    if (this.failed) return void stream.resume();
    const field = name ?? '';
    const path = `/body/${field}`;
    if (this.rules.names && !this.rules.names.includes(field)) {
      return this.refuse(
        stream,
        new ProblemError('validation_failed', `Send only the parts ${this.rules.names.join(' and ')}`, {
          errors: [{ path, message: 'is not a part this route takes' }],
        }),
      );
    }
    if (this.rules.file && field === this.rules.file.name) return this.toDisk(field, stream, filename ?? null);
    if (filename === undefined || jsonType.test(mimeType)) return this.toText(field, stream);
    const problem = this.rules.file
      ? new ProblemError(
          'validation_failed',
          `Send the file in the part named ${this.rules.file.name}; ${field} is text (a field, or application/json)`,
          { errors: [{ path, message: 'must be text, not a file' }] },
        )
      : new ProblemError('validation_failed', 'This route takes no file', {
          errors: [{ path, message: 'is a file; this route takes none' }],
        });
    this.refuse(stream, problem);
  }

  /** Waits until every part has been read and written. */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  result(): MultipartForm {
    return { fields: this.fields, file: this.file };
  }

  /** Removes every file this form wrote (its streams closed first). */
  async discard(): Promise<void> {
    this.failed = true;
    await Promise.all(
      this.written.map(async ({ path, stream }) => {
        if (!stream.closed) await new Promise<void>((resolve) => stream.destroy().once('close', () => resolve()));
        await rm(path, { force: true });
      }),
    );
  }

  private refuse(stream: Readable, problem: ProblemError): void {
    stream.resume();
    this.fail(problem);
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.onFail(err);
  }

  private toText(field: string, stream: Readable): void {
    const chunks: Buffer[] = [];
    this.pending.push(
      new Promise<void>((resolve) => {
        stream.on('data', (chunk: Buffer) => {
          this.textBytes += chunk.length;
          if (this.textBytes > this.rules.textBytes) {
            this.fail(new ProblemError('payload_too_large', `The text parts are larger than ${this.rules.textBytes} bytes`));
          } else chunks.push(chunk);
        });
        stream.on('end', () => {
          if (this.failed) return resolve();
          try {
            const text = decodeUtf8(Buffer.concat(chunks), `The ${field} part is not valid UTF-8`);
            assertClean(text, `/body/${field}`);
            const list = this.fields.get(field) ?? [];
            list.push(text);
            this.fields.set(field, list);
          } catch (err) {
            this.fail(err);
          }
          resolve();
        });
      }),
    );
  }

  private toDisk(field: string, stream: BusboyFileStream, filename: string | null): void {
    if (this.file || this.written.length > 0) {
      return this.refuse(
        stream,
        new ProblemError('validation_failed', `Send one file, in the part named ${field}`, {
          errors: [{ path: `/body/${field}`, message: 'is sent more than once' }],
        }),
      );
    }
    const max = this.rules.file?.maxBytes ?? 0;
    const path = join(tmpdir(), `scada-upload-${randomUUID()}`);
    const out = createWriteStream(path, { mode: 0o600 });
    this.written.push({ path, stream: out });
    let size = 0;
    this.pending.push(
      new Promise<void>((resolve) => {
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > max) {
            stream.unpipe(out);
            stream.resume();
            this.fail(new ProblemError('payload_too_large', `The file is larger than ${max} bytes`));
          }
        });
        out.on('error', (err) => this.fail(err));
        out.on('close', () => resolve());
        stream.pipe(out);
        stream.on('end', () => {
          if (!this.failed) this.file = { path, name: filename, size };
        });
      }),
    );
  }
}
