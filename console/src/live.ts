/**
 * The space's live channel (`EventSource('/api/live?space=…')`): the sessions' states and the reported
 * values. Values that arrive between two frames are applied together at the next animation frame, each
 * row its own signal, so only the rows that changed are drawn again.
 */
import { signal, type Signal } from '@preact/signals';
import { sessionEnded } from './api.ts';
import { applyAlarmEvent, forgetAlarms, reloadAlarms, type AlarmTransition } from './alarms.ts';

/** A session's state as `event: session` tells it. */
export type SessionState = {
  connectionId: string;
  state: string;
  since?: string;
  lastError?: string | null;
  warnings?: { code: string; detail?: string }[];
};

/** One reported value, with when it last changed on screen. */
export type LiveValue = {
  connectionId: string;
  reference: string;
  value: unknown;
  quality?: unknown;
  timestamp?: string | null;
  receivedAt?: string;
  stale?: boolean;
  /** Counts the changes seen, so the cell can flash each time. */
  changes: number;
};

/** The sessions by connection id. */
export const sessions = signal<Record<string, SessionState>>({});
/** The keys (`connectionId reference`) of the values by connection, in order of arrival. */
export const valueKeys = signal<Record<string, string[]>>({});
/** Each value's own signal. */
const rows = new Map<string, Signal<LiveValue>>();
/** Whether the stream is open, and the last thing it said when it ended. */
export const liveStatus = signal<{ open: boolean; ended?: string }>({ open: false });
/** Bumped on every `config` event: lists reload. */
export const configChanges = signal(0);

/** The signal of one value's row. */
export const rowOf = (key: string) => rows.get(key) as Signal<LiveValue>;

let source: EventSource | null = null;

/** Why the platform ended the stream, in words. */
const endSentences: Record<string, string> = {
  access_ended: 'Your access to this space ended: an administrator changed your roles or spaces.',
  ip_denied: 'The platform no longer accepts requests from your address.',
};
let pending = new Map<string, Omit<LiveValue, 'changes'>>();
let frame = 0;

/** Applies the values gathered since the last frame. */
function flush(): void {
  frame = 0;
  const batch = pending;
  pending = new Map();
  let keysChanged = false;
  const keys = { ...valueKeys.peek() };
  for (const [key, v] of batch) {
    const row = rows.get(key);
    if (row) {
      row.value = { ...v, changes: row.peek().changes + 1 };
    } else {
      rows.set(key, signal({ ...v, changes: 0 }));
      keys[v.connectionId] = [...(keys[v.connectionId] ?? []), key];
      keysChanged = true;
    }
  }
  if (keysChanged) valueKeys.value = keys;
}

function queue(v: Omit<LiveValue, 'changes'>): void {
  pending.set(`${v.connectionId} ${v.reference}`, v);
  if (!frame) frame = requestAnimationFrame(flush);
}

/** Opens the space's stream (closing any other); the browser reconnects it with `Last-Event-ID`. */
export function follow(space: string): void {
  stopFollowing();
  const es = new EventSource(`/api/live?space=${encodeURIComponent(space)}&topics=values,sessions,config,alarms`);
  source = es;
  es.onopen = () => {
    liveStatus.value = { open: true };
  };
  es.onerror = () => {
    liveStatus.value = { open: false, ended: 'The live connection was interrupted; reconnecting…' };
  };
  es.addEventListener('snapshot', (e) => {
    const data = JSON.parse((e as MessageEvent).data) as { sessions: SessionState[]; values: Omit<LiveValue, 'changes'>[] };
    const next: Record<string, SessionState> = {};
    for (const s of data.sessions) next[s.connectionId] = s;
    sessions.value = next;
    for (const v of data.values) queue(v);
    // A fresh snapshot may follow a gap: the alarms are read again (a resumed stream replays their events).
    void reloadAlarms();
  });
  es.addEventListener('session', (e) => {
    const s = JSON.parse((e as MessageEvent).data) as SessionState;
    sessions.value = { ...sessions.peek(), [s.connectionId]: s };
    if (s.state !== 'connected') markStale(s.connectionId);
  });
  es.addEventListener('value', (e) => queue({ ...(JSON.parse((e as MessageEvent).data) as LiveValue), stale: false }));
  es.addEventListener('alarm', (e) => applyAlarmEvent(JSON.parse((e as MessageEvent).data) as AlarmTransition));
  es.addEventListener('config', () => {
    configChanges.value++;
  });
  es.addEventListener('end', (e) => {
    const { reason = '' } = JSON.parse((e as MessageEvent).data) as { reason?: string };
    es.close();
    if (reason === 'session_ended' || reason === 'session_expired') {
      sessionEnded.value++;
      return;
    }
    // A gateway that stops, or a stream that fell behind: a fresh stream (and snapshot) after a moment.
    if (reason === 'shutdown' || reason === 'slow') {
      liveStatus.value = { open: false, ended: 'The live connection was interrupted; reconnecting…' };
      setTimeout(() => source === es && follow(space), 1000);
      return;
    }
    liveStatus.value = {
      open: false,
      ended: endSentences[reason] ?? 'The live connection ended. Reload the page to follow the plant again.',
    };
  });
}

/** The values of a connection whose session ended are the device's last word: shown as stale. */
function markStale(connectionId: string): void {
  for (const key of valueKeys.peek()[connectionId] ?? []) {
    const row = rows.get(key);
    if (row && !row.peek().stale) row.value = { ...row.peek(), stale: true };
  }
}

/** Closes the stream and forgets what it said. */
export function stopFollowing(): void {
  source?.close();
  source = null;
  if (frame) cancelAnimationFrame(frame);
  frame = 0;
  pending = new Map();
  rows.clear();
  valueKeys.value = {};
  sessions.value = {};
  forgetAlarms();
  liveStatus.value = { open: false };
}
