/**
 * One started connection held by this replica: it keeps an association with the device for as long as it
 * runs, reconnecting with capped exponential backoff and jitter, re-enabling the connection's report
 * blocks after each connect, publishing every report on the bus and remembering the last value of every
 * reported attribute. What it knows (state, since, last error, reconnects, identity) goes to the store,
 * where every replica can read it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { publishEvent, type Bus, type Store } from '@scada/platform';
import { reportSubscriptions, saveSessionState, type SessionState, type StartedConnection } from '../store/sessions.ts';
import { backoffMs } from './backoff.ts';
import { publishSessionChange } from './session_events.ts';
import type { Connector, DeviceReport, LiveDevice, ReportOptions } from './live_device.ts';

export type SessionDeps = { store: Store; bus: Bus; log: Logger; owner: string; connector: Connector; backoff?: { baseMs?: number; capMs?: number } };

/** The last value of a reported attribute. */
export type LastValue = { value: unknown; at: string; rcb: string };

export class Session {
  readonly connection: StartedConnection;
  readonly #deps: SessionDeps;
  readonly #stop = new AbortController();
  #device: LiveDevice | null = null;
  #state: SessionState;
  #attempt = 0;
  #running: Promise<void> | null = null;
  readonly lastValues = new Map<string, LastValue>();

  constructor(connection: StartedConnection, deps: SessionDeps) {
    this.connection = connection;
    this.#deps = deps;
    this.#state = { state: 'connecting', since: new Date().toISOString(), lastError: null, reconnects: 0, identity: null, owner: deps.owner };
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
      let reason: string | null = null;
      try {
        const device = await this.#deps.connector({ host: this.connection.ip, port: this.connection.port }, signal);
        if (signal.aborted) {
          await device.close();
          break;
        }
        this.#device = device;
        this.#attempt = 0;
        device.onReport((report) => this.#report(report));
        await this.#set({ state: 'connected', identity: device.identity, lastError: null });
        log.info({ identity: device.identity }, 'device connected');
        await this.#enableReports(device, log);
        const ended = await Promise.race([device.ended, stopped]);
        this.#device = null;
        if (ended === 'stop') {
          await device.close().catch(() => undefined);
          break;
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
      await sleep(wait, undefined, { signal }).catch(() => undefined); // cut short by stop()
    }
    await this.#set({ state: 'stopped' }).catch(() => undefined);
  }

  /** Enables the connection's subscribed report blocks; a block that fails is reported, not fatal. */
  async #enableReports(device: LiveDevice, log: Logger): Promise<void> {
    const { space, id } = this.connection;
    for (const sub of await reportSubscriptions(this.#deps.store, space, id).catch(() => [])) {
      try {
        await device.enableReport(sub.rcb, sub.options as ReportOptions);
      } catch (err) {
        log.warn({ err, rcb: sub.rcb }, 'could not enable a report block');
        await this.#set({ lastError: `report block ${sub.rcb}: ${(err as Error).message}` });
      }
    }
  }

  #report(report: DeviceReport): void {
    const at = new Date().toISOString();
    for (const v of report.values) this.lastValues.set(v.ref, { value: v.value, at, rcb: report.rcb });
    const { space, id } = this.connection;
    publishEvent(this.#deps.bus, 'events.protocol.report', { space, connectionId: id, rcb: report.rcb, rptId: report.rptId, seqNum: report.seqNum, values: report.values }, `report-${id}`);
  }

  async #set(change: Partial<SessionState>): Promise<void> {
    const next = { ...this.#state, ...change };
    if (change.state && change.state !== this.#state.state) next.since = new Date().toISOString();
    publishSessionChange(this.#deps.bus, this.connection, this.#state, next);
    this.#state = next;
    const { space, id } = this.connection;
    await saveSessionState(this.#deps.store, space, id, next).catch((err: unknown) => this.#deps.log.debug({ err }, 'session state not saved'));
  }
}
