/**
 * The buffer of a buffered report control block, as libiec61850 servers keep it (IEC 61850-7-2 §17.2.2):
 * every entry, sent or not, with its EntryID, time and the values of its members at that time, up to a
 * capacity past which the oldest go. A client resynchronises by writing the EntryID of the last entry it
 * received before enabling: the block then sends what follows it. Enabling without that (a client that
 * lost its place, or never had one) sends the whole buffer again from its oldest entry with BufOvfl set,
 * and so does an EntryID the buffer no longer holds (the write is refused).
 */
import type { MmsData } from '@scada/iec61850';
import type { Inclusion } from './rcb_model.ts';

/** One entry: its EntryID (a counter), its time, and the included members with their values then. */
export type BufferEntry = { id: number; ms: number; included: Inclusion; values: Map<number, MmsData> };

/** The EntryID of an entry: 8 octets, the counter big-endian. */
export function entryIdOf(n: number): MmsData {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(n));
  return { type: 'octet-string', value: bytes };
}

function counterOf(value: MmsData): number | undefined {
  if (value.type !== 'octet-string' || value.value.length !== 8) return undefined;
  return Number(new DataView(value.value.buffer, value.value.byteOffset, 8).getBigUint64(0));
}

/**
 * The entries sit in an array in EntryID order with a moving start (`#head`): adding one and dropping the
 * oldest cost a constant, not a move of every entry, and the entries to transmit are found from the
 * counter (EntryIDs follow one another), not by a look at every entry, so a device reporting thousands of
 * entries a second into a buffer of 20,000 does not spend its time walking it.
 */
export class ReportBuffer {
  readonly #capacity: () => number;
  #entries: BufferEntry[] = [];
  /** Where the oldest entry held is in `#entries` (those before it are gone). */
  #head = 0;
  #counter = 0;
  /** The EntryID (counter) of the next entry to transmit. */
  #next = 1;
  /** An EntryID written since the block was last disabled named an entry the buffer holds. */
  #resync = false;
  /** Entries were lost (or the client's place is unknown) since the last entry transmitted. */
  overflowed = false;

  constructor(capacity: () => number) {
    this.#capacity = capacity;
  }

  /** The newest entry's EntryID counter (0 before any). */
  get newest(): number {
    return this.#counter;
  }

  /** How many entries the buffer holds. */
  get #size(): number {
    return this.#entries.length - this.#head;
  }

  /** The oldest entry held, if any. */
  get #oldest(): BufferEntry | undefined {
    return this.#entries[this.#head];
  }

  /** Adds an entry; the oldest goes past the capacity, and an untransmitted one lost sets the overflow. */
  add(ms: number, included: Inclusion, values: Map<number, MmsData>): BufferEntry {
    const entry = { id: ++this.#counter, ms, included, values };
    this.#entries.push(entry);
    const capacity = Math.max(1, this.#capacity());
    while (this.#size > capacity) {
      const dropped = this.#entries[this.#head++]!;
      if (dropped.id >= this.#next) {
        this.overflowed = true;
        this.#next = dropped.id + 1;
      }
    }
    // What was dropped leaves the array once it is as long as what is held.
    if (this.#head > 1024 && this.#head >= this.#size) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    return entry;
  }

  /** The entries not transmitted yet, oldest first; they count as transmitted from now on. */
  take(): BufferEntry[] {
    const oldest = this.#oldest;
    // Entries hold consecutive EntryIDs: the first one due is `#next - oldest.id` places after the oldest.
    const due = oldest === undefined ? [] : this.#entries.slice(this.#head + Math.max(0, this.#next - oldest.id));
    this.#next = this.#counter + 1;
    return due;
  }

  /**
   * A client wrote EntryID (the block disabled): all zeroes starts from the oldest entry; an entry the
   * buffer holds resumes after it; any other value is refused (false) and counts as an overflow.
   */
  resync(value: MmsData): boolean {
    const id = counterOf(value);
    if (id === 0) {
      this.#fromOldest();
      return true;
    }
    const oldest = this.#oldest;
    if (id === undefined || oldest === undefined || id < oldest.id || id > this.#counter) {
      this.overflowed = true;
      return false;
    }
    this.#next = id + 1;
    this.#resync = true;
    this.overflowed = false;
    return true;
  }

  /** The block is enabled: without a resynchronisation, everything buffered goes again, flagged. */
  enabled(): void {
    if (!this.#resync) this.#fromOldest();
    this.#resync = false;
  }

  /** A client disabled the block (RptEna false). */
  disabled(): void {
    this.overflowed = true;
    this.#resync = false;
  }

  /** The association that held the block ended. */
  released(): void {
    this.#resync = false;
  }

  /** PurgeBuf: every entry goes. */
  purge(): void {
    this.#entries = [];
    this.#head = 0;
    this.#next = this.#counter + 1;
  }

  #fromOldest(): void {
    this.#next = this.#oldest?.id ?? this.#counter + 1;
    this.overflowed = true;
  }
}
