import { Counter, Gauge, type Registry } from 'prom-client';
import type { EndReason } from './client.ts';

/** What the live channel counts: open streams, events written, streams ended (slow clients apart). */
export type LiveMetrics = {
  opened(): void;
  closed(reason: EndReason): void;
  sent(events: number): void;
};

/**
 * The live channel's metrics in the gateway's registry: `live_streams_open`, `live_events_sent_total`
 * (its rate is the events sent per second), `live_clients_dropped_slow_total` and
 * `live_streams_closed_total{reason}`.
 */
export function createLiveMetrics(registry: Registry): LiveMetrics {
  const open = new Gauge({ name: 'live_streams_open', help: 'Open live event streams on this gateway', registers: [registry] });
  const sent = new Counter({ name: 'live_events_sent_total', help: 'Events written to live streams', registers: [registry] });
  const slow = new Counter({
    name: 'live_clients_dropped_slow_total',
    help: 'Live streams closed because the client did not read fast enough',
    registers: [registry],
  });
  const closed = new Counter({
    name: 'live_streams_closed_total',
    help: 'Live streams ended, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return {
    opened: () => open.inc(),
    closed: (reason) => {
      open.dec();
      closed.inc({ reason });
      if (reason === 'slow') slow.inc();
    },
    sent: (events) => sent.inc(events),
  };
}
