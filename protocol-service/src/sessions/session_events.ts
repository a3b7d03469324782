import { protocolEvents, type SessionEvent } from '@scada/contracts';
import { publishEvent, type Bus } from '@scada/platform';
import type { SessionState, StartedConnection } from '../store/sessions.ts';

/**
 * Publishes `events.protocol.session` when a session's state, last error or warnings changed, so live
 * streams tell their clients when a device goes away and comes back, or does not match its SCL file.
 */
export function publishSessionChange(bus: Bus, connection: StartedConnection, before: SessionState, after: SessionState): void {
  const sameWarnings = JSON.stringify(before.warnings) === JSON.stringify(after.warnings);
  if (before.state === after.state && before.lastError === after.lastError && before.since === after.since && sameWarnings) return;
  const event: Omit<SessionEvent, 'at'> = {
    space: connection.space,
    connectionId: connection.id,
    state: after.state,
    since: after.since,
    lastError: after.lastError,
    warnings: after.warnings,
  };
  try {
    publishEvent(bus, protocolEvents.session, event, { requestId: `session-${connection.id}` });
  } catch {
    // A bus that is closing: the session ends with the process, and nobody is left to tell.
  }
}
