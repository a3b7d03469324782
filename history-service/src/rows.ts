/**
 * What an event of the protocol service holds for the history: one row per recorded attribute of a report
 * or a read, placed on the time axis (the device's time, else the time of receipt), and the session
 * states that make a trend's gaps.
 */
import {
  canonicalInstant,
  decodeEvent,
  isoTime,
  eventOf,
  eventsOf,
  protocolEvents,
  type ReadValue,
  type ReportedValue,
} from '@scada/contracts';
import type { DurableEvent } from '@scada/platform';

/**
 * The subjects the history service follows: every event of the protocol service, as one subject (a
 * consumer of one filter works on every NATS server); reports, reads and session states are recorded,
 * the rest passed over.
 */
export const recordedSubjects = [eventsOf('protocol')];

/** A recorded value as the insert takes it (short keys: a batch travels to the store as JSON). */
export type PointRow = {
  c: string;
  r: string;
  /** The place on the time axis: the device's time (`dt`) when it can be believed, else `at`. */
  t: string;
  /** The platform's time of receipt. */
  at: string;
  rcb: string;
  seq: string;
  sp: string;
  sn: number | null;
  dt: string | null;
  num: number | null;
  v: unknown;
  q: unknown;
  w: number;
};

/** A session state as the insert takes it. */
export type SessionRow = { c: string; since: string; state: string; sp: string; err: string | null };

/** A validity's rank: the worst quality of a bucket is the highest. */
export const validityRank: Record<string, number> = { good: 0, questionable: 1, reserved: 2, invalid: 3 };
/** The validities by rank. */
export const validityNames = ['good', 'questionable', 'reserved', 'invalid'] as const;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function timeOf(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const ms = canonicalInstant(text) ?? Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * A time's instant and its text as the store is given it: the text itself when it is already the form
 * `toISOString` writes (as every time the platform stamps is), else that form of its instant; null for
 * no time.
 */
function stampOf(text: unknown): { ms: number; iso: string } | null {
  if (typeof text !== 'string') return null;
  const ms = canonicalInstant(text);
  if (ms !== undefined) return { ms, iso: text };
  const parsed = Date.parse(text);
  return Number.isFinite(parsed) ? { ms: parsed, iso: isoTime(parsed) } : null;
}

/** The instant of a time text a row holds (`toISOString`'s form, see {@link stampOf}). */
export function instantOf(text: string): number {
  return canonicalInstant(text) ?? Date.parse(text);
}

/** A device time later than its receipt by more than this is not believed: the device's clock is ahead. */
export const deviceTimeAheadMs = 5 * 60_000;

/**
 * A value's place on the time axis: the device's time when it carries one, unless that cannot be so (later
 * than the value's receipt by more than `deviceTimeAheadMs`, or before the oldest kept day, as a device
 * whose clock was never set reports 1970), the time of receipt otherwise.
 */
export function axisTimeOf(device: number | null, receivedAt: number, keptFrom: number): number {
  return device !== null && device >= keptFrom && device <= receivedAt + deviceTimeAheadMs ? device : receivedAt;
}

/** The most attributes one structured value is recorded as. */
const maxLeaves = 256;

/**
 * The attributes a value holds: a structure (a data object reported whole, `AnIn1` of `GGIO1.AnIn1[MX]`)
 * is recorded attribute by attribute under each attribute's own reference (`GGIO1.AnIn1.mag.f[MX]`), so a
 * trend reads a number; its `q` and `t` are the point's quality and device time, not values of their own.
 */
export function leavesOf(reference: string, value: unknown): [string, unknown][] {
  if (value === null || typeof value !== 'object') return [[reference, value]];
  const m = /^(.*?)(\[[A-Z]{2}\])?$/.exec(reference)!;
  const base = m[1]!;
  const fc = m[2] ?? '';
  const out: [string, unknown][] = [];
  const walk = (v: unknown, path: string) => {
    if (out.length >= maxLeaves) return;
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) walk(item, `${path}(${i})`);
    } else if (v !== null && typeof v === 'object' && Object.keys(v).length > 0) {
      for (const [k, item] of Object.entries(v)) if (k !== 'q' && k !== 't') walk(item, `${path}.${k}`);
    } else out.push([`${base}${path}${fc}`, v]);
  };
  walk(value, '');
  return out.length > 0 ? out : [[reference, value]];
}

