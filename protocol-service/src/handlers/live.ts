/**
 * Start, stop and the session view, and the operations on a live device. A request for the device may
 * arrive at any replica (the queue group picks one); the replica holding the connection answers it, and
 * any other forwards it to that replica's own subject (`<subject>.at.<instance>`), so the device only ever
 * hears one association.
 */
import {
  browseConnectionDevice, disableConnectionReport, enableConnectionReport, getConnectionReports, getConnectionSession, getConnectionStatus,
  getConnectionValues, operateConnectionControl, ProblemError, readConnectionValues, startConnection, stopConnection, writeConnectionValue,
  type Operation,
} from '@scada/contracts';
import { call, implement, onBehalfOf, remainingMs, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import type { LiveDevice } from '../sessions/live_device.ts';
import type { Session } from '../sessions/session.ts';
import type { Supervisor } from '../sessions/supervisor.ts';
import { findConnection } from '../store/connections.ts';
import { connectionNotFound, deviceRouter, notConnected } from '../sessions/device_router.ts';
import { readSession, reportSubscriptions, setStarted, subscribeReport, unsubscribeReport } from '../store/sessions.ts';

export type LiveDeps = { store: Store; bus: Bus; supervisor: Supervisor; instance: string };

/** The operation as the holding replica serves it on its own subject. */
export function atInstance<O extends Operation>(op: O, instance: string): O {
  return { ...op, subject: `${op.subject}.at.${instance}` };
}

const spaceOf = (ctx: HandlerContext) => {
  if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
  return ctx.space;
};

/** Margin kept from a request's deadline for the answer's way back to the caller. */
const answerMarginMs = 250;

/** A CommandTermination is waited for at most this long, however long the caller would wait. */
const terminationWaitMs = 10_000;

/** How long a control may wait for the device's CommandTermination: what the caller still waits, less the margin. */
function controlTimeoutMs(ctx: HandlerContext): number {
  return Number.isFinite(ctx.deadline) ? Math.max(1, Math.min(terminationWaitMs, remainingMs(ctx) - answerMarginMs)) : terminationWaitMs;
}

/** A failure that is not already a problem (a device stand-in in a test, a bug) is the device's failure. */
function asDeviceProblem(err: unknown): ProblemError {
  return err instanceof ProblemError ? err : new ProblemError('bad_gateway', `The device failed: ${(err as Error).message}`, { cause: err });
}

/**
 * The implementations every replica serves (queue group), and those only the holder serves on its own
 * subject. `live` runs an operation against the local association; `remote` forwards it to the holder.
 */
export function liveHandlers(deps: LiveDeps): {
  implementations: Implementation[];
  holderImplementations: Implementation[];
  liveBrowse(space: string, id: string, ctx: HandlerContext): Promise<{ logicalDevices: unknown[] } | null>;
} {
  const router = deviceRouter(deps);

  /** Runs `work` on the connected device here, or forwards the request to the replica holding it. */
  const onDevice = async <T>(op: Operation, request: unknown, ctx: HandlerContext, work: (device: LiveDevice, session: Session) => Promise<T>, forward = true): Promise<T> => {
    const space = spaceOf(ctx);
    const id = ((request as { params: { connectionId: string } }).params.connectionId).toLowerCase();
    const route = await router.route(space, id, forward);
    if (route.kind === 'forwarded') return (await call(deps.bus, atInstance(op, route.owner), request as never, onBehalfOf(ctx))) as T;
    if (route.kind === 'not_connected' || !route.device) throw notConnected(id);
    try {
      return await work(route.device, route.session);
    } catch (err) {
      throw asDeviceProblem(err);
    }
  };

  const live = (forward: boolean): Implementation[] => [
    implement(readConnectionValues, (req, ctx) =>
      onDevice(readConnectionValues, req, ctx, async (device) => {
        const values = await device.read(req.body.references);
        return req.body.references.map((reference, i) => {
          const v = values[i] as { error?: string } | undefined;
          return v && typeof v === 'object' && 'error' in v && typeof v.error === 'string' ? { reference, error: v.error } : { reference, value: values[i] };
        });
      }, forward),
    ),
    implement(writeConnectionValue, (req, ctx) => onDevice(writeConnectionValue, req, ctx, async (device) => (await device.write(req.body.reference, req.body.value), null), forward)),
    implement(operateConnectionControl, (req, ctx) =>
      onDevice(operateConnectionControl, req, ctx, async (device) => {
        const { reference, ...control } = req.body;
        await device.operate(reference, { ...control, timeoutMs: controlTimeoutMs(ctx) });
        return null;
      }, forward),
    ),
    implement(browseConnectionDevice, (req, ctx) =>
      onDevice(browseConnectionDevice, req, ctx, async (device) => (await device.browse()) as { logicalDevices: unknown[] }, forward),
    ),
    // A report block is switched on the device first (by the holder, wherever it runs) and kept only
    // when the device took it, so a refusal leaves nothing stored; a connection not connected now keeps
    // it for its next connect.
    implement(enableConnectionReport, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      const { rcb, ...options } = req.body;
      const keep = () => subscribeReport(deps.store, space, id, rcb, options);
      try {
        await onDevice(enableConnectionReport, req, ctx, async (device) => (await device.enableReport(rcb, options), await keep(), null), forward);
      } catch (err) {
        if (!(err instanceof ProblemError && err.code === 'not_connected')) throw err;
        await keep();
      }
      return null;
    }),
    implement(disableConnectionReport, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      const rcb = req.query.rcb;
      // The replica the request reached forgets the block; the holder, asked on its own subject, only
      // switches it off.
      if (forward && !(await unsubscribeReport(deps.store, space, id, rcb))) {
        if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(req.params.connectionId);
        throw new ProblemError('not_found', `Report block ${rcb} is not enabled on connection ${req.params.connectionId}`);
      }
      // Forgotten first, so that a reconnect does not enable it again; the device is told when connected.
      await onDevice(disableConnectionReport, req, ctx, async (device) => (await device.disableReport(rcb).catch(() => undefined), null), forward).catch((err: unknown) => {
        if (!(err instanceof ProblemError && err.code === 'not_connected')) throw err;
      });
      return null;
    }),
    implement(getConnectionValues, (req, ctx) =>
      onDevice(getConnectionValues, req, ctx, async (_device, session) =>
        [...session.lastValues.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([reference, v]) => ({ reference, value: v.value, at: v.at, rcb: v.rcb })), forward),
    ),
  ];

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
        status: connected ? 'Connected' as const : 'Disconnected' as const,
        state: s.started ? (s.held ? s.state : 'connecting') : 'stopped',
        since: s.since,
        lastError: s.lastError,
        reconnects: s.reconnects,
        identity: s.identity,
        heldBy: s.started && s.held ? s.owner : null,
      };
    }),
    implement(getConnectionStatus, async (req, ctx) => {
      const s = await readSession(deps.store, spaceOf(ctx), req.params.connectionId.toLowerCase());
      if (!s) throw connectionNotFound(req.params.connectionId);
      return s.started && s.held && s.state === 'connected' ? 'Connected' as const : 'Disconnected' as const;
    }),
    implement(getConnectionReports, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(req.params.connectionId);
      return (await reportSubscriptions(deps.store, space, id)).map((s) => ({ rcb: s.rcb, ...s.options }));
    }),
    ...live(true),
  ];
  const holderImplementations = live(false).map((impl) => ({ ...impl, op: atInstance(impl.op, deps.instance) }));
  /** The live model, or null when the connection is not connected anywhere (the SCL model answers then). */
  const liveBrowse = async (space: string, id: string, ctx: HandlerContext) => {
    try {
      return await onDevice(browseConnectionDevice, { params: { connectionId: id }, query: {} }, { ...ctx, space }, async (device) => (await device.browse()) as { logicalDevices: unknown[] });
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'not_connected') return null;
      throw err;
    }
  };
  return { implementations, holderImplementations, liveBrowse };
}
