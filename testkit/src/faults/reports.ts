/**
 * Report load for the fault suite: `events.protocol.report` events of one connection, one value each with
 * the next `seqNum`, published into the event stream as the protocol service publishes them, every few
 * milliseconds. Each publication JetStream acknowledged is a report the platform took: the history must
 * record every one of them exactly once, whatever replica died or server restarted meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { protocolEvents } from '@scada/contracts';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';

export type ReportLoad = {
  connectionId: string;
  /** Stops publishing; answers the sequence numbers JetStream acknowledged and how many were sent. */
  stop(): Promise<{ acknowledged: Set<number>; sent: number }>;
};

const encoder = new TextEncoder();
export const faultReference = 'FAULT/GGIO1.AnIn1.mag.f[MX]';

export async function startReportLoad(natsUrl: string, everyMs = 5): Promise<ReportLoad> {
  const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  const js = jetstream(nc, { timeout: 2000 });
  const connectionId = randomUUID();
  const acknowledged = new Set<number>();
  const inFlight = new Set<Promise<unknown>>();
  let sent = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const seqNum = ++sent;
      const receivedAt = new Date().toISOString();
      const rcb = 'FAULT/LLN0$RP$urcb01';
      const body = {
        space: 'default',
        connectionId,
        rcb,
        rptId: 'fault',
        seqNum,
        entryId: null,
        at: receivedAt,
        values: [
          {
            connectionId,
            reference: faultReference,
            value: seqNum,
            quality: null,
            timestamp: null,
            timestampSource: null,
            receivedAt,
            rcb,
            reason: ['data-change'],
            seqNum,
          },
        ],
      };
      const p = js.publish(protocolEvents.report.subject(), encoder.encode(JSON.stringify(body))).then(
        () => acknowledged.add(seqNum),
        () => undefined,
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    connectionId,
    async stop() {
      stopped = true;
      await loop;
      await Promise.allSettled([...inFlight]);
      await nc.close();
      return { acknowledged, sent };
    },
  };
}

/** Waits (at most `ms`) until the history holds every acknowledged report, then counts each sequence number's rows. */
export async function recordedReports(databaseUrl: string, connectionId: string, acknowledged: Set<number>, ms = 60_000) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const count = async () =>
      new Map(
        (
          await db.query<{ seq: number; n: number }>(
            'select seq_num as seq, count(*)::int as n from history.points where connection_id = $1 group by seq_num',
            [connectionId],
          )
        ).rows.map((r) => [r.seq, r.n]),
      );
    let rows = await count();
    for (const end = Date.now() + ms; Date.now() < end && [...acknowledged].some((s) => !rows.has(s)); rows = await count())
      await new Promise((r) => setTimeout(r, 500));
    return {
      missing: [...acknowledged].filter((s) => !rows.has(s)),
      doubled: [...rows].filter(([, n]) => n > 1).map(([s]) => s),
      recorded: rows.size,
    };
  } finally {
    await db.end();
  }
}
