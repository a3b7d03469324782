/**
 * The MMS journal service IEC 61850 logs are read with (ISO 9506-2 ReadJournal, mapped by IEC 61850-8-1):
 * entries between two times (QueryLogByTime), or after an entry (QueryLogAfter: `entryToStartAfter`, its
 * time and EntryID), a page at a time with moreFollows. Each journal entry carries its EntryID, its time
 * (TimeOfDay with date) and its variables, a tag and a value each. Encoded and decoded both ways; byte
 * layouts follow libiec61850's client and server.
 */
import { childrenOf, cons, expectTag, isTag, onlyChildOf, prim, primitiveOf, type Tlv } from './ber.ts';
import { boolOf, boolTlv, intOf, intTlv, visibleOf, visibleTlv } from './ber_fields.ts';
import { decodeBinaryTime, encodeBinaryTime, type BinaryTime } from './ber_values.ts';
import { CodecError } from './codec_error.ts';
import { decodeObjectName, encodeObjectName, type ObjectName } from './mms_access.ts';
import { decodeData, encodeData, type MmsData } from './mms_data.ts';

/** ReadJournal: the journal, and which of its entries (by time range, or after an entry). */
export type ReadJournalRequest = {
  service: 'readJournal';
  journal: ObjectName;
  /** rangeStartSpecification: from a time, or from an entry. */
  start?: { time: BinaryTime } | { entry: Uint8Array };
  /** rangeStopSpecification: up to a time, or this many entries. */
  stop?: { time: BinaryTime } | { count: number };
  /** Only entries holding these variable tags. */
  variables?: string[];
  /** entryToStartAfter: the entries after this one (its time and EntryID). */
  after?: { time: BinaryTime; entry: Uint8Array };
};

/** One variable of a journal entry: IEC 61850 logs the data reference and its value, then `ReasonCode`. */
export type JournalVariable = { tag: string; value: MmsData };

/** One journal entry: its EntryID, its time, its variables (or the annotation of an annotation entry). */
export type JournalEntry = { entryId: Uint8Array; time: BinaryTime; variables: JournalVariable[]; annotation?: string };

/** A page of entries. */
export type ReadJournalResponse = { service: 'readJournal'; entries: JournalEntry[]; moreFollows: boolean };

/** Context tag of ReadJournal in ConfirmedServiceRequest/-Response. */
export const READ_JOURNAL_TAG = 65;

function journalError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

const optional = (present: boolean, encode: () => Uint8Array) => (present ? encode() : new Uint8Array(0));

/** ReadJournal-Request as the CHOICE TLV of ConfirmedServiceRequest. */
export function encodeReadJournalRequest(r: ReadJournalRequest): Uint8Array {
  const start = r.start;
  const stop = r.stop;
  return cons(
    'context',
    READ_JOURNAL_TAG,
    cons('context', 0, encodeObjectName(r.journal)),
    optional(start !== undefined, () =>
      cons(
        'context',
        1,
        start && 'time' in start
          ? prim('context', 0, encodeBinaryTime(start.time))
          : prim('context', 1, (start as { entry: Uint8Array }).entry),
      ),
    ),
    optional(stop !== undefined, () =>
      cons(
        'context',
        2,
        stop && 'time' in stop ? prim('context', 0, encodeBinaryTime(stop.time)) : intTlv('context', 1, (stop as { count: number }).count),
      ),
    ),
    optional(r.variables !== undefined, () => cons('context', 4, ...(r.variables ?? []).map((v) => visibleTlv('universal', 26, v)))),
    optional(r.after !== undefined, () =>
      cons('context', 5, prim('context', 0, encodeBinaryTime(r.after!.time)), prim('context', 1, r.after!.entry)),
    ),
  );
}

