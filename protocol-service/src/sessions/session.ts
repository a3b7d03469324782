/**
 * One started connection held by this replica: it keeps an association with the device for as long as it
 * runs, reconnecting with capped exponential backoff and jitter, checking the device's model against the
 * connection's SCL file, re-enabling the connection's report blocks after each connect (a buffered block
 * after the last EntryID delivered, by this replica or the one that held the connection before), publishing
 * every report on the bus and remembering the last value of every reported attribute (stale once the
 * association ends, dropped when the device's identity or model changes): see `report_delivery.ts`. What
 * it knows (state, since, last error, reconnects, identity, warnings) goes to the store, where every
 * replica can read it, and out as a session event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SessionWarning } from '@scada/contracts';
import type { Bus, Store } from '@scada/platform';
import { reportSubscriptions, saveSessionState, type SessionState, type StartedConnection } from '../store/sessions.ts';
import { backoffMs } from './backoff.ts';
import { DeliveryJournal } from './delivery_journal.ts';
import { LastValues, type LastValue } from './last_values.ts';

/** A value of an attribute as the device gave it, reported or read. */
export type ObservedValue = Pick<LastValue, 'reference' | 'value' | 'quality'>;
import { blockKey, ReportDelivery } from './report_delivery.ts';
import { publishSessionChange } from './session_events.ts';
import { SettingGroupEdits } from './setting_group_edits.ts';
import { DeviceRequests, defaultDeviceRequestsPerConnection } from './device_requests.ts';
import type { Connector, DeviceTarget, LiveDevice, ReportOptions } from './live_device.ts';
import { modelMismatch, type ExpectedModel, type ModelNames } from './model_check.ts';

export { blockKey } from './report_delivery.ts';

/**
 * The longest a session stops reading its device at once while the process's history is behind
 * (`Bus.ingestHold`); between two holds it reads at least a turn. The MMS client shortens it further and
 * ends it when a request is sent, so answers are not held (`MmsClient.holdReads`).
 */
export const maxReadHoldMs = 1000;

export type SessionDeps = {
  store: Store;
  bus: Bus;
  log: Logger;
  owner: string;
  connector: Connector;
  backoff?: { baseMs?: number; capMs?: number };
  /** The logical devices and nodes the connection's SCL file gives its IED (null: no file, nothing to check). */
  expectedModel?: (connection: StartedConnection, deviceDomains: () => Promise<string[]>) => Promise<ExpectedModel | null>;
  /** The replica's journal of delivered reports (one of the session's own when not given). */
  journal?: DeliveryJournal;
  /**
   * Where and how to reach the device, asked before every attempt: its address with the connection's
   * password and TLS settings, opened (address and port alone when not given).
   */
  target?: (connection: StartedConnection) => Promise<DeviceTarget>;
  /** Every value a report delivered or a read answered (the alarm evaluator). */
  onValues?: (connection: StartedConnection, values: readonly ObservedValue[]) => void;
  /** Device requests of the API the connection takes at once; one more is 503 `overloaded` (DEVICE_REQUESTS_PER_CONNECTION). */
  maxDeviceRequests?: number;
};

export class Session {
  #connection: StartedConnection;
  readonly #deps: SessionDeps;
  readonly #stop = new AbortController();
  /** Cuts a wait between attempts short, for a new link revision. */
  #wake = new AbortController();
  /** The association is being ended to associate again with new settings, not because it failed. */
  #relinking = false;
  #device: LiveDevice | null = null;
  #state: SessionState;
  #attempt = 0;
  #running: Promise<void> | null = null;
  /** The last value of every reported attribute. */
  readonly values = new LastValues();
  /** Who changes the device's setting groups, one change of a block at a time. */
  readonly settingGroups = new SettingGroupEdits();
  /** The API's requests to the device under way, bounded in number. */
  readonly requests: DeviceRequests;
  /** Reports on their way out, and where each buffered block resumes. */
  readonly #delivery: ReportDelivery;
  /** The last save of the state on its way: each save waits for the one before. */
  #saving: Promise<void> = Promise.resolve();

