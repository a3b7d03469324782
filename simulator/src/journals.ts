/**
 * The simulated device's logs (IEC 61850-7-2 LOG, an MMS journal each, IEC 61850-8-1 §17): a log keeps
 * an entry whenever a member of its data set changes, holding each member that changed with its value and
 * the reasons (`ReasonCode`: data change, quality change), up to its capacity past which the oldest go.
 * ReadJournal answers entries between two times or after an entry (its EntryID), a page at a time with
 * moreFollows, as libiec61850 does; an unknown journal is access/object-non-existent.
 */
import {
  binaryTimeFromMs,
  binaryTimeToMs,
  bitStringFromBits,
  type JournalEntry,
  type ReadJournalRequest,
  type ReadJournalResponse,
} from '@scada/iec61850/wire';
import { isWithin, readNode, type DataNode } from './data_tree.ts';
import { findDataSet, splitReference, type DataSetList, type Device } from './device.ts';
import type { ServerError } from './server_pdus.ts';

/** A log to keep: its journal (`LD/LN$LogName`), the data set it logs (`LD/LN$name`), how many entries it holds. */
export type LogOptions = { name: string; dataSet: string; capacity?: number };

type Kept = JournalEntry & { ms: number; seq: bigint };
type Log = { name: string; dataSet: DataSetList; capacity: number; entries: Kept[] };

/** What ReadJournal answers. */
export type JournalOutcome = { ok: true; response: ReadJournalResponse } | { ok: false; error: ServerError };

/** ReasonCode bits (IEC 61850-8-1): 1 data change, 2 quality change. */
const DATA_CHANGE = 1;
const QUALITY_CHANGE = 2;

function entryIdOf(seq: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, seq);
  return out;
}

function seqOf(entryId: Uint8Array): bigint | undefined {
  return entryId.length === 8 ? new DataView(entryId.buffer, entryId.byteOffset, 8).getBigUint64(0) : undefined;
}

/** The logs of a device. */
export class Journals {
  readonly #logs = new Map<string, Log>();
  readonly #pageSize: () => number;
  readonly #refuse: () => boolean;
  #nextSeq = 1n;

  /** `pageSize` entries at most in one ReadJournal answer; `refuse` answers every read object-access-denied (a fault). */
  constructor(device: Device, logs: readonly LogOptions[], options: { pageSize: () => number; refuse: () => boolean }) {
    this.#pageSize = options.pageSize;
    this.#refuse = options.refuse;
    for (const l of logs) {
      const name = splitReference(l.dataSet);
      const dataSet = name ? findDataSet(device, name) : undefined;
      if (!dataSet) throw new Error(`log ${l.name}: no data set ${l.dataSet}`);
      this.#logs.set(l.name, { name: l.name, dataSet, capacity: l.capacity ?? 1000, entries: [] });
    }
  }

  /** Logs the members that `leaves` (changed attributes) touch, one entry a log. */
  onChanges(leaves: readonly DataNode[], now = Date.now()): void {
    if (leaves.length === 0) return;
    for (const log of this.#logs.values()) {
      const variables: JournalEntry['variables'] = [];
      for (const m of log.dataSet.members) {
        const touched = m.node ? leaves.filter((l) => isWithin(l, m.node!)) : [];
        if (touched.length === 0 || !m.node) continue;
        const bits = Array.from({ length: 7 }, () => false);
        for (const l of touched) bits[l.bType === 'Quality' ? QUALITY_CHANGE : DATA_CHANGE] = true;
        variables.push(
          { tag: m.reference, value: readNode(m.node) },
          { tag: 'ReasonCode', value: { type: 'bit-string', value: bitStringFromBits(bits) } },
        );
      }
      if (variables.length === 0) continue;
      const seq = this.#nextSeq++;
      log.entries.push({ entryId: entryIdOf(seq), time: binaryTimeFromMs(now), variables, ms: now, seq });
      if (log.entries.length > log.capacity) log.entries.splice(0, log.entries.length - log.capacity);
    }
  }

  /** Entries a log holds now (for tests). */
  entries(name: string): JournalEntry[] {
    return this.#logs.get(name)?.entries ?? [];
  }

  /** Answers ReadJournal. */
  read(r: ReadJournalRequest): JournalOutcome {
    const log = r.journal.scope === 'domain' ? this.#logs.get(`${r.journal.domain}/${r.journal.item}`) : undefined;
    if (!log) return { ok: false, error: { errorClass: 'access', code: 2 } };
    if (this.#refuse()) return { ok: false, error: { errorClass: 'access', code: 3 } };
    const selected = this.#select(log, r);
    if (!selected) return { ok: false, error: { errorClass: 'service', code: 5, description: 'no range and no entry to start after' } };
    const entries = selected.slice(0, this.#pageSize()).map(({ entryId, time, variables }) => ({ entryId, time, variables }));
    return { ok: true, response: { service: 'readJournal', entries, moreFollows: entries.length < selected.length } };
  }

  /** The entries a request asks for, oldest first; undefined for a request that asks for none in a way this log reads. */
  #select(log: Log, r: ReadJournalRequest): Kept[] | undefined {
    if (r.after) {
      const seq = seqOf(r.after.entry);
      const time = binaryTimeToMs(r.after.time) ?? 0;
      // the entries after the one named; one the log no longer holds: those since its time
      return log.entries.filter((e) => (seq !== undefined && log.entries.some((k) => k.seq === seq) ? e.seq > seq : e.ms > time));
    }
    if (r.start && 'time' in r.start) {
      const from = binaryTimeToMs(r.start.time) ?? 0;
      const to = r.stop && 'time' in r.stop ? (binaryTimeToMs(r.stop.time) ?? Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
      return log.entries.filter((e) => e.ms >= from && e.ms <= to);
    }
    return undefined;
  }
}
