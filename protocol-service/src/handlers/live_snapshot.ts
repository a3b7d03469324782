/**
 * The snapshot a live stream opens with: the sessions of the connections it follows, from the store, and
 * their last values, read here for the connections this replica holds and asked of the holding replica
 * (on its own subject) for the others. A space of any size is answered in pages: connection id order,
 * each page bounded by a connection count and by its size, so that no answer comes near one bus message.
 */
import { getConnectionValues, liveSnapshot, ProblemError, type LiveSession, type LiveSnapshotValue } from '@scada/contracts';
import { call, implement, onBehalfOf, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import type { Supervisor } from '../sessions/supervisor.ts';
import { sessionPage, type SessionPageRow } from '../store/sessions.ts';
import { atInstance } from './device_ops.ts';

/**
 * Characters of JSON a page carries before it stops taking connections: a quarter of NATS's default
 * message, so a page travels uncompressed and in one message; the connection that crosses it is the last.
 */
const pageChars = 256 * 1024;

/** Holders asked for values at once while a page is made. */
const valueRequestsAtOnce = 16;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type LiveSnapshotDeps = { store: Store; bus: Bus; supervisor: Supervisor; instance: string };

/** Serves `liveSnapshot`. */
export function liveSnapshotHandler(deps: LiveSnapshotDeps): Implementation {
  return implement(liveSnapshot, async (req, ctx) => {
    if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
    const space = ctx.space;
    const { body } = req;
    const after = body.after ? body.after.toLowerCase() : null;
    if (after !== null && !uuid.test(after)) throw new ProblemError('validation_failed', 'after is not a cursor of this snapshot');
    // Ids that are no connection id can match nothing; they are left out rather than refused.
    const ids = body.connections ? body.connections.map((id) => id.toLowerCase()).filter((id) => uuid.test(id)) : null;
    const paged = body.limit !== undefined;
    const rows = await sessionPage(deps.store, space, { after, limit: body.limit ?? null, ids });
    const page = { sessions: [] as LiveSession[], values: [] as LiveSnapshotValue[] };
    let chars = 0;
    let last: string | null = null;
    // Rows are taken in groups, so that the values of a group are asked for at once.
    for (let i = 0; i < rows.length && !(paged && chars >= pageChars); i += valueRequestsAtOnce) {
      const group = rows.slice(i, i + valueRequestsAtOnce);
      const values = body.values ? await Promise.all(group.map((row) => valuesOf(deps, space, row, ctx))) : [];
      for (const [n, row] of group.entries()) {
        if (paged && chars >= pageChars) break;
        const session = sessionOf(row);
        if (body.sessions !== false) {
          page.sessions.push(session);
          chars += JSON.stringify(session).length;
        }
        for (const value of values[n] ?? []) {
          page.values.push(value);
          chars += JSON.stringify(value).length;
        }
        last = row.id;
      }
    }
    const more = paged && last !== null && (rows.length === body.limit || last !== rows.at(-1)?.id);
    return { ...page, next: more ? last : null };
  });
}

/** A connection's session as the live channel shows it (the session view's rule for state). */
function sessionOf(s: SessionPageRow): LiveSession {
  return {
    connectionId: s.id,
    state: s.started ? (s.held ? s.state : 'connecting') : 'stopped',
    since: s.since,
    lastError: s.lastError,
    warnings: s.started && s.held ? s.warnings : [],
  };
}

/**
 * The last values of one connection: read here when this replica holds it, asked of its holder
 * otherwise; none when nobody holds it or its holder cannot say (gone, not connected).
 */
async function valuesOf(deps: LiveSnapshotDeps, space: string, row: SessionPageRow, ctx: HandlerContext): Promise<LiveSnapshotValue[]> {
  if (!row.started) return [];
  const local = deps.supervisor.local(space, row.id);
  if (local) return local.values.list().map((v) => ({ connectionId: row.id, ...v }));
  if (!row.holder || row.holder === deps.instance) return [];
  try {
    const values = await call(
      deps.bus,
      atInstance(getConnectionValues, row.holder),
      { params: { connectionId: row.id }, query: {} },
      onBehalfOf(ctx),
    );
    // The holder's answer is the value as kept (checked against its schema); only `at`, its older name of `receivedAt`, goes.
    return values.map(({ at: _at, ...value }) => ({ connectionId: row.id, ...value }));
  } catch (err) {
    // A holder that went away meanwhile (no replica on its subject) or cannot say: its values are not known now.
    if (err instanceof ProblemError && (err.status < 500 || err.code === 'service_unavailable')) return [];
    throw err;
  }
}
