import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName, spaceVersionsBucket } from '@scada/platform';
import { harnessNatsOptions } from './nats_auth.ts';

/**
 * Removes the event-log stream and the space-versions bucket a test made under its subject prefix on the
 * NATS server of `NATS_URL`, so test runs leave no streams behind. Nothing to do without NATS_URL.
 */
export async function dropEventStream(prefix: string): Promise<void> {
  const url = process.env.NATS_URL;
  if (!url) return;
  const nc = await connect(harnessNatsOptions(url));
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => false);
    // A key-value bucket is the stream `KV_<bucket>`.
    await jsm.streams.delete(`KV_${spaceVersionsBucket(prefix)}`).catch(() => false);
  } finally {
    await nc.close();
  }
}
