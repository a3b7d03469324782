import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName } from '../../platform/src/bus/nats_event_log.ts';

/**
 * Removes the event-log stream a test made under its subject prefix on the NATS server of `NATS_URL`, so
 * test runs leave no streams behind. Nothing to do without NATS_URL.
 */
export async function dropEventStream(prefix: string): Promise<void> {
  const url = process.env.NATS_URL;
  if (!url) return;
  const nc = await connect({ servers: url.split(',').map((s) => s.trim()) });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => false);
  } finally {
    await nc.close();
  }
}
