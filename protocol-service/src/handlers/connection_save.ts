import { createHash } from 'node:crypto';
import { getProject, ProblemError, protocolEvents, type ConnectionRequest } from '@scada/contracts';
import {
  actorOf,
  call,
  ConstraintViolation,
  onBehalfOf,
  publishEvent,
  spaceOf,
  type Bus,
  type HandlerContext,
  type SecretBox,
  type Store,
} from '@scada/platform';
import { browseParts, checkConnection, parseScl } from '@scada/iec61850';
import { findConnection, saveConnection } from '../store/connections.ts';
import {
  adoptUpload,
  fileChunk,
  packBrowsePart,
  setConnectionWarnings,
  stagedChunks,
  stagedCount,
  type FileFacts,
} from '../store/files.ts';
import { connectionNotFound } from '../sessions/device_router.ts';
import { sealSecurity } from '../domain/connection_security.ts';

/** What the SCL file is checked against: the connection's address and the report blocks it enables at start. */
const targetOf = (c: ConnectionRequest) => ({ ip: c.ip, port: c.port, reportBlocks: c.enableReports ?? [] });

/** A staged upload as the gateway names it once every chunk arrived. */
export type Upload = { id: string; name: string; size: number; sha256: string; chunks: number };

/**
 * Creating and replacing a connection, with a staged SCL file or without one: the project is checked with
 * the config service, a file is parsed and the security settings are checked and sealed before anything is
 * stored, and the connection and its file are stored together or not at all. A replacement without a file
 * keeps the stored one and checks it again against the new address; one without security fields keeps the
 * stored ones.
 */
export function connectionSaver(deps: { store: Store; bus: Bus; secrets: SecretBox }) {
  /** The project must be one of the caller's space: the config service says so (404 otherwise). */
  const checkProject = async (ctx: HandlerContext, projectId: string) => {
    await call(deps.bus, getProject, { params: { projectId }, query: {} }, onBehalfOf(ctx));
  };

  /** Parses a staged upload as it is read from the store, checking its size and digest on the way. */
  const parseUpload = async (space: string, upload: Upload, connection: ConnectionRequest): Promise<FileFacts> => {
    if ((await stagedCount(deps.store, space, upload.id)) !== upload.chunks)
      throw new ProblemError('bad_request', 'The upload is incomplete');
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
    if (size !== upload.size || hash.digest('hex') !== upload.sha256)
      throw new ProblemError('bad_request', 'The upload does not match its size or digest');
    if (!result.ok) {
      const errors = result.report.errors
        .slice(0, 50)
        .map((e) => ({ path: '/file', message: `line ${e.line}, column ${e.column}: ${e.message}` }));
      throw new ProblemError('scl_invalid', `The file is not valid SCL: ${errors[0]?.message ?? 'unreadable'}`, { errors });
    }
    return {
      name: upload.name,
      size,
      sha256: upload.sha256,
      edition: result.report.edition,
      chunks: upload.chunks,
      warnings: result.report.warnings,
      connectionWarnings: checkConnection(result.model, targetOf(connection)),
      browse: [...browseParts(result.model)].map((p) => packBrowsePart(p.iedName, p.tree)),
    };
  };

  /** The connection checks of a kept file against a changed address or list of report blocks, from the stored chunks. */
  const recheck = async (space: string, id: string, connection: ConnectionRequest) => {
    const first = await fileChunk(deps.store, space, id, 0);
    if (!first) return;
    const chunks = (async function* () {
      for (let i = 0; i < first.chunks; i++) yield new Uint8Array((await fileChunk(deps.store, space, id, i))!.data);
    })();
    const result = await parseScl(chunks);
    if (result.ok) await setConnectionWarnings(deps.store, space, id, checkConnection(result.model, targetOf(connection)));
  };

  /** `path`: where the connection sits in the request's body (`/body/connection` in an upload, `/body` alone). */
  const save = async (
    ctx: HandlerContext,
    id: string,
    body: { connection: ConnectionRequest; upload: Upload | null },
    create: boolean,
    path = '/body/connection',
  ) => {
    const space = spaceOf(ctx);
    const actor = actorOf(ctx).name;
    const stored = create ? null : await findConnection(deps.store, space, id);
    if (!create && !stored) throw connectionNotFound(id);
    // The file is checked against the report blocks the connection will have: a replacement without the list keeps the stored one.
    const connection = { ...body.connection, enableReports: body.connection.enableReports ?? stored?.enableReports ?? [] };
    const security = sealSecurity(body.connection, { space, id, path }, deps.secrets);
    await checkProject(ctx, body.connection.projectId);
    const facts = body.upload ? await parseUpload(space, body.upload, connection) : null;
    try {
      await deps.store.transaction(async (tx) => {
        if (!(await saveConnection(tx, space, id, body.connection, actor, create, security))) throw connectionNotFound(id);
        if (facts && body.upload) await adoptUpload(tx, space, id, body.upload.id, facts);
      });
    } catch (err) {
      if (err instanceof ConstraintViolation && err.kind === 'unique')
        throw new ProblemError('conflict', `The project has a connection named ${body.connection.name}`);
      throw err;
    }
    if (!facts && !create) await recheck(space, id, connection);
    publishEvent(
      deps.bus,
      protocolEvents.connection,
      { space, id, actor },
      { kind: create ? 'created' : 'updated', requestId: ctx.requestId },
    );
  };

  return { save, checkProject };
}