  constructor(connection: StartedConnection, deps: SessionDeps) {
    this.#connection = connection;
    this.#deps = deps;
    this.requests = new DeviceRequests(deps.maxDeviceRequests ?? defaultDeviceRequestsPerConnection);
    this.#state = {
      state: 'connecting',
      since: new Date().toISOString(),
      lastError: null,
      reconnects: 0,
      identity: null,
      owner: deps.owner,
      warnings: [],
    };
    this.#delivery = new ReportDelivery({
      store: deps.store,
      bus: deps.bus,
      journal: deps.journal ?? new DeliveryJournal({ store: deps.store, owner: deps.owner, log: deps.log }),
      connection,
      values: this.values,
      onOverflow: (rcb) => void this.#warnOverflow(rcb),
      ...(deps.onValues ? { onValues: (values: readonly LastValue[]) => deps.onValues?.(this.#connection, values) } : {}),
    });
  }

  /**
   * A block was disabled: its values go, and it starts afresh when enabled again. Resolves once the
   * session's state without the block's warning is stored, so that whoever answers the disabling can
   * be read back at once.
   */
  async forgetBlock(block: string): Promise<void> {
    const rcb = blockKey(block);
    await this.#delivery.forgetBlock(rcb);
    return this.#set({ warnings: this.#state.warnings.filter((w) => !(w.code === 'buffer_overflow' && w.detail.startsWith(`${rcb}:`))) });
  }

  /**
   * The options to enable a block with now: those given, and for a buffered block the EntryID of the last
   * entry delivered, to resume after.
   */
  enabling(rcb: string, options: ReportOptions): ReportOptions {
    const entryId = this.#delivery.enabling(rcb);
    return entryId === undefined ? options : { ...options, entryId };
  }

  /** Values a read of the device answered: evaluated as reported ones are (alarms). */
  observe(values: readonly ObservedValue[]): void {
    if (values.length > 0) this.#deps.onValues?.(this.#connection, values);
  }

  get connection(): StartedConnection {
    return this.#connection;
  }

  /**
   * The connection as the store has it now. A new link revision (address, port, password or TLS changed)
   * ends the association and associates again at once with the new settings; a wait between attempts is
   * cut short.
   */
  retarget(connection: StartedConnection): void {
    const relink = connection.linkRevision !== this.#connection.linkRevision;
    this.#connection = connection;
    if (!relink) return;
    this.#relinking = true;
    this.#wake.abort();
    void this.#device?.close().catch(() => undefined);
  }

  /** The association while connected. */
  get device(): LiveDevice | null {
    return this.#device;
  }

