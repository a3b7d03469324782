/**
 * The durable consumer on NATS (see `durable_events.ts`): a durable JetStream consumer of the event
 * stream, filtered to the subjects, acknowledged explicitly once a batch is handled. Each pull asks for
 * a batch and takes what arrives within a moment, so a busy consumer handles many at once and a quiet
 * one an event within that moment; the next pull fills while a batch is handled.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerConfig, type JsMsg } from '@nats-io/jetstream';
import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import { ensureEventStream, eventStreamName } from './nats_event_log.ts';

/** How long one pull waits for a batch to fill: the most a quiet consumer's event waits to be handled. */
const fetchMs = 1000;

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
  // One pull at a time: up to a batch, or what came within `fetchMs`; handled and acknowledged while the
  // next pull fills (so the database and the stream work at the same time), batches handled in order.
  let current: Awaited<ReturnType<typeof consumer.fetch>> | null = null;
  let handling: Promise<void> = Promise.resolve();
  const following = (async () => {
    while (!stopped) {
      const batch: JsMsg[] = [];
      try {
        current = await consumer.fetch({ max_messages: maxBatch, expires: fetchMs });
        for await (const m of current) batch.push(m);
      } catch (err) {
        if (stopped) break;
        // The server away (a restart): the messages taken are delivered again; ask again shortly.
        options.log?.warn({ err }, 'pulling events failed');
        await new Promise((r) => setTimeout(r, 500));
      }
      await handling;
      if (batch.length > 0) handling = handleBatch(batch);
    }
    await handling;
  })().catch((err: unknown) => options.log?.warn({ err }, 'the durable event consumer stopped'));
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      current?.stop();
      await following;
    },
  };
}
