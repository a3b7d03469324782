/**
 * What a bus event becomes on the live channel: a message with its space, topic and connection (for
 * filtering) and its SSE frames, written once and shared by every client that gets them. A report
 * becomes one `value` event per attribute; a session change one `session` event; a configuration change
 * (of any context, connections included) one `config` event; a script's run one `script` event.
 */
import type { LiveAlarm, LiveConfigChange, LiveScriptRun, LiveSession, LiveTopic, ReportedValue } from '@scada/contracts';
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

const decoder = new TextDecoder();
const configVerbs = new Set(['created', 'updated', 'deleted']);

/** One SSE event: `id`, `event`, one line of JSON data. */
export function frame(id: string, event: string, data: unknown): Buffer {
  return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Decodes a logged event; null for events the live channel does not carry (auth events, unreadable ones). */
export function liveMessage(event: LoggedEvent): LiveMessage | null {
  const parts = event.subject.split('.');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(decoder.decode(event.data)) as Record<string, unknown>;
  } catch {
    return null;
  }
  const space = body.space;
  if (typeof space !== 'string') return null;
  const build = buildOf(parts, body);
  if (!build) return null;
  let frames: Buffer[] | null = null;
  let all: Buffer | null = null;
  const framesOf = () =>
    (frames ??= build.data().map((d, n, list) => frame(list.length === 1 ? String(event.id) : `${event.id}:${n}`, d.event, d.data)));
  return {
    id: event.id,
    space,
    topic: build.topic,
    connectionId: build.connectionId,
    frames: framesOf,
    all: () => (all ??= Buffer.concat(framesOf())),
  };
}

type Build = { topic: LiveTopic; connectionId: string | null; data(): { event: string; data: unknown }[] };

function buildOf(parts: string[], body: Record<string, unknown>): Build | null {
  const [, context, entity, verb] = parts;
  if (context === 'protocol' && entity === 'report' && parts.length === 3) {
    const connectionId = String(body.connectionId);
    return { topic: 'values', connectionId, data: () => reportValues(body).map((data) => ({ event: 'value', data })) };
  }
  if (context === 'protocol' && entity === 'session' && parts.length === 3) {
    const connectionId = String(body.connectionId);
    return { topic: 'sessions', connectionId, data: () => [{ event: 'session', data: sessionOf(body) }] };
  }
  if (context === 'config' && entity === 'script' && verb === 'ran' && parts.length === 4 && typeof body.id === 'string') {
    const run: LiveScriptRun = { scriptId: body.id, outcome: String(body.outcome), durationMs: Number(body.durationMs) };
    return { topic: 'scripts', connectionId: null, data: () => [{ event: 'script', data: run }] };
  }
  if (context === 'protocol' && entity === 'alarm' && parts.length === 3 && typeof body.alarmId === 'string') {
    const connectionId = String(body.connectionId);
    return { topic: 'alarms', connectionId, data: () => [{ event: 'alarm', data: alarmOf(body) }] };
  }
  const configEntity = context === 'protocol' && entity === 'connection' ? 'connection' : context === 'config' ? entity : undefined;
  if (configEntity && verb && configVerbs.has(verb) && parts.length === 4 && typeof body.id === 'string') {
    const change: LiveConfigChange = { entity: configEntity, verb: verb as LiveConfigChange['verb'], id: body.id };
    return { topic: 'config', connectionId: null, data: () => [{ event: 'config', data: change }] };
  }
  return null;
}

/** The values of a report, each with every field the contract lists (null where the report had none). */
function reportValues(body: Record<string, unknown>): ReportedValue[] {
  const values = Array.isArray(body.values) ? (body.values as Record<string, unknown>[]) : [];
  const connectionId = String(body.connectionId);
  return values.map((v) => ({
    connectionId,
    reference: String(v.reference ?? v.ref),
    value: v.value,
    quality: (v.quality as ReportedValue['quality']) ?? null,
    timestamp: (v.timestamp as string | undefined) ?? null,
    timestampSource: (v.timestampSource as ReportedValue['timestampSource'] | undefined) ?? (v.timestamp ? 'attribute' : null),
    receivedAt: (v.receivedAt as string | undefined) ?? String(body.at),
    rcb: String(v.rcb ?? body.rcb),
    reason: (v.reason as ReportedValue['reason']) ?? null,
    seqNum: (v.seqNum as number | undefined) ?? (body.seqNum as number | undefined) ?? null,
  }));
}

function sessionOf(body: Record<string, unknown>): LiveSession {
  return {
    connectionId: String(body.connectionId),
    state: body.state as LiveSession['state'],
    since: String(body.since),
    lastError: (body.lastError as string | null) ?? null,
    warnings: (body.warnings as LiveSession['warnings']) ?? [],
  };
}

function alarmOf(body: Record<string, unknown>): LiveAlarm {
  return {
    alarmId: String(body.alarmId),
    connectionId: String(body.connectionId),
    groupId: String(body.groupId),
    projectId: String(body.projectId),
    priority: Number(body.priority),
    message: String(body.message),
    from: String(body.from),
    to: String(body.to),
    at: String(body.transitionAt ?? body.at),
    by: (body.by as string | null) ?? null,
    value: body.value ?? null,
    comment: (body.comment as string | null) ?? null,
  };
}
