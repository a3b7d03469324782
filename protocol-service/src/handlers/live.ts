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
import { call, implement, onBehalfOf, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import type { LiveDevice } from '../sessions/live_device.ts';
import type { Session } from '../sessions/session.ts';
import type { Supervisor } from '../sessions/supervisor.ts';
import { findConnection } from '../store/connections.ts';
import { connectionHolder, readSession, reportSubscriptions, setStarted, subscribeReport, unsubscribeReport } from '../store/sessions.ts';

export type LiveDeps = { store: Store; bus: Bus; supervisor: Supervisor; instance: string };

/** The operation as the holding replica serves it on its own subject. */
export function atInstance<O extends Operation>(op: O, instance: string): O {
  return { ...op, subject: `${op.subject}.at.${instance}` };
}

const spaceOf = (ctx: HandlerContext) => {
  if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
  return ctx.space;
};
const notFound = (id: string) => new ProblemError('not_found', `No connection ${id} in this space`);
const notConnected = (id: string) => new ProblemError('conflict', `Connection ${id} is not connected to its device now`);

/** A device's refusal (or a failed exchange) as the API answers it. */
function deviceProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof Error && (err.name === 'BadReferenceError' || err.name === 'ValueTypeError')) return new ProblemError('bad_request', err.message);
  return new ProblemError('bad_gateway', `The device refused or failed: ${(err as Error).message}`, { cause: err });
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
  const local = (space: string, id: string): Session | undefined => deps.supervisor.local(space, id);

  /** The local connected device, or null after forwarding was ruled out (not held anywhere, or not connected). */
  const onDevice = async <T>(op: Operation, request: unknown, ctx: HandlerContext, work: (device: LiveDevice, session: Session) => Promise<T>, forward = true): Promise<T> => {
    const space = spaceOf(ctx);
    const id = ((request as { params: { connectionId: string } }).params.connectionId).toLowerCase();
    const session = local(space, id);
    if (session) {
      const device = session.device;
      if (!device) throw notConnected(id);
      try {
        return await work(device, session);
      } catch (err) {
        throw deviceProblem(err);
      }
    }
    const held = await connectionHolder(deps.store, space, id);
    if (!held) throw notFound(id);
    const owner = forward ? held.owner : null;
    if (!owner || owner === deps.instance) throw notConnected(id);
    return (await call(deps.bus, atInstance(op, owner), request as never, onBehalfOf(ctx))) as T;
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
        await device.operate(reference, control);
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
        if (!(err instanceof ProblemError && err.code === 'conflict')) throw err;
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
        if (!(await findConnection(deps.store, space, id))) throw notFound(req.params.connectionId);
        throw new ProblemError('not_found', `Report block ${rcb} is not enabled on connection ${req.params.connectionId}`);
      }
      // Forgotten first, so that a reconnect does not enable it again; the device is told when connected.
      await onDevice(disableConnectionReport, req, ctx, async (device) => (await device.disableReport(rcb).catch(() => undefined), null), forward).catch((err: unknown) => {
        if (!(err instanceof ProblemError && err.code === 'conflict')) throw err;
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
    if (!(await setStarted(deps.store, space, id, started))) throw notFound(req.params.connectionId);
    await deps.supervisor.kick();
    return null;
  };

  const implementations: Implementation[] = [
    implement(startConnection, startStop(true)),
    implement(stopConnection, startStop(false)),
    implement(getConnectionSession, async (req, ctx) => {
      const s = await readSession(deps.store, spaceOf(ctx), req.params.connectionId.toLowerCase());
      if (!s) throw notFound(req.params.connectionId);
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
      if (!s) throw notFound(req.params.connectionId);
      return s.started && s.held && s.state === 'connected' ? 'Connected' as const : 'Disconnected' as const;
    }),
    implement(getConnectionReports, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      if (!(await findConnection(deps.store, space, id))) throw notFound(req.params.connectionId);
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
      if (err instanceof ProblemError && err.code === 'conflict') return null;
      throw err;
    }
  };
  return { implementations, holderImplementations, liveBrowse };
}
