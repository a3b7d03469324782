/**
 * The durable consumer on NATS (see `durable_events.ts`): a durable JetStream consumer of the event
 * stream, filtered to the subjects, acknowledged explicitly once a batch is handled. Messages that
 * arrived while a batch was handled make the next batch, so a busy consumer handles many at once and a
 * quiet one handles each at once.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerConfig, type JsMsg } from '@nats-io/jetstream';
import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import { ensureEventStream, eventStreamName } from './nats_event_log.ts';

/** How long a delivered event waits for its acknowledgement before it is delivered again. */
const ackWaitMs = 30_000;

export async function openNatsDurableEvents(nc: NatsConnection, options: DurableEventsOptions): Promise<DurableEvents> {
  const prefix = options.prefix ?? '';
  const lead = prefix ? `${prefix}.` : '';
  const stream = eventStreamName(prefix);
  const jsm = await jetstreamManager(nc);
  await ensureEventStream(jsm, prefix, options.holdMs);
  const maxBatch = options.maxBatch ?? 500;
  const filters = options.subjects.map((s) => `${lead}${s}`);
  const config: Partial<ConsumerConfig> = {
    durable_name: options.name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // One subject as `filter_subject`: servers before 2.10 know no `filter_subjects`.
    ...(filters.length === 1 ? { filter_subject: filters[0] } : { filter_subjects: filters }),
    ack_wait: ackWaitMs * 1_000_000,
    max_ack_pending: maxBatch * 20,
  };
  const existing = await jsm.consumers.info(stream, options.name).catch(() => null);
  if (!existing) {
    await jsm.consumers.add(stream, config).catch(async (err: unknown) => {
      // Another replica created it at the same moment.
      if (!(await jsm.consumers.info(stream, options.name).catch(() => null))) throw err;
    });
  } else if (JSON.stringify(existing.config.filter_subjects ?? [existing.config.filter_subject]) !== JSON.stringify(filters)) {
    await jsm.consumers.update(stream, options.name, filters.length === 1 ? { filter_subject: filters[0] } : { filter_subjects: filters });
  }
  const consumer = await jetstream(nc).consumers.get(stream, options.name);
  const messages = await consumer.consume({ max_messages: maxBatch * 2 });
  let stopped = false;
  const handleBatch = async (batch: JsMsg[]) => {
    const events = batch.map((m) => ({ subject: m.subject.startsWith(lead) ? m.subject.slice(lead.length) : m.subject, data: m.data }));
    try {
      await options.handle(events);
      for (const m of batch) m.ack();
    } catch (err) {
      options.log?.warn({ err, events: batch.length }, 'handling events failed: they are delivered again');
      for (const m of batch) m.nak(options.retryMs ?? 1000);
    }
  };
  const following = (async () => {
    let batch: JsMsg[] = [];
    for await (const m of messages) {
      if (stopped) break;
      batch.push(m);
      if (batch.length >= maxBatch || messages.getPending() === 0) {
        await handleBatch(batch);
        batch = [];
      }
    }
    // Anything taken but not handled goes back at once, for another replica.
    for (const m of batch) m.nak();
  })().catch((err: unknown) => options.log?.warn({ err }, 'the durable event consumer stopped'));
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      messages.stop();
      await following;
    },
  };
}
