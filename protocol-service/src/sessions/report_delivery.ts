/**
 * The reports of one session on their way out: each delivered at once (its values kept and published),
 * and kept in the replica's journal: the place (EntryID) of a buffered block and the last values, which a
 * new holder of the connection starts from. A block resumes after the last EntryID saved, wherever that
 * was, and the values answer at once, stale until fresh ones arrive. An entry of a buffered block is
 * published with an event id made of the entry itself (connection, block, EntryID and TimeOfEntry, or its
 * values when it carries no TimeOfEntry), so the entries
 * a device sends again after a takeover (those delivered since the dead holder's last save) are the same
 * events to the event log, which keeps each once: every entry reaches `/api/live` once. A device's BufOvfl
 * on the first report of a block enabled with no place to resume from is not a loss: nothing was owed.
 */
import * as crypto from 'node:crypto';
import { isoTime, protocolEvents, type ReportEvent } from '@scada/contracts';
import { publishOwnEvent, type Bus, type Store } from '@scada/platform';
import { parseReference, toMmsReference } from '@scada/iec61850';
import { readDeliveries, type StoredValue } from '../store/deliveries.ts';
import type { StartedConnection } from '../store/sessions.ts';
import type { DeliveryJournal } from './delivery_journal.ts';
import type { LastValue, LastValues } from './last_values.ts';
import type { DeviceReport } from './live_device.ts';

/** A report block's reference as reports name it (`LD/LN$RP$name`), whichever notation was given. */
export function blockKey(rcb: string): string {
  try {
    return toMmsReference(parseReference(rcb));
  } catch {
    return rcb;
  }
}

export type ReportDeliveryDeps = {
  store: Store;
  bus: Bus;
  journal: DeliveryJournal;
  connection: StartedConnection;
  /** The session's last values: delivered ones go here. */
  values: LastValues;
  /** A block's device lost entries while it buffered. */
  onOverflow(rcb: string): void;
  /** Every value delivered, after it was published (the alarm evaluator). */
  onValues?(values: readonly LastValue[]): void;
};

export class ReportDelivery {
  readonly #deps: ReportDeliveryDeps;
  /** The last EntryID received from each buffered block: a block enabled again resumes after it. */
  readonly #positions = new Map<string, string>();
  /** Blocks enabled with no place to resume from, until their first report. */
  readonly #unplaced = new Set<string>();
  /** The device the places and values came from (a hash of its identity and model check; null: none yet). */
  #device: string | null = null;
  #restored = false;

  constructor(deps: ReportDeliveryDeps) {
    this.#deps = deps;
  }

  /** Takes up what was delivered before, here or on another replica: places, and values (stale). */
  async restore(): Promise<void> {
    if (this.#restored) return;
    const { space, id } = this.#deps.connection;
    const kept = await readDeliveries(this.#deps.store, space, id);
    for (const [rcb, entryId] of kept.positions) if (!this.#positions.has(rcb)) this.#positions.set(rcb, entryId);
    this.#deps.values.keep(kept.values.map((v) => ({ ...v, stale: true }) as unknown as LastValue));
    this.#device ??= kept.device;
    this.#restored = true;
  }

  /** The EntryID a block resumes after when enabled now (undefined: none, it starts afresh). */
  enabling(rcb: string): string | undefined {
    const key = blockKey(rcb);
    const entryId = this.#positions.get(key);
    if (entryId === undefined) this.#unplaced.add(key);
    else this.#unplaced.delete(key);
    return entryId;
  }

  /**
   * The device connected now, by its identity and model check: another one than the places and values
   * came from drops them, here and in the store. Answers whether it was another.
   */
  async connected(fingerprint: string): Promise<boolean> {
    const device = crypto.createHash('sha256').update(fingerprint).digest('hex').slice(0, 16);
    const before = this.#device;
    this.#device = device;
    if (before === null || before === device) return false;
    this.#positions.clear();
    this.#deps.values.clear();
    const { space, id } = this.#deps.connection;
    await this.#deps.journal.forget(space, id, null);
    return true;
  }

  /** A report arrived. */
  receive(report: DeviceReport): void {
    const receivedAt = isoTime(Date.now());
    const { space, id } = this.#deps.connection;
    const device = this.#device ?? '';
    if (report.bufferOverflow && !this.#unplaced.has(report.rcb)) this.#deps.onOverflow(report.rcb);
    this.#unplaced.delete(report.rcb);
    const values = this.#deps.values.record(report, receivedAt);
    this.#publish(report, values, receivedAt);
    this.#deps.onValues?.(values);
    if (report.entryId) this.#positions.set(report.rcb, report.entryId);
    const stored = values.map(({ stale: _s, ...v }) => v as StoredValue);
    this.#deps.journal.keep(space, id, device, stored, report.entryId ? [report.rcb, report.entryId] : undefined);
  }

  /** A block was disabled: its place and its values go, here and in the store. */
  async forgetBlock(rcb: string): Promise<void> {
    const key = blockKey(rcb);
    this.#positions.delete(key);
    this.#unplaced.delete(key);
    this.#deps.values.dropBlock(key);
    const { space, id } = this.#deps.connection;
    await this.#deps.journal.forget(space, id, key);
  }

  /** The session ends: what it delivered is saved now, if this replica still holds the connection. */
  async settle(): Promise<void> {
    const { space, id } = this.#deps.connection;
    await this.#deps.journal.flush();
    this.#deps.journal.discard(space, id);
  }

  #publish(report: DeviceReport, values: LastValue[], receivedAt: string): void {
    const { space, id } = this.#deps.connection;
    const event: ReportEvent & { space: string } = {
      space,
      connectionId: id,
      rcb: report.rcb,
      rptId: report.rptId,
      seqNum: report.seqNum ?? null,
      entryId: report.entryId ?? null,
      values: values.map(({ stale: _s, ...v }) => ({ connectionId: id, ...v })),
      at: receivedAt,
    };
    // The body is made here from decoded values alone (JSON's own kinds, no `undefined`): encoded once,
    // not read back and checked (the tests check every report a session sends against the schema).
    publishOwnEvent(this.#deps.bus, protocolEvents.report, event, {
      requestId: `report-${id}`,
      eventId: report.entryId ? entryEventId(id, report) : undefined,
      listed: 'values',
    });
  }
}

/**
 * The event id of a buffered block's entry: the same whoever publishes it (a device sends an entry again
 * as it was), and another for another entry that reuses an EntryID (a device that started again counts its
 * EntryIDs afresh): the block, the EntryID and the entry's TimeOfEntry, which together name one entry of
 * a block; an entry without a TimeOfEntry is named by its values instead.
 */
export function entryEventId(connectionId: string, report: DeviceReport): string {
  const entry =
    report.timeOfEntry === undefined
      ? sha256(JSON.stringify([report.rcb, report.entryId, report.values]))
      : sha256(`${report.rcb}\n${report.entryId}\n${report.timeOfEntry}`);
  return `report.${connectionId}.${entry.slice(0, 22)}`;
}

/** A text's SHA-256 in base64url: Node's one-shot `hash` where there is one (half the CPU of a `Hash` object), else a `Hash`. */
const sha256: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (text) => (crypto as unknown as { hash(alg: string, data: string, enc: string): string }).hash('sha256', text, 'base64url')
    : (text) => crypto.createHash('sha256').update(text).digest('base64url');
