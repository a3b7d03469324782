import {
  getConnection,
  getConnectionHistory,
  getConnectionHistorySummary,
  ProblemError,
  readConnectionHistoryPage,
} from '@scada/contracts';
import { call, implement, onBehalfOf, spaceOf, type Bus, type HandlerContext, type Implementation, type Store } from '@scada/platform';
import { checkReference, periodOf, rawPage, summaryOf } from './read.ts';
import { readTrend } from './trend.ts';

/** 404 for a connection the caller's space does not hold: the protocol service, which owns connections, says. */
async function checkConnection(bus: Bus, ctx: HandlerContext, connectionId: string): Promise<void> {
  await call(bus, getConnection, { params: { connectionId }, query: {} }, onBehalfOf(ctx));
}

/** The history service's operations. */
export function historyHandlers(deps: { store: Store; bus: Bus }): Implementation[] {
  const { store, bus } = deps;
  // The reads themselves (up to hundreds of thousands of rows grouped) take the bulk lane beside the
  // batches being recorded; the one-row check of the attribute goes with short work.
  const reads = store.bulk();
  return [
    implement(getConnectionHistory, async (req, ctx) => {
      const space = spaceOf(ctx);
      const { connectionId } = req.params;
      const period = periodOf(req.query, Date.now());
      if (req.query.format === 'csv')
        throw new ProblemError('bad_request', 'format=csv is streamed by the gateway, page by page (readConnectionHistoryPage)');
      await checkConnection(bus, ctx, connectionId);
      await checkReference(store, space, connectionId, req.query.reference);
      return readTrend(reads, { space, connectionId, reference: req.query.reference, period, maxPoints: req.query.maxPoints ?? 1000 });
    }),
    implement(readConnectionHistoryPage, async (req, ctx) => {
      const space = spaceOf(ctx);
      const { connectionId } = req.params;
      const period = periodOf(req.query, Date.now());
      // The first page checks the connection and the attribute; the rest follow the cursor it answered.
      if (req.query.after === undefined) {
        await checkConnection(bus, ctx, connectionId);
        await checkReference(store, space, connectionId, req.query.reference);
      }
      return rawPage(reads, {
        space,
        connectionId,
        reference: req.query.reference,
        period,
        after: req.query.after,
        size: req.query.size ?? 2000,
      });
    }),
    implement(getConnectionHistorySummary, async (req, ctx) => {
      const space = spaceOf(ctx);
      await checkConnection(bus, ctx, req.params.connectionId);
      return summaryOf(reads, space, req.params.connectionId);
    }),
  ];
}
