import { createHash, randomUUID } from 'node:crypto';
import {
  browseConnection, createConnectionWithFile, deleteConnectionWithFile, getConnection, getConnections,
  getConnectionsByProject, getProject, ProblemError, readFileChunk, stageUploadChunk, uploadChunkBytes, updateConnectionWithFile,
  type ConnectionRequest,
} from '@scada/contracts';
import { call, implement, publishEvent, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import type { ProtocolConfig } from '../config.ts';
import { browseParts, checkConnection, parseScl, toBrowseTree, type SclModel } from '../iec61850/scl/mod.ts';
import { deleteConnection, findConnection, listConnections, saveConnection } from '../store/connections.ts';
import { adoptUpload, browseOf, fileChunk, packBrowsePart, setConnectionWarnings, stageChunk, stagedChunks, stagedCount, type FileFacts } from '../store/files.ts';

/** What the connection handlers use. */
export type ConnectionDeps = {
  store: Store;
  bus: Bus;
  config: ProtocolConfig;
  busTimeoutMs: number;
  /** The live model when the connection is connected (here or at its holder), else null. */
  liveBrowse?: (space: string, id: string, ctx: HandlerContext) => Promise<{ logicalDevices: unknown[] } | null>;
};

type Upload = { id: string; name: string; size: number; sha256: string; chunks: number };

const spaceOf = (ctx: HandlerContext) => {
  if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
  return ctx.space;
};
const actorOf = (ctx: HandlerContext) => {
  if (!ctx.actor) throw new ProblemError('unauthenticated', 'A change needs an authenticated caller');
  return ctx.actor.name;
};
const notFound = (id: string) => new ProblemError('not_found', `No connection ${id} in this space`);
const emptyModel: SclModel = { edition: 'unknown', ieds: [], subNetworks: [], templates: { lNodeTypes: [], doTypes: [], daTypes: [], enumTypes: [] } } as SclModel;

/** The connection use cases: with-file create and update, delete, reads, staging and reading file chunks. */
export function connectionHandlers(deps: ConnectionDeps): Implementation[] {
  /** The project must be one of the caller's space: the config service says so (404 otherwise). */
  const checkProject = async (ctx: HandlerContext, projectId: string) => {
    await call(deps.bus, getProject, { params: { projectId }, query: {} }, { requestId: ctx.requestId, space: ctx.space, actor: ctx.actor, timeoutMs: deps.busTimeoutMs });
  };

  /** Parses a staged upload as it is read from the store, checking its size and digest on the way. */
  const parseUpload = async (space: string, upload: Upload, connection: ConnectionRequest): Promise<FileFacts> => {
    if ((await stagedCount(deps.store, space, upload.id)) !== upload.chunks) throw new ProblemError('bad_request', 'The upload is incomplete');
    const hash = createHash('sha256');
    let size = 0;
    const counted = (async function* () {
      for await (const chunk of stagedChunks(deps.store, space, upload.id, upload.chunks)) {
        hash.update(chunk);
        size += chunk.length;
        yield new Uint8Array(chunk);
      }
    })();
    const result = await parseScl(counted);
    if (size !== upload.size || hash.digest('hex') !== upload.sha256) throw new ProblemError('bad_request', 'The upload does not match its size or digest');
    if (!result.ok) {
      const errors = result.report.errors.slice(0, 50).map((e) => ({ path: '/file', message: `line ${e.line}, column ${e.column}: ${e.message}` }));
      throw new ProblemError('scl_invalid', `The file is not valid SCL: ${errors[0]?.message ?? 'unreadable'}`, { errors });
    }
    return {
      name: upload.name, size, sha256: upload.sha256, edition: result.report.edition, chunks: upload.chunks,
      warnings: result.report.warnings, connectionWarnings: checkConnection(result.model, { ip: connection.ip, port: connection.port }),
      browse: [...browseParts(result.model)].map((p) => packBrowsePart(p.iedName, p.tree)),
    };
  };

  /** The connection checks of a kept file against a changed address, from the stored chunks. */
  const recheck = async (space: string, id: string, connection: ConnectionRequest) => {
    const first = await fileChunk(deps.store, space, id, 0);
    if (!first) return;
    const chunks = (async function* () {
      for (let i = 0; i < first.chunks; i++) yield new Uint8Array((await fileChunk(deps.store, space, id, i))!.data);
    })();
    const result = await parseScl(chunks);
    if (result.ok) await setConnectionWarnings(deps.store, space, id, checkConnection(result.model, { ip: connection.ip, port: connection.port }));
  };

  const save = async (ctx: HandlerContext, id: string, body: { connection: ConnectionRequest; upload: Upload | null }, create: boolean) => {
    const space = spaceOf(ctx);
    const actor = actorOf(ctx);
    if (!create && !(await findConnection(deps.store, space, id))) throw notFound(id);
    await checkProject(ctx, body.connection.projectId);
    const facts = body.upload ? await parseUpload(space, body.upload, body.connection) : null;
    try {
      await deps.store.transaction(async (tx) => {
        if (!(await saveConnection(tx, space, id, body.connection, actor, create))) throw notFound(id);
        if (facts && body.upload) await adoptUpload(tx, space, id, body.upload.id, facts);
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new ProblemError('conflict', `The project has a connection named ${body.connection.name}`);
      throw err;
    }
    if (!facts && !create) await recheck(space, id, body.connection);
    publishEvent(deps.bus, `events.protocol.connection.${create ? 'created' : 'updated'}`, { space, id, actor }, ctx.requestId);
  };

  return [
    implement(createConnectionWithFile, async ({ body }, ctx) => {
      const id = randomUUID();
      await save(ctx, id, body, true);
      return (await findConnection(deps.store, spaceOf(ctx), id))!;
    }),
    implement(updateConnectionWithFile, async ({ params, body }, ctx) => {
      await save(ctx, params.connectionId.toLowerCase(), body, false);
      return null;
    }),
    implement(deleteConnectionWithFile, async ({ params }, ctx) => {
      const space = spaceOf(ctx);
      if (!(await deleteConnection(deps.store, space, params.connectionId.toLowerCase()))) throw notFound(params.connectionId);
      publishEvent(deps.bus, 'events.protocol.connection.deleted', { space, id: params.connectionId.toLowerCase(), actor: actorOf(ctx) }, ctx.requestId);
      return null;
    }),
    implement(getConnections, async (_m, ctx) => listConnections(deps.store, spaceOf(ctx))),
    implement(getConnectionsByProject, async ({ query }, ctx) => listConnections(deps.store, spaceOf(ctx), query.projectId.toLowerCase())),
    implement(getConnection, async ({ params }, ctx) => (await findConnection(deps.store, spaceOf(ctx), params.connectionId.toLowerCase())) ?? Promise.reject(notFound(params.connectionId))),
    implement(browseConnection, async ({ params, query }, ctx) => {
      const space = spaceOf(ctx);
      const id = params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw notFound(params.connectionId);
      const live = query.ied === undefined ? await deps.liveBrowse?.(space, id, ctx) : null;
      if (live) return { source: 'device' as const, ...live };
      // The answer travels as one bus message: leave room for the envelope.
      const found = await browseOf(deps.store, space, id, { iedName: query.ied, maxJsonBytes: deps.bus.maxPayload - 64 * 1024 });
      if (found === null) return { source: 'scl' as const, ...toBrowseTree(emptyModel) };
      if ('tree' in found) return { source: 'scl', ...found.tree } as never;
      if (found.refused === 'unknown_ied') throw new ProblemError('not_found', `The file of connection ${params.connectionId} describes no IED ${query.ied}`);
      throw new ProblemError(
        'payload_too_large',
        `The model of ${found.ieds.length} IEDs is ${(found.jsonBytes / 1e6).toFixed(1)} MB as JSON, more than one answer carries; browse one IED at a time with ?ied=<name> (the names are in "ieds")`,
        { extensions: { ieds: found.ieds } },
      );
    }),
    implement(stageUploadChunk, async ({ body }, ctx) => {
      const data = Buffer.from(body.data, 'base64');
      if (data.length > uploadChunkBytes) throw new ProblemError('payload_too_large', 'A chunk is larger than the chunk size');
      if (body.index * uploadChunkBytes + data.length > deps.config.maxSclBytes) throw new ProblemError('payload_too_large', 'The file is larger than MAX_SCL_BYTES');
      await stageChunk(deps.store, spaceOf(ctx), body.uploadId.toLowerCase(), body.index, data);
      return null;
    }),
    implement(readFileChunk, async ({ params }, ctx) => {
      const chunk = await fileChunk(deps.store, spaceOf(ctx), params.connectionId.toLowerCase(), params.index);
      if (!chunk) throw new ProblemError('not_found', 'The connection has no file');
      return { name: chunk.name, size: chunk.size, chunks: chunk.chunks, data: chunk.data.toString('base64') };
    }),
  ];
}