/** ReadJournal-Request from its CHOICE TLV. */
export function decodeReadJournalRequest(t: Tlv): ReadJournalRequest {
  const fields = childrenOf(t);
  const field = (n: number) => fields.find((f) => isTag(f, 'context', n));
  const name = field(0);
  if (!name) throw journalError('bad_request', 'ReadJournal without a journal name');
  const out: ReadJournalRequest = { service: 'readJournal', journal: decodeObjectName(onlyChildOf(name)) };
  const start = field(1);
  if (start) {
    const choice = onlyChildOf(start);
    out.start = isTag(choice, 'context', 0) ? { time: decodeBinaryTime(primitiveOf(choice)) } : { entry: primitiveOf(choice) };
  }
  const stop = field(2);
  if (stop) {
    const choice = onlyChildOf(stop);
    out.stop = isTag(choice, 'context', 0) ? { time: decodeBinaryTime(primitiveOf(choice)) } : { count: intOf(choice) };
  }
  const variables = field(4);
  if (variables) out.variables = childrenOf(variables).map(visibleOf);
  const after = field(5);
  if (after) {
    const parts = childrenOf(after);
    const time = parts.find((p) => isTag(p, 'context', 0));
    const entry = parts.find((p) => isTag(p, 'context', 1));
    if (!time || !entry) throw journalError('bad_request', 'entryToStartAfter without its time or entry');
    out.after = { time: decodeBinaryTime(primitiveOf(time)), entry: primitiveOf(entry) };
  }
  return out;
}

function encodeEntry(e: JournalEntry): Uint8Array {
  const form =
    e.annotation !== undefined
      ? visibleTlv('context', 3, e.annotation)
      : cons(
          'context',
          2,
          cons(
            'context',
            1,
            ...e.variables.map((v) => cons('universal', 16, visibleTlv('context', 0, v.tag), cons('context', 1, encodeData(v.value)))),
          ),
        );
  return cons(
    'universal',
    16,
    prim('context', 0, e.entryId),
    // originatingApplication: an ApplicationReference with nothing in it, as libiec61850 sends
    cons('context', 1, cons('universal', 16)),
    cons('context', 2, prim('context', 0, encodeBinaryTime(e.time)), form),
  );
}

function decodeVariable(t: Tlv): JournalVariable {
  const fields = childrenOf(expectTag(t, 'universal', 16, 'journal variable'));
  const tag = fields.find((f) => isTag(f, 'context', 0));
  const value = fields.find((f) => isTag(f, 'context', 1));
  if (!tag || !value) throw journalError('bad_response', 'a journal variable without its tag or value');
  return { tag: visibleOf(tag), value: decodeData(onlyChildOf(value)) };
}

function decodeEntry(t: Tlv): JournalEntry {
  const fields = childrenOf(expectTag(t, 'universal', 16, 'journal entry'));
  const id = fields.find((f) => isTag(f, 'context', 0));
  const content = fields.find((f) => isTag(f, 'context', 2));
  if (!id || !content) throw journalError('bad_response', 'a journal entry without its EntryID or content');
  const parts = childrenOf(content);
  const time = parts.find((p) => isTag(p, 'context', 0));
  if (!time) throw journalError('bad_response', 'a journal entry without its occurrence time');
  const entry: JournalEntry = { entryId: primitiveOf(id), time: decodeBinaryTime(primitiveOf(time)), variables: [] };
  const data = parts.find((p) => isTag(p, 'context', 2));
  const list = data ? childrenOf(data).find((p) => isTag(p, 'context', 1)) : undefined;
  if (list) entry.variables = childrenOf(list).map(decodeVariable);
  const annotation = parts.find((p) => isTag(p, 'context', 3));
  if (annotation) entry.annotation = visibleOf(annotation);
  return entry;
}

/** ReadJournal-Response as the CHOICE TLV of ConfirmedServiceResponse. */
export function encodeReadJournalResponse(r: ReadJournalResponse): Uint8Array {
  return cons(
    'context',
    READ_JOURNAL_TAG,
    cons('context', 0, ...r.entries.map(encodeEntry)),
    r.moreFollows ? boolTlv('context', 1, true) : new Uint8Array(0),
  );
}

/** ReadJournal-Response from its CHOICE TLV. */
export function decodeReadJournalResponse(t: Tlv): ReadJournalResponse {
  const fields = childrenOf(t);
  const list = fields.find((f) => isTag(f, 'context', 0));
  const more = fields.find((f) => isTag(f, 'context', 1));
  return { service: 'readJournal', entries: list ? childrenOf(list).map(decodeEntry) : [], moreFollows: more ? boolOf(more) : false };
}
