import { Readable } from 'node:stream';
import Router from '@koa/router';
import { closeConnectionFile, openConnectionFile, readConnectionFileChunk, type Operation, type ResponseOf } from '@scada/contracts';
import { call, type Bus } from '@scada/platform';
import type { Context } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';
import { buildMessage } from './operations.ts';
import { callContext } from './scl_files.ts';

/** What the device file route needs. */
export type DeviceFileRouteDeps = { bus: Bus; busTimeoutMs: number; bodyLimitBytes: number; sessions: SessionDeps };

/**
 * Downloads of files from a connected device's file store (`gatewayRoute: device-file-download`): the file
 * is opened on the replica holding the connection (refusals, a file too large, a name the device has no
 * file of answer as problems before anything is sent), then streamed to the client chunk by chunk as the
 * client reads it, each chunk one bus request answered with what the device has sent meanwhile; the
 * gateway holds one chunk waiting for the client's socket and one on its way. A client that goes away, or
 * a chunk that fails, ends the download and closes the file on the device.
 */
export function deviceFileRoutes(ops: readonly Operation[], deps: DeviceFileRouteDeps): Router {
  const router = new Router();
  for (const op of ops) {
    const http = op.http;
    if (http?.gatewayRoute !== 'device-file-download') continue;
    router.get(op.operationId, http.path, async (ctx) => {
      await authorize(ctx, http, deps.sessions);
      const message = (await buildMessage(ctx, op, deps.bodyLimitBytes)) as { params: { connectionId: string }; query: { path: string } };
      await download(ctx, deps, message);
    });
  }
  return router;
}

/** A file name as a header's quoted string takes it: its last segment, with what a quoted string cannot hold replaced. */
function attachmentName(name: string): string {
  const last = name.replace(/\/+$/, '').split('/').at(-1) ?? 'file';
  return last.replace(/[^\w.\- ]/g, '_') || 'file';
}

async function download(ctx: Context, deps: DeviceFileRouteDeps, message: { params: { connectionId: string }; query: { path: string } }) {
  const { connectionId } = message.params;
  const opened = await call(deps.bus, openConnectionFile, message, callContext(ctx, deps, openConnectionFile));
  ctx.set('Content-Type', 'application/octet-stream');
  ctx.set('Content-Length', String(opened.size));
  ctx.set('Content-Disposition', `attachment; filename="${attachmentName(opened.name)}"`);
  if (opened.lastModified) ctx.set('Last-Modified', new Date(opened.lastModified).toUTCString());
  ctx.status = 200;
  if (ctx.method === 'HEAD') return closeDownload(ctx, deps, connectionId, opened.download);
  // One chunk waits for the socket at most: the next is asked for as soon as that one is written.
  ctx.body = Readable.from(chunks(ctx, deps, connectionId, opened), { highWaterMark: 1 });
}

/**
 * The file's chunks, asked one at a time as the client reads; its octets held to the size the device
 * announced. Ended early (the client left, a chunk failed), it closes the download.
 */
async function* chunks(ctx: Context, deps: DeviceFileRouteDeps, connectionId: string, opened: ResponseOf<typeof openConnectionFile>) {
  const params = { connectionId };
  let done = false;
  let sent = 0;
  try {
    for (let index = 0; !done; index++) {
      const query = { download: opened.download, index };
      const chunk = await call(deps.bus, readConnectionFileChunk, { params, query }, callContext(ctx, deps, readConnectionFileChunk));
      done = chunk.done;
      const data = Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
      sent += data.length;
      if (sent > opened.size || (done && sent < opened.size))
        throw new Error(`the device sent ${sent} octets of ${opened.name}, announced ${opened.size}`);
      if (data.length > 0) yield data;
    }
  } finally {
    if (!done) await closeDownload(ctx, deps, connectionId, opened.download);
  }
}

/** Ends a download before its last chunk; the file is closed on the device. */
async function closeDownload(ctx: Context, deps: DeviceFileRouteDeps, connectionId: string, download: string): Promise<void> {
  const message = { params: { connectionId }, query: { download } };
  await call(deps.bus, closeConnectionFile, message, callContext(ctx, deps, closeConnectionFile)).catch(() => undefined);
}
