/**
 * The event registry: every event of the platform, defined once (`event.ts`) by the context that
 * publishes it, listed here as operations are in `registry.ts`.
 */
import { authEvents } from './auth/events.ts';
import { configEvents } from './config/events.ts';
import { eventRoot, type EventDefinition } from './event.ts';
import type { ServiceName } from './operation.ts';
import { alarmEvent } from './protocol/alarms.ts';
import { protocolEvents } from './protocol/events.ts';

/** Every event, by context. */
export const events: readonly EventDefinition[] = [
  ...Object.values(authEvents),
  ...Object.values(configEvents),
  ...Object.values(protocolEvents),
  alarmEvent,
];

/** The subject a service publishes its events under: `events.<service>.>`. */
export function eventsOf(service: ServiceName): string {
  return `${eventRoot}.${service}.>`;
}

const bySubject = new Map<string, EventDefinition>(
  events.flatMap((e) => (e.kinds.length === 0 ? [[e.subject(), e]] : e.kinds.map((k) => [e.subject(k), e]))) as [string, EventDefinition][],
);

/** The definition of the event a subject carries; undefined for a subject no event has. */
export function eventOf(subject: string): EventDefinition | undefined {
  return bySubject.get(subject);
}
