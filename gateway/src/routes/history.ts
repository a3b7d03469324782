import { Readable } from 'node:stream';
import Router from '@koa/router';
import { readConnectionHistoryPage, type Operation } from '@scada/contracts';
import { call, relay, type Bus } from '@scada/platform';
import type { Context } from 'koa';
import type { SessionDeps } from '../auth/session.ts';
import { authorize } from '../middleware/authorize.ts';
import { buildMessage } from './operations.ts';
import { callContext } from './scl_files.ts';

/** What the history route needs. */
export type HistoryRouteDeps = { bus: Bus; busTimeoutMs: number; bodyLimitBytes: number; sessions: SessionDeps };

type HistoryQuery = { reference: string; from?: string; to?: string; format?: 'json' | 'csv' };

/**
 * The trend of an attribute (`gatewayRoute: history`): JSON from the history service as any operation, or
 * with `format=csv` every recorded value of the period streamed as CSV, page by page as the client reads
 * (each page one bus request; the gateway holds one page at most). The first page is asked before
 * anything is sent, so a connection of another space, an unknown attribute or a bad period is a problem.
 */
export function historyRoutes(ops: readonly Operation[], deps: HistoryRouteDeps): Router {
  const router = new Router();
  for (const op of ops) {
    const http = op.http;
    if (http?.gatewayRoute !== 'history') continue;
    router.get(op.operationId, http.path, async (ctx) => {
      // `?space=`: a link to the CSV cannot send X-Space.
      const space = ctx.query.space;
      await authorize(ctx, http, deps.sessions, space === undefined ? undefined : [space].flat());
      const message = (await buildMessage(ctx, op, deps.bodyLimitBytes)) as { params: { connectionId: string }; query: HistoryQuery };
      if (message.query.format === 'csv') return csv(ctx, deps, message);
      const bytes = await relay(deps.bus, op, message as never, callContext(ctx, deps, op));
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = bytes;
    });
  }
  return router;
}

/** A CSV field: numbers as they are, anything else as JSON text, quoted where it must be. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A value a line, in the order of the time axis: its place there (`t`), its receipt and the device's time. */
const header = 't,receivedAt,timestamp,value,validity,quality,rcb,seqNum\r\n';

async function csv(ctx: Context, deps: HistoryRouteDeps, message: { params: { connectionId: string }; query: HistoryQuery }) {
  const now = new Date().toISOString();
  const to = message.query.to ?? now;
  const from = message.query.from ?? new Date(Date.parse(to) - 86_400_000).toISOString();
  const query = { reference: message.query.reference, from, to };
  const pageOf = (after?: string) =>
    call(
      deps.bus,
      readConnectionHistoryPage,
      { params: message.params, query: after === undefined ? query : { ...query, after } },
      callContext(ctx, deps, readConnectionHistoryPage),
    );
  const first = await pageOf();
  ctx.status = 200;
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', 'attachment; filename="history.csv"');
  ctx.set('Cache-Control', 'no-store');
  const rowsOf = (page: Awaited<ReturnType<typeof pageOf>>) =>
    page.rows
      .map((r) => [r.t, r.receivedAt, r.timestamp, r.value, r.quality?.validity ?? null, r.quality, r.rcb, r.seqNum].map(field).join(','))
      .join('\r\n');
  ctx.body = Readable.from(
    (async function* () {
      yield header;
      let page = first;
      for (;;) {
        if (page.rows.length > 0) yield `${rowsOf(page)}\r\n`;
        if (page.next === null) return;
        page = await pageOf(page.next);
      }
    })(),
  );
}
