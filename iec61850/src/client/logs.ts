/**
 * IEC 61850 logs read through MMS journals (IEC 61850-8-1 §17): QueryLogByTime and QueryLogAfter as
 * ReadJournal, a page at a time. A log entry's variables come in pairs, the data reference with its value
 * and `ReasonCode` with the reasons it was logged; values are JSON by the device's types where the caller
 * can tell them (else by their own shape), references in the object notation `LD/LN.DO.DA[FC]`.
 */
import { binaryTimeFromMs, binaryTimeToMs } from '../mms/ber_values.ts';
import type { MmsRequester } from '../mms/client.ts';
import type { ObjectName } from '../mms/mms_access.ts';
import type { JournalEntry, ReadJournalRequest } from '../mms/mms_journal.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { Iec61850Error } from './errors.ts';
import { leafName, parseReference, toObjectReference } from './reference.ts';
import { toJson, type Json } from './values.ts';
import { flagsOf, NAMED_BITS } from './values_bits.ts';

/** Which entries of a log: between two times (ms since 1970), or after an entry (its EntryID and time, as QueryLogAfter needs both). */
export type LogQuery = { from: number; to: number } | { after: Uint8Array; entryTime: number };

/** One logged value: its reference, its value, the reasons it was logged (`dataChange`, …) where the entry says. */
export type LogValue = { ref: string; value: Json | null; reason?: string[] };

/** One log entry: its EntryID (hex), its time (ISO; null for a time of day without a date), its values. */
export type LogEntry = { entryId: string; time: string | null; values: LogValue[] };

/** The tag IEC 61850-8-1 gives the reasons that follow each logged value. */
const REASON_CODE = 'ReasonCode';

/** A log's journal name: `LD/LN$LogName` or `LD/LN.LogName` → domain LD, item `LN$LogName`. */
export function journalName(logReference: string): Extract<ObjectName, { scope: 'domain' }> {
  const m = /^([A-Za-z0-9_]+)\/([A-Za-z0-9_]+)[$.]([A-Za-z0-9_]+)$/.exec(logReference.trim());
  if (!m) throw new Iec61850Error('bad_reference', `log reference '${logReference}': expected 'LD/LN$LogName' or 'LD/LN.LogName'`);
  return { scope: 'domain', domain: m[1], item: `${m[2]}$${m[3]}` };
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The ReadJournal request of a query. */
function requestOf(journal: ObjectName, q: LogQuery): ReadJournalRequest {
  if ('after' in q) return { service: 'readJournal', journal, after: { time: binaryTimeFromMs(q.entryTime), entry: q.after } };
  return { service: 'readJournal', journal, start: { time: binaryTimeFromMs(q.from) }, stop: { time: binaryTimeFromMs(q.to) } };
}

/** A value as JSON: typed by `typeOf` when its tag is a reference the device can type, else by its own shape. */
async function loggedValue(tag: string, entry: JournalEntry['variables'][number], typeOf?: (ref: string) => Promise<MmsType>) {
  let parsed: ReturnType<typeof parseReference> | undefined;
  try {
    parsed = parseReference(tag);
  } catch {
    return { ref: tag, value: toJson(entry.value) };
  }
  const type = typeOf ? await typeOf(tag).catch(() => undefined) : undefined;
  return { ref: toObjectReference(parsed), value: toJson(entry.value, type, leafName(parsed)) };
}

/** An entry's values, each with the reasons of the `ReasonCode` that follows it. */
async function entryOf(e: JournalEntry, typeOf?: (ref: string) => Promise<MmsType>): Promise<LogEntry> {
  const values: LogValue[] = [];
  for (const v of e.variables) {
    const last = values.at(-1);
    if (v.tag === REASON_CODE && v.value.type === 'bit-string') {
      if (last && last.reason === undefined) {
        const flags = flagsOf(v.value.value, NAMED_BITS.ReasonCode);
        last.reason = Object.keys(flags).filter((k) => flags[k]);
      }
      continue;
    }
    values.push(await loggedValue(v.tag, v, typeOf));
  }
  const ms = binaryTimeToMs(e.time);
  return { entryId: hex(e.entryId), time: ms === undefined ? null : new Date(ms).toISOString(), values };
}

/**
 * One page of a log's entries (ReadJournal): by time (QueryLogByTime) or after an entry (QueryLogAfter).
 * `typeOf` gives the MMS type of a logged reference, so that structures come back with their names.
 */
export async function queryLog(
  client: MmsRequester,
  logReference: string,
  query: LogQuery,
  typeOf?: (ref: string) => Promise<MmsType>,
): Promise<{ entries: LogEntry[]; moreFollows: boolean }> {
  const { entries, moreFollows } = await client.request(requestOf(journalName(logReference), query));
  const out: LogEntry[] = [];
  for (const e of entries) out.push(await entryOf(e, typeOf));
  return { entries: out, moreFollows };
}
