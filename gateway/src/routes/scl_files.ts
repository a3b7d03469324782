import { createHash, randomUUID } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import Router from '@koa/router';
import {
  ConnectionRequest,
  deadlineOf,
  ProblemError,
  readFileChunk,
  stageUploadChunk,
  uploadChunkBytes,
  validate,
  type Operation,
} from '@scada/contracts';
import { call, type Bus, type CallContext } from '@scada/platform';
import { decodedStream, mediaTypeOf } from '../input/body.ts';
import { readMultipart, type ReceivedFile } from '../input/multipart.ts';
import { parseJsonText } from '../input/text.ts';
import type { Context } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';
import { setJson } from '../json.ts';

/** What the upload and download routes need. */
export type SclFileRouteDeps = { bus: Bus; busTimeoutMs: number; maxSclBytes: number; sessions: SessionDeps };

/** Room for the connection part beside the file. */
const textLimit = 1024 * 1024;

/**
 * The routes that stream files: SCL uploads (multipart with a JSON `connection` part and an optional
 * `file` part) and downloads of stored files. An upload goes to a temporary file first (bounded by
 * MAX_SCL_BYTES, removed when the request ends, whatever its outcome), then over the bus in chunks the service stages, then the operation names
 * the staged upload; the gateway never holds more than one chunk. Downloads come back chunk by chunk.
 */
export function sclFileRoutes(ops: readonly Operation[], deps: SclFileRouteDeps): Router {
  const router = new Router();
  for (const op of ops) {
    const http = op.http;
    if (http?.gatewayRoute !== 'scl-upload' && http?.gatewayRoute !== 'file-download') continue;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put';
    router[method](op.operationId, http.path, async (ctx) => {
      await authorize(ctx, http, deps.sessions);
      if (http.gatewayRoute === 'file-download') return download(ctx, deps);
      const reply = await upload(ctx, op, deps);
      ctx.status = http.status;
      if (http.status !== 204) setJson(ctx, reply);
    });
  }
  return router;
}

/** The context of one call a file route makes: the caller, and the deadline of the operation called. */
export function callContext(ctx: Context, deps: { busTimeoutMs: number }, op: Operation): CallContext {
  return {
    requestId: ctx.state.requestId,
    space: ctx.state.space,
    actor: ctx.state.actor,
    clientIp: ctx.state.clientIp,
    timeoutMs: deadlineOf(op, deps.busTimeoutMs),
  };
}

async function upload(ctx: Context, op: Operation, deps: SclFileRouteDeps): Promise<unknown> {
  mediaTypeOf(ctx, ['multipart/form-data']);
  // A body declared larger than the file limit plus room for the connection part is refused unread.
  if ((ctx.request.length ?? 0) > deps.maxSclBytes + textLimit)
    throw new ProblemError('payload_too_large', 'The upload is larger than MAX_SCL_BYTES');
  const form = await readMultipart(ctx, decodedStream(ctx), {
    textBytes: textLimit,
    maxParts: 4,
    names: ['connection', 'file'],
    file: { name: 'file', maxBytes: deps.maxSclBytes },
  });
  try {
    const connection = parseConnection(form.fields.get('connection'));
    const staged = form.file ? await stage(ctx, deps, form.file) : null;
    const message = { params: { ...ctx.params }, query: {}, body: { connection, upload: staged } };
    return await call(deps.bus, op, message as never, callContext(ctx, deps, op));
  } finally {
    if (form.file) await rm(form.file.path, { force: true });
  }
}

/**
 * The `connection` part: JSON text, sent once, as a plain field or as a part of type application/json
 * with a file name (a browser's FormData with a JSON Blob). Checked against the connection schema here.
 */
function parseConnection(parts: string[] | undefined): unknown {
  if (parts?.length !== 1) {
    throw new ProblemError('validation_failed', 'The connection part is required, once', {
      errors: [{ path: '/body/connection', message: 'is required, once' }],
    });
  }
  const value = parseJsonText(parts[0] as string, '/body/connection', 'The connection part');
  const checked = validate(ConnectionRequest, value);
  if (!checked.ok) {
    throw new ProblemError('validation_failed', 'The connection does not match the schema', {
      errors: checked.errors.map((e) => ({ ...e, path: `/body/connection${e.path === '/' ? '' : e.path}` })),
    });
  }
  return value;
}

/** Sends the file to the service chunk by chunk; answers the staged upload the operation names. */
async function stage(ctx: Context, deps: SclFileRouteDeps, file: ReceivedFile) {
  const id = randomUUID();
  const hash = createHash('sha256');
  const handle = await open(file.path, 'r');
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
      await call(deps.bus, stageUploadChunk, { params: {}, query: {}, body }, callContext(ctx, deps, stageUploadChunk));
      index++;
    }
  } finally {
    await handle.close();
  }
  const name = (file.name ?? 'file.scl').replace(/[^\w.\- ]/g, '_').slice(0, 255) || 'file.scl';
  return { id, name, size, sha256: hash.digest('hex'), chunks: index };
}

async function download(ctx: Context, deps: SclFileRouteDeps): Promise<void> {
  const connectionId = ctx.params.connectionId as string;
  const chunkOf = (index: number) =>
    call(deps.bus, readFileChunk, { params: { connectionId, index }, query: {} }, callContext(ctx, deps, readFileChunk));
  const first = await chunkOf(0);
  ctx.set('Content-Type', 'application/xml');
  ctx.set('Content-Length', String(first.size));
  ctx.set('Content-Disposition', `attachment; filename="${first.name.replace(/[^\w.\- ]/g, '_')}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 200;
  ctx.body = Readable.from(
    (async function* () {
      yield Buffer.from(first.data, 'base64');
      for (let i = 1; i < first.chunks; i++) yield Buffer.from((await chunkOf(i)).data, 'base64');
    })(),
  );
}