/** A reference as IEC 61850 writes it: `LD/LN$FC$DO$DA` (MMS, as a read may name it) becomes `LD/LN.DO.DA[FC]`. */
export function iecReference(reference: string): string {
  const m = /^([^/$]+\/[^/$]+)\$([A-Z]{2})\$(.+)$/.exec(reference);
  return m ? `${m[1]}.${m[3]!.replaceAll('$', '.')}[${m[2]}]` : reference;
}

/** Where a value comes from: its space, connection, place in its block, and the oldest kept day. */
type Origin = { space: string; connectionId: string; seq: string; seqNum: number | null; keptFrom: number };

/** ES2024's well-formed string methods (Node 20, Deno), which the project's ES2022 library does not declare. */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };

/**
 * Text as the store can keep it: PostgreSQL's text and jsonb hold no NUL character, and jsonb no half of
 * a surrogate pair, so a string that carries one would fail its whole batch, delivered again and failing
 * again. It is kept with U+FFFD (the replacement character) in each one's place instead.
 */
export function storable(text: string): string {
  const whole = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return (whole as unknown as WellFormed).isWellFormed() ? whole : (whole as unknown as WellFormed).toWellFormed();
}

/** A leaf value as the store can keep it (see {@link storable}). */
function storableValue(value: unknown): unknown {
  return typeof value === 'string' ? storable(value) : value;
}

/** Appends the rows of one value to `points`. */
function pointsOf(points: PointRow[], o: Origin, rcb: string, v: ReportedValue | ReadValue): void {
  const at = stampOf(v?.receivedAt);
  if (at === null || typeof v.reference !== 'string') return;
  const validity = (v.quality as { validity?: string } | null)?.validity;
  const device = stampOf(v.timestamp);
  const axis = device !== null && axisTimeOf(device.ms, at.ms, o.keptFrom) === device.ms ? device.iso : at.iso;
  const rcbText = storable(rcb);
  const seq = storable(o.seq);
  const w = validity ? (validityRank[validity] ?? 0) : 0;
  for (const [reference, value] of leavesOf(iecReference(v.reference), v.value)) {
    const numeric = typeof value === 'number' && Number.isFinite(value);
    points.push({
      c: o.connectionId,
      r: storable(reference),
      t: axis,
      at: at.iso,
      rcb: rcbText,
      seq,
      sp: o.space,
      sn: o.seqNum,
      dt: device === null ? null : device.iso,
      num: numeric ? value : null,
      v: numeric ? null : storableValue(value ?? null),
      q: v.quality ?? null,
      w,
    });
  }
}

/**
 * The rows one event holds (nothing for an event that is not what its definition in the registry says);
 * `keptFrom` is the first millisecond still kept, before which no device time is believed.
 */
export function rowsOf(event: DurableEvent, keptFrom: number): { points: PointRow[]; sessions: SessionRow[] } {
  const points: PointRow[] = [];
  const sessions: SessionRow[] = [];
  const def = eventOf(event.subject);
  if (def === protocolEvents.session) {
    const s = decodeEvent(protocolEvents.session, event.data);
    if (s && uuid.test(s.connectionId) && timeOf(s.since) !== null)
      sessions.push({
        c: s.connectionId,
        since: new Date(timeOf(s.since)!).toISOString(),
        state: s.state,
        sp: s.space,
        err: s.lastError === null || s.lastError === undefined ? null : storable(s.lastError),
      });
  } else if (def === protocolEvents.report) {
    const r = decodeEvent(protocolEvents.report, event.data);
    if (!r || !uuid.test(r.connectionId)) return { points, sessions };
    const seq = r.entryId ? `e:${r.entryId}` : r.seqNum !== null ? `s:${r.seqNum}` : 's';
    const block = { space: r.space, connectionId: r.connectionId, seq, seqNum: r.seqNum, keptFrom };
    for (const v of r.values) pointsOf(points, block, v.rcb || r.rcb, v);
  } else if (def === protocolEvents.read) {
    const r = decodeEvent(protocolEvents.read, event.data);
    if (!r || !uuid.test(r.connectionId)) return { points, sessions };
    const read = { space: r.space, connectionId: r.connectionId, seq: 'r', seqNum: null, keptFrom };
    for (const v of r.values) pointsOf(points, read, '', v);
  }
  return { points, sessions };
}