  get state(): SessionState {
    return this.#state;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Ends the session: the association is concluded and the loop ends. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #run(): Promise<void> {
    const log = this.#deps.log.child({ connection: this.connection.id });
    const signal = this.#stop.signal;
    // One listener for the whole session, however often it reconnects.
    const stopped = new Promise<'stop'>((resolve) => signal.addEventListener('abort', () => resolve('stop'), { once: true }));
    while (!signal.aborted) {
      await this.#set({ state: 'connecting' });
      this.#relinking = false;
      this.#wake = new AbortController();
      let reason: string | null = null;
      try {
        await this.#delivery.restore();
        const target = this.#deps.target
          ? await this.#deps.target(this.connection)
          : { host: this.connection.ip, port: this.connection.port };
        const device = await this.#deps.connector(target, signal);
        if (signal.aborted || this.#relinking) {
          await device.close();
          if (signal.aborted) break;
          continue;
        }
        this.#attempt = 0;
        const warnings = await this.#checkModel(device, log);
        this.#device = device;
        // new settings that came while the association was being made end it at once
        if (this.#relinking) void device.close().catch(() => undefined);
        device.onReport((report) => {
          this.#delivery.receive(report);
          // A durable consumer in this process (the history on the embedded platform) far behind: the
          // device keeps its next reports until it catches up, rather than the consumer dropping them.
          const hold = this.#deps.bus.ingestHold();
          if (hold !== undefined) device.holdReads?.(hold, maxReadHoldMs);
        });
        await this.#set({ state: 'connected', identity: device.identity, lastError: null, warnings });
        log.info({ identity: device.identity }, 'device connected');
        await this.#enableReports(device, log);
        const ended = await Promise.race([device.ended, stopped]);
        this.#device = null;
        this.values.markStale();
        if (ended === 'stop') {
          await device.close().catch(() => undefined);
          break;
        }
        if (this.#relinking) {
          log.info('the connection changed; associating again');
          continue;
        }
        reason = ended?.message ?? 'the association ended';
      } catch (err) {
        this.#device = null;
        if (signal.aborted) break;
        reason = (err as Error).message;
      }
      const wait = backoffMs(this.#attempt++, this.#deps.backoff);
      log.warn({ reason, retryInMs: wait }, 'device not connected; trying again');
      await this.#set({ state: 'waiting', lastError: reason, reconnects: this.#state.reconnects + 1 });
      // cut short by stop(), or by new settings to try
      await sleep(wait, undefined, { signal: AbortSignal.any([signal, this.#wake.signal]) }).catch(() => undefined);
    }
    await this.#delivery.settle();
    await this.#set({ state: 'stopped' }).catch(() => undefined);
  }

  /** Enables the connection's subscribed report blocks; a block that fails is reported, not fatal. */
  async #enableReports(device: LiveDevice, log: Logger): Promise<void> {
    const { space, id } = this.connection;
    for (const sub of await reportSubscriptions(this.#deps.store, space, id).catch(() => [])) {
      try {
        await device.enableReport(sub.rcb, this.enabling(sub.rcb, sub.options as ReportOptions));
      } catch (err) {
        log.warn({ err, rcb: sub.rcb }, 'could not enable a report block');
        await this.#set({ lastError: `report block ${sub.rcb}: ${(err as Error).message}` });
      }
    }
  }

  /**
   * The device's logical devices and nodes against the SCL file's IED: `model_mismatch` when they differ.
   * Another device (identity) or another model drops every value kept.
   */
  async #checkModel(device: LiveDevice, log: Logger): Promise<SessionWarning[]> {
    let warnings: SessionWarning[] = [];
    try {
      let names: Promise<ModelNames> | undefined;
      const namesOf = () => (names ??= device.modelNames());
      const expected = (await this.#deps.expectedModel?.(this.connection, async () => (await namesOf()).map((ld) => ld.name))) ?? null;
      const mismatch = expected ? modelMismatch(expected, await namesOf()) : null;
      if (mismatch) warnings = [{ code: 'model_mismatch', detail: mismatch }];
    } catch (err) {
      log.warn({ reason: (err as Error).message }, 'the device model could not be checked');
    }
    await this.#delivery
      .connected(JSON.stringify([device.identity, warnings]))
      .catch((err: unknown) => log.warn({ err }, 'what the device before delivered could not be forgotten'));
    if (warnings.length > 0) log.warn({ detail: warnings[0].detail }, 'the device does not match the SCL file');
    return warnings;
  }

  #warnOverflow(rcb: string): Promise<void> {
    const detail = `${rcb}: the device's buffer overflowed; reports were lost while it buffered`;
    return this.#set({ warnings: [...this.#state.warnings.filter((w) => w.detail !== detail), { code: 'buffer_overflow', detail }] });
  }

  async #set(change: Partial<SessionState>): Promise<void> {
    const next = { ...this.#state, ...change };
    if (change.state && change.state !== this.#state.state) next.since = new Date().toISOString();
    publishSessionChange(this.#deps.bus, this.connection, this.#state, next);
    this.#state = next;
    const { space, id } = this.connection;
    // One save after another: two on their way at once (a report's warning, then the disabling that
    // clears it) could land in the other order and leave the older state stored.
    const save = this.#saving.then(() =>
      saveSessionState(this.#deps.store, space, id, next).catch((err: unknown) => this.#deps.log.debug({ err }, 'session state not saved')),
    );
    this.#saving = save;
    await save;
  }
}
