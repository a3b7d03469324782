import { createHash, randomUUID } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import Router from '@koa/router';
import {
  ConnectionRequest, ProblemError, readFileChunk, stageUploadChunk, uploadChunkBytes, validate,
  type Operation,
} from '@scada/contracts';
import { call, type Bus, type CallContext } from '@scada/platform';
import formidable, { type File } from 'formidable';
import type { Context } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';

/** What the upload and download routes need. */
export type SclFileRouteDeps = { bus: Bus; busTimeoutMs: number; maxSclBytes: number; sessions: SessionDeps };

/**
 * The routes that stream files: SCL uploads (multipart with a JSON `connection` part and an optional
 * `file` part) and downloads of stored files. An upload goes to a temporary file first (formidable,
 * bounded by MAX_SCL_BYTES), then over the bus in chunks the service stages, then the operation names
 * the staged upload; the gateway never holds more than one chunk. Downloads come back chunk by chunk.
 */
export function sclFileRoutes(ops: readonly Operation[], deps: SclFileRouteDeps): Router {
  const router = new Router();
  for (const op of ops) {
    const http = op.http;
    if (!http?.gatewayRoute) continue;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put';
    router[method](op.operationId, http.path, async (ctx) => {
      await authorize(ctx, http, deps.sessions);
      if (http.gatewayRoute === 'file-download') return download(ctx, deps);
      const reply = await upload(ctx, op, deps);
      ctx.status = http.status;
      if (http.status !== 204) ctx.body = reply;
    });
  }
  return router;
}

function callContext(ctx: Context, deps: SclFileRouteDeps): CallContext {
  return { requestId: ctx.state.requestId, space: ctx.state.space, actor: ctx.state.actor, clientIp: ctx.state.clientIp, timeoutMs: deps.busTimeoutMs };
}

async function upload(ctx: Context, op: Operation, deps: SclFileRouteDeps): Promise<unknown> {
  if (!ctx.is('multipart/form-data')) throw new ProblemError('unsupported_media_type', 'Send the connection and its file as multipart/form-data');
  // A body declared larger than the file limit plus room for the connection part is refused unread.
  if ((ctx.request.length ?? 0) > deps.maxSclBytes + 1024 * 1024) throw new ProblemError('payload_too_large', 'The upload is larger than MAX_SCL_BYTES');
  const { connectionText, file } = await readForm(ctx, deps.maxSclBytes);
  try {
    const connection = parseConnection(connectionText);
    const staged = file ? await stage(ctx, deps, file) : null;
    const message = { params: { ...ctx.params }, query: {}, body: { connection, upload: staged } };
    return await call(deps.bus, op, message as never, callContext(ctx, deps));
  } finally {
    if (file) await rm(file.filepath, { force: true });
  }
}

async function readForm(ctx: Context, maxBytes: number): Promise<{ connectionText: string; file: File | null }> {
  const form = formidable({
    uploadDir: tmpdir(),
    // Two, so that a second file is our own clear 400 rather than formidable's limit error.
    maxFiles: 2,
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes,
    allowEmptyFiles: true,
    minFileSize: 0,
    maxFields: 2,
    maxFieldsSize: 1024 * 1024,
  });
  // formidable removes its partial files itself when a limit stops the parse.
  const [fields, files] = await form.parse(ctx.req);
  const names = Object.keys(files);
  const fileList = files.file ?? [];
  if (names.some((n) => n !== 'file') || fileList.length > 1) {
    for (const f of Object.values(files).flat()) if (f) await rm(f.filepath, { force: true });
    throw new ProblemError('validation_failed', 'Send one file, in the part named file', { errors: [{ path: '/body/file', message: 'one file part named file' }] });
  }
  const connection = fields.connection;
  if (!connection || connection.length !== 1 || Object.keys(fields).length !== 1) {
    if (fileList[0]) await rm(fileList[0].filepath, { force: true });
    throw new ProblemError('validation_failed', 'The connection part is required, once', { errors: [{ path: '/body/connection', message: 'is required' }] });
  }
  return { connectionText: connection[0] as string, file: fileList[0] ?? null };
}

function parseConnection(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ProblemError('malformed_body', 'The connection part is not JSON', { cause: err });
  }
  const checked = validate(ConnectionRequest, value);
  if (!checked.ok) {
    throw new ProblemError('validation_failed', 'The connection does not match the schema', {
      errors: checked.errors.map((e) => ({ ...e, path: `/body/connection${e.path === '/' ? '' : e.path}` })),
    });
  }
  return value;
}

/** Sends the file to the service chunk by chunk; answers the staged upload the operation names. */
async function stage(ctx: Context, deps: SclFileRouteDeps, file: File) {
  const id = randomUUID();
  const hash = createHash('sha256');
  const handle = await open(file.filepath, 'r');
  const buffer = Buffer.alloc(uploadChunkBytes);
  let size = 0;
  let index = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, uploadChunkBytes, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      size += bytesRead;
      const body = { uploadId: id, index, data: chunk.toString('base64') };
      await call(deps.bus, stageUploadChunk, { params: {}, query: {}, body }, callContext(ctx, deps));
      index++;
    }
  } finally {
    await handle.close();
  }
  const name = (file.originalFilename ?? 'file.scl').replace(/[^\w.\- ]/g, '_').slice(0, 255) || 'file.scl';
  return { id, name, size, sha256: hash.digest('hex'), chunks: index };
}

async function download(ctx: Context, deps: SclFileRouteDeps): Promise<void> {
  const connectionId = ctx.params.connectionId as string;
  const chunkOf = (index: number) => call(deps.bus, readFileChunk, { params: { connectionId, index }, query: {} }, callContext(ctx, deps));
  const first = await chunkOf(0);
  ctx.set('Content-Type', 'application/xml');
  ctx.set('Content-Length', String(first.size));
  ctx.set('Content-Disposition', `attachment; filename="${first.name.replace(/[^\w.\- ]/g, '_')}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 200;
  ctx.body = Readable.from((async function* () {
    yield Buffer.from(first.data, 'base64');
    for (let i = 1; i < first.chunks; i++) yield Buffer.from((await chunkOf(i)).data, 'base64');
  })());
}
