/**
 * The alarm evaluator of one protocol replica. It evaluates the alarms of the connections whose sessions
 * this replica holds (the same ownership as sessions: one evaluator per connection across replicas), on
 * every value a report delivers, and once a tick for what time alone changes: on-delays that ran out,
 * stale values, shelves that expired. States live in the store (`store.ts`), each transition written once
 * under its row's lock, and only while this replica still holds the connection's lease; a replica that
 * takes a connection over goes on from the stored states, so an active alarm is neither lost nor raised
 * twice. Every transition is published after it committed (`events.protocol.alarm`, `event: alarm` on
 * `/api/live`).
 *
 * The definitions come from the config service (`alarmDefinitionsOfSpace`), per space, taken up again
 * when a definition of the space changes (`events.config.alarm.*`, `events.config.alarm_group.*`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { alarmDefinitionsOfSpace, alarmEvent, configEvents, type AlarmEvent, type EvaluatedAlarm } from '@scada/contracts';
import { call, publishEvent, subscribeEvent, type Bus, type BusSubscription, type Store } from '@scada/platform';
import type { DataReference } from '@scada/iec61850';
import type { LastValue } from '../sessions/last_values.ts';
import type { ObservedValue } from '../sessions/session.ts';
import { conditionOf, staleNow } from './condition.ts';
import { AlarmLanes } from './lanes.ts';
import { inService, onAction, onCondition, type AlarmAction } from './lifecycle.ts';
import {
  alarmsOfConnection,
  changeAlarm,
  changeAlarms,
  expiredShelves,
  syncDefinitions,
  type StateChange,
  type StateRow,
  type Written,
} from './store.ts';
import { referenceOf, watchedPart } from './values.ts';

export type AlarmEvaluatorDeps = {
  store: Store;
  bus: Bus;
  log: Logger;
  /** This replica (the owner name on its leases). */
  owner: string;
  /** The clock every transition is stamped with and expiries are measured by. */
  now?: () => Date;
  /** How often on-delays, stale values and shelves are looked at (default 1 s). */
  tickMs?: number;
  /** The connections whose sessions this replica holds now. */
  held?: () => { space: string; id: string }[];
  /** The last values of a connection held here (a changed definition is evaluated against them at once). */
  lastValues?: (space: string, id: string) => readonly LastValue[];
};

type Watched = { def: EvaluatedAlarm; ref: DataReference | null };

/**
 * The alarms of one connection, by what a value must name to concern them: a reported value concerns an
 * alarm only when it names the alarm's logical node and a path the alarm's path starts with
 * (`watchedPart`), so a value is held against the alarms of its logical node and first path element
 * (or every alarm of the node, for a value of the whole node), not every alarm of the connection.
 */
type ConnectionAlarms = {
  list: Watched[];
  /** By `ld/ln`, then by the first element of the path ('' for an alarm on a whole logical node). */
  byNode: Map<string, { all: Watched[]; byFirst: Map<string, Watched[]> }>;
};

type Defs = { byConnection: Map<string, ConnectionAlarms>; all: EvaluatedAlarm[] };

const none: readonly Watched[] = [];

/** The alarms of a connection a value of `reported` may concern, in the order of their definitions. */
function candidatesOf(alarms: ConnectionAlarms, reported: DataReference): readonly Watched[] {
  const node = alarms.byNode.get(`${reported.ld}/${reported.ln}`);
  if (!node) return none;
  if (reported.path.length === 0) return node.all;
  return node.byFirst.get(reported.path[0]!) ?? none;
}

function indexAlarms(list: Watched[]): ConnectionAlarms {
  const byNode: ConnectionAlarms['byNode'] = new Map();
  for (const w of list) {
    if (!w.ref) continue;
    const key = `${w.ref.ld}/${w.ref.ln}`;
    let node = byNode.get(key);
    if (!node) byNode.set(key, (node = { all: [], byFirst: new Map() }));
    node.all.push(w);
    const first = w.ref.path[0] ?? '';
    const same = node.byFirst.get(first);
    if (same) same.push(w);
    else node.byFirst.set(first, [w]);
  }
  return { list, byNode };
}

