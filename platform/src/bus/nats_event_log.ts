/**
 * The event log on NATS: a JetStream stream over `events.>` (under the bus's subject prefix) that keeps
 * every event for the log's age, and one ordered consumer per process that follows it from the oldest
 * held event. The stream's sequence numbers are the ids, so they mean the same on every replica; the
 * process keeps the held window in memory (`EventTail`) and replays from there.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import {
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { prefixToken } from './subject.ts';
import { EventTail, eventSubjects, type EventLog, type EventLogOptions } from './event_log.ts';

/** The stream's name: `EVENTS`, or `EVENTS_<prefix>` for a bus under a subject prefix (`prefixToken`: one name per prefix). */
export function eventStreamName(prefix: string): string {
  return prefix ? `EVENTS_${prefixToken(prefix)}` : 'EVENTS';
}

/**
 * Opens the event stream of a prefix, creating it, or widening how long it holds events to at least
 * `maxAgeMs` (never narrowing what another part asked for). Answers its info.
 */
export async function ensureEventStream(jsm: JetStreamManager, prefix: string, maxAgeMs: number): Promise<StreamInfo> {
  const lead = prefix ? `${prefix}.` : '';
  const name = eventStreamName(prefix);
  const maxAgeNanos = maxAgeMs * 1_000_000;
  const wanted: Partial<StreamConfig> & { name: string } = {
    name,
    subjects: [`${lead}${eventSubjects}`],
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // File storage keeps the ids meaningful across a NATS restart; a reset stream would reuse them.
    storage: StorageType.File,
    max_age: maxAgeNanos,
  };
  let info = await jsm.streams.info(name).catch(() => null);
  if (!info) {
    info = await jsm.streams.add(wanted).catch(async (err: unknown) => {
      // Another replica created it at the same moment.
      const existing = await jsm.streams.info(name).catch(() => null);
      if (!existing) throw err;
      return existing;
    });
  } else if (info.config.max_age !== 0 && info.config.max_age < maxAgeNanos) {
    info = await jsm.streams.update(name, { ...info.config, max_age: maxAgeNanos });
  }
  return info;
}

/** How long a replica waits for an event another replica has already handed out. */
const catchUpMs = 2000;

/**
 * Opens (creating or widening) the stream and follows it. Resolves once this process holds everything
 * the stream held when it was opened, so its listeners hear only new events.
 */
export async function openNatsEventLog(nc: NatsConnection, options: EventLogOptions & { prefix: string; log?: Logger }): Promise<EventLog> {
  const lead = options.prefix ? `${options.prefix}.` : '';
  const name = eventStreamName(options.prefix);
  const jsm = await jetstreamManager(nc);
  const info = await ensureEventStream(jsm, options.prefix, options.maxAgeMs);
  const tail = new EventTail(options.maxAgeMs);
  tail.startAt(Math.max(1, info.state.first_seq));
  const consumer = await jetstream(nc).consumers.get(name, { deliver_policy: DeliverPolicy.All });
  const messages: ConsumerMessages = await consumer.consume();
  const following = (async () => {
    for await (const m of messages) {
      const subject = m.subject.startsWith(lead) ? m.subject.slice(lead.length) : m.subject;
      tail.push({ id: m.seq, subject, data: m.data, at: Number(m.timestampNanos / 1_000_000n) });
    }
  })().catch((err: unknown) => options.log?.warn({ err }, 'the event log consumer stopped'));
  await tail.reach(info.state.last_seq, 10_000);
  const lastHeld = async (): Promise<number> => (await jsm.streams.info(name)).state.last_seq;
  return {
    last: () => tail.last(),
    async after(id) {
      if (id > tail.last()) {
        const last = await lastHeld().catch(() => 0);
        if (id > last || !(await tail.reach(id, catchUpMs))) return null;
      }
      return tail.after(id);
    },
    listen: (listener) => tail.listen(listener),
    async close() {
      messages.stop();
      await following;
    },
  };
}
