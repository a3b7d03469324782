/**
 * The replica's journal of what its sessions delivered: the place (EntryID) of every buffered block and
 * the last values, written to the store in batches, for the next holder of a connection to start from.
 * Reports are delivered at once and never wait for it. Saves are coalesced across every session of the
 * replica: at most one statement every `intervalMs` (one in flight at a time), however many blocks report
 * how often. A holder killed between two saves leaves the store up to one interval (and the save on its
 * way) behind what it delivered: the next holder resumes there, and the entries it is sent again carry
 * the same event ids, which the event log keeps once (`report_delivery.ts`).
 */
import type { Logger } from 'pino';
import type { Store } from '@scada/platform';
import { forgetDeliveries, saveDeliveries, type DeliveryChanges, type StoredValue } from '../store/deliveries.ts';

/** The shortest gap between two saves of the journal (and so the longest a delivered entry goes unsaved, less the save's own time). */
export const DELIVERY_SAVE_INTERVAL_MS = 250;

type Pending = { space: string; id: string; device: string; positions: Map<string, string>; values: Map<string, StoredValue> };

const keyOf = (space: string, id: string) => `${space}/${id}`;

export type DeliveryJournalOptions = { store: Store; owner: string; log: Logger; intervalMs?: number };

export class DeliveryJournal {
  readonly #store: Store;
  readonly #owner: string;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #pending = new Map<string, Pending>();
  #inFlight: Promise<void> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #lastSave = 0;
  /** Forgotten while a save was on its way: not to be pending again should that save fail. */
  #forgottenInFlight: { key: string; rcb: string | null }[] = [];

  constructor(options: DeliveryJournalOptions) {
    this.#store = options.store;
    this.#owner = options.owner;
    this.#log = options.log;
    this.#intervalMs = options.intervalMs ?? DELIVERY_SAVE_INTERVAL_MS;
  }

  /** Keeps what a report delivered, from `device`: values, and a buffered block's place (`[rcb, entryId]`). */
  keep(space: string, id: string, device: string, values: StoredValue[], position?: [string, string]): void {
    const key = keyOf(space, id);
    let pending = this.#pending.get(key);
    // Another device's changes never share a save with those of the one before.
    if (!pending || pending.device !== device) {
      pending = { space, id, device, positions: new Map(), values: new Map() };
      this.#pending.set(key, pending);
    }
    if (position) pending.positions.set(position[0], position[1]);
    for (const v of values) pending.values.set(v.reference, v);
    this.#schedule();
  }

  /** Saves what is pending now, without waiting for the interval (a session stops). */
  async flush(): Promise<void> {
    await this.#inFlight;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    // Another session's flush may have started the save that holds this one's changes: wait for it too.
    if (!this.#inFlight) await this.#save();
    await this.#inFlight;
  }

  /** Drops what is pending for a connection (its session ended, and what it did not save now it never will). */
  discard(space: string, id: string): void {
    this.#pending.delete(keyOf(space, id));
  }

  /**
   * Forgets a block (`rcb`), or everything of a connection (null: another device answers there): what is
   * pending of it goes, then what is stored, once any save on its way is done.
   */
  async forget(space: string, id: string, rcb: string | null): Promise<void> {
    const key = keyOf(space, id);
    const pending = this.#pending.get(key);
    if (pending && dropFrom(pending, rcb)) this.#pending.delete(key);
    if (this.#inFlight) {
      this.#forgottenInFlight.push({ key, rcb });
      await this.#inFlight;
    }
    await forgetDeliveries(this.#store, space, id, rcb);
  }

  #schedule(): void {
    if (this.#timer || this.#inFlight) return;
    const wait = Math.max(0, this.#lastSave + this.#intervalMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#save();
    }, wait);
    this.#timer.unref();
  }

  /** One save of everything pending; what fails is pending again (newer changes win) and tried after the interval. */
  #save(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    const batch = this.#pending;
    this.#pending = new Map();
    this.#lastSave = Date.now();
    const changes: DeliveryChanges[] = [...batch.values()].map((p) => ({
      space: p.space,
      id: p.id,
      device: p.device,
      positions: Object.fromEntries(p.positions),
      values: Object.fromEntries(p.values),
    }));
    this.#inFlight = saveDeliveries(this.#store, this.#owner, changes)
      .then(() => undefined)
      .catch((err: unknown) => {
        this.#log.debug({ err }, 'delivered reports not saved; trying again');
        for (const { key, rcb } of this.#forgottenInFlight) if (batch.has(key) && dropFrom(batch.get(key)!, rcb)) batch.delete(key);
        for (const [key, p] of batch) this.#pending.set(key, merged(p, this.#pending.get(key)));
      })
      .finally(() => {
        this.#forgottenInFlight = [];
        this.#inFlight = null;
        if (this.#pending.size > 0) this.#schedule();
      });
    return this.#inFlight;
  }
}

/** Drops a block's changes (every change when `rcb` is null) from `p`; true when nothing is left. */
function dropFrom(p: Pending, rcb: string | null): boolean {
  if (rcb === null) return true;
  p.positions.delete(rcb);
  for (const [reference, v] of p.values) if (v.rcb === rcb) p.values.delete(reference);
  return p.positions.size === 0 && p.values.size === 0;
}

/** A failed batch's changes under those made since, which win. */
function merged(older: Pending, newer: Pending | undefined): Pending {
  if (!newer) return older;
  if (newer.device !== older.device) return newer;
  return {
    ...newer,
    positions: new Map([...older.positions, ...newer.positions]),
    values: new Map([...older.values, ...newer.values]),
  };
}