export class AlarmEvaluator {
  readonly #deps: AlarmEvaluatorDeps;
  readonly #now: () => Date;
  readonly #spaces = new Map<string, Promise<Defs>>();
  /** Work on each connection's alarms, one after another (values in the order they arrived), bounded. */
  readonly #lanes: AlarmLanes;
  readonly #subscriptions: BusSubscription[] = [];
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: AlarmEvaluatorDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
    this.#lanes = new AlarmLanes({
      log: deps.log,
      evaluate: (connection, values) => this.#evaluate(connection, values),
      timed: (connection) => this.#timed(connection),
    });
    const forget = ({ space }: { space: string }) => {
      if (!this.#spaces.has(space)) return;
      this.#spaces.delete(space);
      void this.definitions(space).catch((err: unknown) => this.#deps.log.warn({ err, space }, 'alarm definitions not taken up'));
      this.#reevaluate(space);
    };
    this.#subscriptions.push(
      subscribeEvent(deps.bus, configEvents.alarm, forget, deps.log),
      subscribeEvent(deps.bus, configEvents.alarm_group, forget, deps.log),
    );
  }

  /** The evaluator's clock. */
  now(): Date {
    return this.#now();
  }

  /** Starts the tick. */
  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.#deps.tickMs ?? 1000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await Promise.all(this.#subscriptions.splice(0).map((s) => s.unsubscribe()));
    await this.#ticking;
    await this.#lanes.settled();
  }

  /** The alarm definitions of a space, taken up (and their rows in the store made) once until one changes. */
  definitions(space: string): Promise<Defs> {
    let defs = this.#spaces.get(space);
    if (!defs) {
      defs = this.#load(space);
      this.#spaces.set(space, defs);
      // A space whose definitions could not be had (no config replica answering) is asked again after a while, not on every value.
      defs.catch(() => {
        const retry = setTimeout(() => this.#spaces.get(space) === defs && this.#spaces.delete(space), 5000);
        retry.unref();
      });
    }
    return defs;
  }

  async #load(space: string): Promise<Defs> {
    const all = await call(
      this.#deps.bus,
      alarmDefinitionsOfSpace,
      { params: {}, query: {} },
      {
        requestId: `alarms-${randomUUID()}`,
        space,
        actor: { id: 'service:protocol', name: 'protocol', roles: ['viewer'], spaces: [space] },
      },
    );
    await syncDefinitions(this.#deps.store, space, all, this.#now());
    const lists = new Map<string, Watched[]>();
    for (const def of all) {
      const list = lists.get(def.connectionId) ?? [];
      list.push({ def, ref: referenceOf(def.reference) });
      lists.set(def.connectionId, list);
    }
    return { byConnection: new Map([...lists].map(([id, list]) => [id, indexAlarms(list)])), all };
  }

  /** The fresh last values of the space's connections held here, evaluated against the definitions as they are now. */
  #reevaluate(space: string): void {
    for (const connection of this.#deps.held?.() ?? []) {
      if (connection.space !== space) continue;
      const fresh = (this.#deps.lastValues?.(space, connection.id) ?? []).filter((v) => !v.stale);
      if (fresh.length > 0) this.values(connection, fresh);
    }
  }

  /** Values a report delivered on a connection this replica holds. */
  values(connection: { space: string; id: string }, values: readonly ObservedValue[]): void {
    this.#lanes.values(connection, values);
  }

  /** Evaluates values of a connection against its alarms, in the order given: one transaction for all. */
  async #evaluate(connection: { space: string; id: string }, values: readonly ObservedValue[]): Promise<void> {
    const defs = await this.definitions(connection.space);
    const watching = defs.byConnection.get(connection.id);
    if (!watching) return;
    const steps: { alarmId: string; decide: (row: StateRow) => StateChange | null }[] = [];
    const now = this.#now();
    for (const v of values) {
      const reported = referenceOf(v.reference);
      if (!reported) continue;
      for (const { def, ref } of candidatesOf(watching, reported)) {
        if (!ref) continue;
        const part = watchedPart(ref, reported, v.value);
        if (part === undefined) continue;
        steps.push({ alarmId: def.id, decide: (row) => this.#decide(def, row, { value: part, quality: v.quality }, now) });
      }
    }
    // One transaction for every alarm the values move: a flood costs a transaction per evaluation, not per alarm or report.
    for (const written of await changeAlarms(this.#deps.store, connection.space, steps, now, this.#deps.owner)) {
      this.#announce(connection.space, written);
    }
  }

  /** What one value of an alarm's attribute changes of its row. */
  #decide(def: EvaluatedAlarm, row: StateRow, sample: { value: unknown; quality: ObservedValue['quality'] }, now: Date): StateChange {
    const base: StateChange = { value: sample.value as never, lastValueAt: now };
    if (def.type === 'stale') {
      // A value came: a stale alarm's condition is gone.
      return row.active ? { ...base, ...this.#conditionChange(row, false, now) } : base;
    }
    const holds = conditionOf(def, sample, row.active);
    if (holds === null) return base;
    return { ...base, ...this.#conditionChange(row, holds, now, def.onDelayMs ?? 0) };
  }

  /**
   * What a condition that holds (or not) now changes: with an on-delay, a condition that comes is first
   * pending, and raises only once it has held for the whole delay (the tick sees to that).
   */
  #conditionChange(row: StateRow, holds: boolean, now: Date, onDelayMs = 0): StateChange {
    if (!holds) {
      const to = inService(row.state) ? onCondition(row.state, false) : null;
      return { active: false, pendingSince: null, ...(to ? { to } : {}) };
    }
    if (row.active) return {};
    if (onDelayMs > 0 && inService(row.state)) {
      const pendingSince = row.pendingSince ?? now;
      if (now.getTime() - pendingSince.getTime() < onDelayMs) return { pendingSince };
    }
    const to = inService(row.state) ? onCondition(row.state, true) : null;
    return { active: true, pendingSince: null, raisedAt: now, ...(to ? { to } : {}) };
  }

  /** What time alone changes: on-delays run out and stale values on held connections, shelves that expired anywhere. */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => (this.#ticking = null));
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    try {
      const now = this.#now();
      for (const { space, alarmId } of await expiredShelves(this.#deps.store, now)) {
        await this.act(space, alarmId, 'unshelve', null, null, true);
      }
      for (const connection of this.#deps.held?.() ?? []) {
        this.#lanes.timed(connection);
      }
    } catch (err) {
      this.#deps.log.debug({ err }, 'alarm tick failed');
    }
  }

  async #timed(connection: { space: string; id: string }): Promise<void> {
    const defs = await this.definitions(connection.space);
    const watching = defs.byConnection.get(connection.id);
    // Only stale alarms and on-delays depend on time alone: a connection without them costs the tick nothing.
    if (!watching?.list.some(({ def }) => def.type === 'stale' || (def.onDelayMs ?? 0) > 0)) return;
    const rows = new Map((await alarmsOfConnection(this.#deps.store, connection.space, connection.id)).map((r) => [r.alarmId, r]));
    for (const { def } of watching.list) {
      const row = rows.get(def.id);
      if (!row) continue;
      const now = this.#now();
      const due =
        (def.type === 'stale' && !row.active && staleNow(def, row.lastValueAt, now)) ||
        (row.pendingSince !== null && !row.active && now.getTime() - row.pendingSince.getTime() >= (def.onDelayMs ?? 0));
      if (!due) continue;
      const written = await changeAlarm(
        this.#deps.store,
        connection.space,
        def.id,
        now,
        (current) => {
          if (current.active) return null;
          if (def.type === 'stale') return staleNow(def, current.lastValueAt, now) ? this.#conditionChange(current, true, now) : null;
          if (current.pendingSince === null || now.getTime() - current.pendingSince.getTime() < (def.onDelayMs ?? 0)) return null;
          return this.#conditionChange({ ...current, pendingSince: null }, true, now);
        },
        this.#deps.owner,
      );
      this.#announce(connection.space, written);
    }
  }

  /**
   * An operator's action (or a shelf's expiry, `expiry`): null when the space holds no such alarm, else
   * the transition written, or `{row, journal: null}` with the state that does not allow it.
   */
  async act(
    space: string,
    alarmId: string,
    action: AlarmAction,
    by: string | null,
    comment: string | null,
    expiry = false,
    shelf?: { until: Date; reason: string },
  ): Promise<Written | null> {
    const now = this.#now();
    const written = await changeAlarm(this.#deps.store, space, alarmId, now, (row) => {
      if (expiry && !(row.state === 'shelved' && row.shelvedUntil !== null && row.shelvedUntil <= now)) return null;
      const to = onAction(row.state, action, row.active);
      if (!to) return null;
      return {
        to,
        by,
        comment,
        // An alarm whose condition comes back with it is raised now; it had no on-delay to wait for while shelved.
        ...(to === 'unacknowledged' && (action === 'unshelve' || action === 'in_service') ? { raisedAt: now, pendingSince: null } : {}),
        ...(action === 'shelve' && shelf ? { shelvedUntil: shelf.until, shelveReason: shelf.reason } : {}),
        ...(action === 'unshelve' || action === 'out_of_service' ? { shelvedUntil: null, shelveReason: null } : {}),
      };
    });
    this.#announce(space, written);
    return written;
  }

  #announce(space: string, written: Written | null): void {
    if (!written?.journal) return;
    const { row, journal } = written;
    const event: AlarmEvent = {
      space,
      connectionId: row.connectionId,
      groupId: row.groupId,
      projectId: row.projectId,
      priority: row.priority,
      message: row.message,
      ...journal,
      transitionAt: journal.at,
    };
    publishEvent(this.#deps.bus, alarmEvent, event, { requestId: `alarm-${journal.seq}`, eventId: `alarm.${space}.${journal.seq}` });
  }
}
