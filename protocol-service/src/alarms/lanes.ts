/**
 * Work on each connection's alarms, one evaluation after another, bounded. Values that arrive while an
 * evaluation runs wait for the next one, all of them together: a device that reports faster than the store
 * takes transactions gets fewer, larger ones, in the order the values came, rather than a chain of one a
 * report. What waits is bounded: past `maxWaitingValues` of a connection the oldest waiting values are
 * dropped (said at warn, with how many), and the tick's check of what time alone changes waits at most
 * once a connection.
 */
import type { Logger } from 'pino';
import type { ObservedValue } from '../sessions/session.ts';

/** Values of one connection that may wait for its alarms to be evaluated; past it the oldest go. */
export const maxWaitingAlarmValues = 10_000;

type Connection = { space: string; id: string };

type Lane = {
  connection: Connection;
  waiting: (readonly ObservedValue[])[];
  count: number;
  dropped: number;
  timed: boolean;
  running: Promise<void> | null;
};

export type AlarmLanesDeps = {
  log: Logger;
  /** Evaluates values of a connection, in the order given, in one go. */
  evaluate(connection: Connection, values: readonly ObservedValue[]): Promise<void>;
  /** Looks at what time alone changes on a connection. */
  timed(connection: Connection): Promise<void>;
  maxWaitingValues?: number;
};

export class AlarmLanes {
  readonly #deps: AlarmLanesDeps;
  readonly #max: number;
  readonly #lanes = new Map<string, Lane>();

  constructor(deps: AlarmLanesDeps) {
    this.#deps = deps;
    this.#max = deps.maxWaitingValues ?? maxWaitingAlarmValues;
  }

  /** Values to evaluate after those before them. */
  values(connection: Connection, values: readonly ObservedValue[]): void {
    const lane = this.#lane(connection);
    lane.waiting.push(values);
    lane.count += values.length;
    while (lane.count > this.#max && lane.waiting.length > 1) {
      const oldest = lane.waiting.shift() ?? [];
      lane.count -= oldest.length;
      lane.dropped += oldest.length;
    }
    this.#start(lane);
  }

  /** A check of what time alone changes, once, after what waits now. */
  timed(connection: Connection): void {
    const lane = this.#lane(connection);
    lane.timed = true;
    this.#start(lane);
  }

  /** Resolves once every lane has run out of work. */
  async settled(): Promise<void> {
    while (this.#lanes.size > 0) await Promise.all([...this.#lanes.values()].map((l) => l.running));
  }

  #lane(connection: Connection): Lane {
    const key = `${connection.space}/${connection.id}`;
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { connection, waiting: [], count: 0, dropped: 0, timed: false, running: null };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  #start(lane: Lane): void {
    lane.running ??= this.#drain(lane).finally(() => {
      lane.running = null;
      const key = `${lane.connection.space}/${lane.connection.id}`;
      if (lane.waiting.length > 0 || lane.timed) this.#start(lane);
      else this.#lanes.delete(key);
    });
  }

  async #drain(lane: Lane): Promise<void> {
    const key = `${lane.connection.space}/${lane.connection.id}`;
    while (lane.waiting.length > 0 || lane.timed) {
      if (lane.dropped > 0) {
        this.#deps.log.warn(
          { connection: key, dropped: lane.dropped, maxWaiting: this.#max },
          'alarm values dropped: the store took them slower than the device reported',
        );
        lane.dropped = 0;
      }
      if (lane.waiting.length > 0) {
        const values = lane.waiting.splice(0).flat();
        lane.count = 0;
        await this.#retried(key, () => this.#deps.evaluate(lane.connection, values));
      } else {
        lane.timed = false;
        await this.#retried(key, () => this.#deps.timed(lane.connection));
      }
    }
  }

  /** A failed evaluation (the store away for a moment, a deadlock broken) is tried once more before it is given up. */
  async #retried(key: string, work: () => Promise<void>): Promise<void> {
    try {
      await work().catch(async (err: unknown) => {
        this.#deps.log.debug({ err, connection: key }, 'alarms not evaluated; trying again');
        await new Promise((r) => setTimeout(r, 200));
        return work();
      });
    } catch (err) {
      this.#deps.log.warn({ err, connection: key }, 'alarms not evaluated');
    }
  }
}
