/**
 * The space's alarms that are not normal, kept for the banner and the alarm list: read from
 * `GET /api/alarms/active` when the live stream opens, then moved by each `event: alarm` without a reload.
 * Also the alarm sound: off unless this browser chose it, and never before a gesture on the page.
 */
import { computed, signal } from '@preact/signals';
import { api, messageOf } from './api.ts';

/** The states of an alarm (ISA-18.2). */
export type AlarmState = 'normal' | 'unacknowledged' | 'acknowledged' | 'rtn_unacknowledged' | 'shelved' | 'out_of_service';

/** An alarm as `GET /api/alarms/active` answers it. */
export type ActiveAlarm = {
  alarmId: string;
  name: string;
  groupId: string;
  projectId: string;
  connectionId: string;
  reference: string;
  priority: number;
  message: string;
  state: AlarmState;
  active: boolean;
  value: unknown;
  since: string;
  raisedAt: string | null;
  shelvedUntil: string | null;
  shelveReason: string | null;
  by: string | null;
};

/** One transition as `event: alarm` tells it. */
export type AlarmTransition = {
  alarmId: string;
  connectionId: string;
  groupId: string;
  projectId: string;
  priority: number;
  message: string;
  from: AlarmState;
  to: AlarmState;
  at: string;
  by: string | null;
  value: unknown;
  comment: string | null;
};

/** The alarms that are not normal, by priority (1 first), then by when they entered their state. */
export const activeAlarms = signal<ActiveAlarm[]>([]);
/** Why the list could not be read, in words (null: it was). */
export const alarmsError = signal<string | null>(null);

/** States that wait for an operator's acknowledgement. */
export const waitsForAck = (state: AlarmState) => state === 'unacknowledged' || state === 'rtn_unacknowledged';

/** The banner's figures: per priority (most urgent first) the unacknowledged and the active, and the newest unacknowledged alarm. */
export const alarmSummary = computed(() => {
  const byPriority = new Map<number, { priority: number; unacknowledged: number; active: number }>();
  let newest: ActiveAlarm | null = null;
  for (const a of activeAlarms.value) {
    const unacked = waitsForAck(a.state);
    // Shelved and out-of-service alarms are suppressed: the banner does not count them.
    const active = a.state === 'unacknowledged' || a.state === 'acknowledged';
    if (!unacked && !active) continue;
    const row = byPriority.get(a.priority) ?? { priority: a.priority, unacknowledged: 0, active: 0 };
    row.unacknowledged += unacked ? 1 : 0;
    row.active += active ? 1 : 0;
    byPriority.set(a.priority, row);
    if (unacked && (!newest || a.since > newest.since)) newest = a;
  }
  const rows = [...byPriority.values()].sort((a, b) => a.priority - b.priority);
  return { rows, newest: newest as ActiveAlarm | null, unacknowledged: rows.reduce((n, r) => n + r.unacknowledged, 0) };
});

const byPriorityThenTime = (a: ActiveAlarm, b: ActiveAlarm) =>
  a.priority - b.priority || (a.since < b.since ? -1 : a.since > b.since ? 1 : 0) || (a.alarmId < b.alarmId ? -1 : 1);

/** Counts the transitions applied, so a read that overlapped one is read again. */
let applied = 0;
let reloadTimer: ReturnType<typeof setTimeout> | undefined;
let following = false;

/** Reads the active list again (the stream opened, or an alarm arrived that the list does not know yet). */
export async function reloadAlarms(): Promise<void> {
  following = true;
  const seen = applied;
  try {
    const list = await api<ActiveAlarm[]>('GET', '/api/alarms/active');
    if (!following) return;
    // A transition that arrived while this read was on its way may be newer than what it answered.
    if (applied !== seen) return scheduleReload();
    activeAlarms.value = [...list].sort(byPriorityThenTime);
    alarmsError.value = null;
  } catch (err) {
    if (following) alarmsError.value = messageOf(err);
  }
}

function scheduleReload(): void {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => void reloadAlarms(), 250);
}

/** Applies one `event: alarm` to the list at once; a read then fills in what the event does not carry. */
export function applyAlarmEvent(t: AlarmTransition): void {
  applied++;
  const list = activeAlarms.peek();
  const known = list.find((a) => a.alarmId === t.alarmId);
  const rest = list.filter((a) => a.alarmId !== t.alarmId);
  if (t.to === 'normal') {
    activeAlarms.value = rest;
  } else {
    const active =
      t.to === 'unacknowledged' || t.to === 'acknowledged' ? true : t.to === 'rtn_unacknowledged' ? false : (known?.active ?? false);
    const next: ActiveAlarm = {
      ...(known ?? { name: t.message, reference: '', raisedAt: null, shelvedUntil: null, shelveReason: null }),
      alarmId: t.alarmId,
      connectionId: t.connectionId,
      groupId: t.groupId,
      projectId: t.projectId,
      priority: t.priority,
      message: t.message,
      state: t.to,
      active,
      value: t.value,
      since: t.at,
      by: t.by,
      // A shelving's comment is its reason; the read that follows brings when it ends.
      ...(t.to === 'shelved' ? { shelveReason: t.comment, shelvedUntil: null } : {}),
    };
    activeAlarms.value = [...rest, next].sort(byPriorityThenTime);
  }
  if (t.to === 'unacknowledged') beep();
  scheduleReload();
}

/** Forgets the list (signed out, another space). */
export function forgetAlarms(): void {
  following = false;
  clearTimeout(reloadTimer);
  activeAlarms.value = [];
  alarmsError.value = null;
}

const soundKey = 'scada-console-alarm-sound';
/** Whether this browser plays a tone when an alarm comes (off until chosen). */
export const soundOn = signal(localStorage.getItem(soundKey) === 'on');
let audio: AudioContext | null = null;

/** Turns the sound on or off, remembered in this browser; called from a click, so the audio may start. */
export function setSound(on: boolean): void {
  soundOn.value = on;
  localStorage.setItem(soundKey, on ? 'on' : 'off');
  if (on) allowAudio();
}

/** Starts the audio; only ever called from a user's gesture, as browsers require. */
export function allowAudio(): void {
  if (!soundOn.peek()) return;
  audio ??= new AudioContext();
  if (audio.state === 'suspended') void audio.resume();
}

/** A short two-tone chime, made by the Web Audio API (no audio file). */
function beep(): void {
  if (!soundOn.peek() || !audio || audio.state !== 'running') return;
  const start = audio.currentTime;
  for (const [i, freq] of [880, 660].entries()) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = freq;
    gain.gain.setValueAtTime(0.15, start + i * 0.18);
    gain.gain.exponentialRampToValueAtTime(0.001, start + i * 0.18 + 0.16);
    tone.connect(gain).connect(audio.destination);
    tone.start(start + i * 0.18);
    tone.stop(start + i * 0.18 + 0.17);
  }
}
