/**
 * What a bus event becomes on the live channel: a message with its space, topic and connection (for
 * filtering) and its SSE frames, written once and shared by every client that gets them. A report
 * becomes one `value` event per attribute; a session change one `session` event; a configuration change
 * (of any context, connections included) one `config` event; a script's run one `script` event; an
 * alarm's transition one `alarm` event.
 */
import {
  alarmEvent,
  configEvents,
  decodeEvent,
  eventOf,
  kindOf,
  listedItems,
  protocolEvents,
  type EventDefinition,
  type LiveAlarm,
  type LiveConfigChange,
  type LiveScriptRun,
  type LiveSession,
  type LiveTopic,
  type ReportedValue,
} from '@scada/contracts';
import type { LoggedEvent } from '@scada/platform';

/** One logged event as the live channel sends it. */
export type LiveMessage = {
  /** The event log's id. */
  id: number;
  space: string;
  topic: LiveTopic;
  /** The connection a value or session event is about; null for configuration. */
  connectionId: string | null;
  /** The SSE frames, one per event, each with its id (`<id>` alone, or `<id>:<n>` within a report). */
  frames(): Buffer[];
  /** Every frame in one buffer. */
  all(): Buffer;
};

/** One SSE event: `id`, `event`, one line of JSON data. */
export function frame(id: string, event: string, data: unknown): Buffer {
  return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** One SSE event whose data is JSON already encoded (a report's value as its event holds it): the bytes copied as they are. */
export function rawFrame(id: string, event: string, json: Uint8Array): Buffer {
  const head = `id: ${id}\nevent: ${event}\ndata: `;
  const out = Buffer.allocUnsafe(head.length + json.byteLength + 2);
  const at = out.write(head, 0, 'latin1');
  out.set(json, at);
  out[at + json.byteLength] = 10;
  out[at + json.byteLength + 1] = 10;
  return out;
}

/** Decodes a logged event through the event registry; null for events the live channel does not carry (auth events, unreadable ones). */
export function liveMessage(event: LoggedEvent): LiveMessage | null {
  const build = buildOf(event.subject, event.data);
  if (!build) return null;
  let frames: Buffer[] | null = null;
  let all: Buffer | null = null;
  const framesOf = () =>
    (frames ??= build
      .data()
      .map((d, n, list) =>
        'json' in d
          ? rawFrame(list.length === 1 ? String(event.id) : `${event.id}:${n}`, d.event, d.json)
          : frame(list.length === 1 ? String(event.id) : `${event.id}:${n}`, d.event, d.data),
      ));
  return {
    id: event.id,
    space: build.space,
    topic: build.topic,
    connectionId: build.connectionId,
    frames: framesOf,
    all: () => {
      if (all === null) {
        const list = framesOf();
        // A report of one value (the usual one) is its frame as it is: no copy of it.
        all = list.length === 1 ? list[0]! : Buffer.concat(list);
      }
      return all;
    },
  };
}

/** An SSE event's data: a value to write as JSON, or its JSON already encoded. */
type FrameData = { event: string; data: unknown } | { event: string; json: Uint8Array };
type Build = { space: string; topic: LiveTopic; connectionId: string | null; data(): FrameData[] };

/** The configuration changes the channel carries, by event: every context's entities, connections included. */
const configChanges = new Map<EventDefinition, string>([
  ...Object.entries(configEvents)
    .filter(([, e]) => e !== configEvents.scriptRan)
    .map(([entity, e]) => [e, entity] as [EventDefinition, string]),
  [protocolEvents.connection, 'connection'],
]);
const configVerbs = new Set<string | undefined>(['created', 'updated', 'deleted']);

function buildOf(subject: string, data: Uint8Array): Build | null {
  const def = eventOf(subject);
  if (def === protocolEvents.report) {
    const body = decodeEvent(protocolEvents.report, data);
    if (!body) return null;
    return {
      space: body.space,
      topic: 'values',
      connectionId: body.connectionId,
      // Each value as its publisher in this process encoded it, when known: the same JSON, not made again.
      data: () => {
        const items = listedItems(data);
        if (items !== undefined && items.length === body.values.length) return items.map((json) => ({ event: 'value', json }));
        return body.values.map((data) => ({ event: 'value', data: data satisfies ReportedValue }));
      },
    };
  }
  if (def === protocolEvents.session) {
    const body = decodeEvent(protocolEvents.session, data);
    if (!body) return null;
    const { space: _s, at: _a, ...session } = body;
    return {
      space: body.space,
      topic: 'sessions',
      connectionId: body.connectionId,
      data: () => [{ event: 'session', data: session satisfies LiveSession }],
    };
  }
  if (def === configEvents.scriptRan) {
    const body = decodeEvent(configEvents.scriptRan, data);
    if (!body) return null;
    const run: LiveScriptRun = { scriptId: body.id, outcome: body.outcome, durationMs: body.durationMs };
    return { space: body.space, topic: 'scripts', connectionId: null, data: () => [{ event: 'script', data: run }] };
  }
  if (def === alarmEvent) {
    const body = decodeEvent(alarmEvent, data);
    if (!body) return null;
    const { space: _s, seq: _q, transitionAt, ...rest } = body;
    const alarm = { ...rest, at: transitionAt };
    return {
      space: body.space,
      topic: 'alarms',
      connectionId: body.connectionId,
      data: () => [{ event: 'alarm', data: alarm satisfies LiveAlarm }],
    };
  }
  const entity = def && configChanges.get(def);
  if (def && entity) {
    const verb = kindOf(def, subject);
    const body = decodeEvent(def, data) as { space: string; id: string } | null;
    if (!body || !configVerbs.has(verb ?? undefined)) return null;
    const change: LiveConfigChange = { entity, verb: verb as LiveConfigChange['verb'], id: body.id };
    return { space: body.space, topic: 'config', connectionId: null, data: () => [{ event: 'config', data: change }] };
  }
  return null;
}
