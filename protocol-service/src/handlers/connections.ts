import { randomUUID } from 'node:crypto';
import {
  browseConnection,
  createConnectionWithFile,
  getConnection,
  getConnections,
  getConnectionsByProject,
  ProblemError,
  readFileChunk,
  stageUploadChunk,
  uploadChunkBytes,
  updateConnectionWithFile,
} from '@scada/contracts';
import { implement, spaceOf, type Bus, type HandlerContext, type Implementation, type SecretBox, type Store } from '@scada/platform';
import type { ProtocolConfig } from '../config.ts';
import { findConnection, listConnections } from '../store/connections.ts';
import { browseOf, fileChunk, stageChunk } from '../store/files.ts';
import { connectionSaver } from './connection_save.ts';
import { connectionNotFound } from '../sessions/device_router.ts';

/** What the connection handlers use. */
export type ConnectionDeps = {
  store: Store;
  bus: Bus;
  config: ProtocolConfig;
  /** Seals the connections' passwords and TLS keys. */
  secrets: SecretBox;
  /** The live model when the connection is connected (here or at its holder), else null. */
  liveBrowse?: (space: string, id: string, ctx: HandlerContext) => Promise<{ logicalDevices: unknown[] } | null>;
};

/** The connection use cases: with-file create and update, reads, browse, staging and reading file chunks. */
export function connectionHandlers(deps: ConnectionDeps): Implementation[] {
  const { save } = connectionSaver(deps);

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
    implement(getConnections, async (_m, ctx) => listConnections(deps.store, spaceOf(ctx))),
    implement(getConnectionsByProject, async ({ query }, ctx) => listConnections(deps.store, spaceOf(ctx), query.projectId.toLowerCase())),
    implement(
      getConnection,
      async ({ params }, ctx) =>
        (await findConnection(deps.store, spaceOf(ctx), params.connectionId.toLowerCase())) ??
        Promise.reject(connectionNotFound(params.connectionId)),
    ),
    implement(browseConnection, async ({ params, query }, ctx) => {
      const space = spaceOf(ctx);
      const id = params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(params.connectionId);
      const live = query.ied === undefined && query.source !== 'scl' ? await deps.liveBrowse?.(space, id, ctx) : null;
      if (live) return { source: 'device' as const, ...live };
      // The answer travels as one bus message: leave room for the envelope.
      const found = await browseOf(deps.store, space, id, { iedName: query.ied, maxJsonBytes: deps.bus.maxPayload - 64 * 1024 });
      if (found === null) {
        throw new ProblemError(
          'no_scl_file',
          `Connection ${params.connectionId} has no SCL file: its model comes from the device while it is connected (start it), or from a file uploaded with PUT /api/protocols/iec61850/connections/${params.connectionId}/with-file`,
        );
      }
      if ('tree' in found) return { source: 'scl', ...found.tree } as never;
      if (found.refused === 'unknown_ied')
        throw new ProblemError('not_found', `The file of connection ${params.connectionId} describes no IED ${query.ied}`);
      throw new ProblemError(
        'payload_too_large',
        `The model of ${found.ieds.length} IEDs is ${(found.jsonBytes / 1e6).toFixed(1)} MB as JSON, more than one answer carries; browse one IED at a time with ?ied=<name> (the names are in "ieds")`,
        { extensions: { ieds: found.ieds } },
      );
    }),
    implement(stageUploadChunk, async ({ body }, ctx) => {
      const data = Buffer.from(body.data, 'base64');
      if (data.length > uploadChunkBytes) throw new ProblemError('payload_too_large', 'A chunk is larger than the chunk size');
      if (body.index * uploadChunkBytes + data.length > deps.config.maxSclBytes)
        throw new ProblemError('payload_too_large', 'The file is larger than MAX_SCL_BYTES');
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
