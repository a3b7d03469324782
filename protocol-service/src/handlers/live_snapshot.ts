/**
 * The snapshot a live stream opens with: the sessions of the connections it follows, from the store, and
 * their last values, each asked of the replica holding the connection (through `getConnectionValues`,
 * which any replica forwards to the holder).
 */
import { getConnectionValues, liveSnapshot, ProblemError, type LiveSession, type LiveSnapshotValue } from '@scada/contracts';
import { call, implement, onBehalfOf, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import { listConnections } from '../store/connections.ts';
import { readSession } from '../store/sessions.ts';

/** Serves `liveSnapshot`. */
export function liveSnapshotHandler(deps: { store: Store; bus: Bus }): Implementation {
  return implement(liveSnapshot, async (req, ctx) => {
    if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
    const space = ctx.space;
    const wanted = req.body.connections ? new Set(req.body.connections.map((id) => id.toLowerCase())) : null;
    const connections = (await listConnections(deps.store, space)).filter((c) => !wanted || wanted.has(c.id));
    const sessions = (await Promise.all(connections.map((c) => sessionOf(deps.store, space, c.id)))).filter((s) => s !== null);
    const live = sessions.filter((s) => s.state !== 'stopped');
    const values = req.body.values ? (await Promise.all(live.map((s) => valuesOf(deps.bus, s, ctx)))).flat() : [];
    return { sessions, values };
  });
}

/** A connection's session as the live channel shows it (the session view's rule for state). */
async function sessionOf(store: Store, space: string, id: string): Promise<LiveSession | null> {
  const s = await readSession(store, space, id);
  if (!s) return null;
  return {
    connectionId: id,
    state: s.started ? (s.held ? s.state : 'connecting') : 'stopped',
    since: s.since,
    lastError: s.lastError,
    warnings: s.started && s.held ? s.warnings : [],
  };
}

/** The last values of one connection; none when its holder cannot say (not connected, gone). */
async function valuesOf(bus: Bus, session: LiveSession, ctx: HandlerContext): Promise<LiveSnapshotValue[]> {
  try {
    const values = await call(bus, getConnectionValues, { params: { connectionId: session.connectionId }, query: {} }, onBehalfOf(ctx));
    return values.map((v) => {
      const full = v as typeof v & Partial<LiveSnapshotValue>;
      return {
        connectionId: session.connectionId,
        reference: v.reference,
        value: v.value,
        quality: full.quality ?? null,
        timestamp: full.timestamp ?? null,
        receivedAt: full.receivedAt ?? v.at,
        rcb: v.rcb,
        reason: full.reason ?? null,
        seqNum: full.seqNum ?? null,
        stale: full.stale ?? session.state !== 'connected',
      };
    });
  } catch (err) {
    if (err instanceof ProblemError && err.status < 500) return [];
    throw err;
  }
}
