/**
 * Start, stop, the session view, the report blocks kept and the control log; the operations on the device
 * itself are in `device_ops.ts` and `setting_groups.ts`.
 */
import {
  deviceFileChunkHeadroom,
  browseConnectionDevice,
  getConnectionControlLog,
  getConnectionReports,
  getConnectionSession,
  getConnectionStatus,
  ProblemError,
  startConnection,
  stopConnection,
} from '@scada/contracts';
import { implement, spaceOf, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import { connectionNotFound, deviceRouter } from '../sessions/device_router.ts';
import { FileDownloads } from '../sessions/file_downloads.ts';
import type { Supervisor } from '../sessions/supervisor.ts';
import { controlLogPage } from '../store/control_log.ts';
import { findConnection } from '../store/connections.ts';
import { readSession, reportSubscriptions, setStarted } from '../store/sessions.ts';
import { atInstance, deviceOperations, deviceRunner } from './device_ops.ts';
import { deviceRecordOperations } from './device_records.ts';
import { settingGroupOperations } from './setting_groups.ts';

/** `maxFileDownloadBytes`: MAX_FILE_DOWNLOAD_BYTES, the largest device file a download fetches. */
export type LiveDeps = {
  store: Store;
  bus: Bus;
  supervisor: Supervisor;
  instance: string;
  maxFileDownloadBytes: number;
  /** The site this replica serves (`central` at the hub). */
  site?: string;
  /** At the hub: whether a site answers now. */
  reachable?: (site: string) => boolean;
  /** At the hub: nobody at a site took a request. */
  lost?: (site: string) => void;
};

/**
 * The implementations every replica serves (queue group), and those only the holder serves on its own
 * subject (the device operations, run against the local association).
 */
export function liveHandlers(deps: LiveDeps): {
  implementations: Implementation[];
  holderImplementations: Implementation[];
  /** The device operations as the replica a request reached serves them (a site serves these on its own subjects). */
  deviceImplementations: Implementation[];
  liveBrowse(space: string, id: string, ctx: HandlerContext): Promise<{ logicalDevices: unknown[] } | null>;
} {
  const router = deviceRouter(deps);
  const opsDeps = { store: deps.store, bus: deps.bus, router };
  const downloads = new FileDownloads({
    maxBytes: deps.maxFileDownloadBytes,
    chunkBytes: deps.bus.maxPayload - deviceFileChunkHeadroom,
  });
  const recordDeps = { ...opsDeps, downloads };
  const onDevice = deviceRunner(opsDeps);

  const startStop = (started: boolean) => async (req: { params: { connectionId: string } }, ctx: HandlerContext) => {
    const space = spaceOf(ctx);
    const id = req.params.connectionId.toLowerCase();
    if (!(await setStarted(deps.store, space, id, started))) throw connectionNotFound(req.params.connectionId);
    await deps.supervisor.kick();
    return null;
  };

  const implementations: Implementation[] = [
    implement(startConnection, startStop(true)),
    implement(stopConnection, startStop(false)),
    implement(getConnectionSession, async (req, ctx) => {
      const s = await readSession(deps.store, spaceOf(ctx), req.params.connectionId.toLowerCase());
      if (!s) throw connectionNotFound(req.params.connectionId);
      const connected = s.started && s.held && s.state === 'connected';
      return {
        started: s.started,
        status: connected ? ('Connected' as const) : ('Disconnected' as const),
        state: s.started ? (s.held ? s.state : 'connecting') : 'stopped',
        since: s.since,
        lastError: s.lastError,
        reconnects: s.reconnects,
        identity: s.identity,
        heldBy: s.started && s.held ? s.owner : null,
        warnings: s.started && s.held ? s.warnings : [],
      };
    }),
    implement(getConnectionStatus, async (req, ctx) => {
      const s = await readSession(deps.store, spaceOf(ctx), req.params.connectionId.toLowerCase());
      if (!s) throw connectionNotFound(req.params.connectionId);
      return s.started && s.held && s.state === 'connected' ? ('Connected' as const) : ('Disconnected' as const);
    }),
    implement(getConnectionReports, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(req.params.connectionId);
      return (await reportSubscriptions(deps.store, space, id)).map((s) => ({ rcb: s.rcb, ...s.options }));
    }),
    implement(getConnectionControlLog, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(req.params.connectionId);
      const page = req.query.page ?? 0;
      const size = req.query.size ?? 20;
      const { total, entries } = await controlLogPage(deps.store, space, id, page, size);
      return { content: entries, number: page, size, totalElements: total, totalPages: Math.ceil(total / size) };
    }),
  ];
  const deviceImplementations = [
    ...deviceOperations(opsDeps, true),
    ...settingGroupOperations(opsDeps, true),
    ...deviceRecordOperations(recordDeps, true),
  ];
  implementations.push(...deviceImplementations);
  const holderImplementations = [
    ...deviceOperations(opsDeps, false),
    ...settingGroupOperations(opsDeps, false),
    ...deviceRecordOperations(recordDeps, false),
  ].map((impl) => ({
    ...impl,
    op: atInstance(impl.op, deps.instance),
  }));
  /** The live model, or null when the connection is not connected anywhere (the SCL model answers then). */
  const liveBrowse = async (space: string, id: string, ctx: HandlerContext) => {
    try {
      return await onDevice(
        browseConnectionDevice,
        { params: { connectionId: id }, query: {} },
        { ...ctx, space },
        async (device) => (await device.browse()) as { logicalDevices: unknown[] },
      );
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'not_connected') return null;
      throw err;
    }
  };
  return { implementations, holderImplementations, deviceImplementations, liveBrowse };
}
