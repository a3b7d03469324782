/**
 * Holds this replica's share of the started connections. Every tick it renews its leases (a connection
 * whose lease was lost is dropped at once), takes the lease of every started connection nobody holds and
 * opens a session for it, ends the sessions of connections that were stopped, and has a session whose
 * connection's address, port or security settings changed associate again. A lease not renewed for
 * a whole lease time is taken over by another replica; before that can happen this replica has dropped
 * the association itself (it stops holding anything once its last successful renewal is older than the
 * safety margin), so two replicas never talk to one device at once.
 *
 * Renewing runs on a timer of its own and never waits behind the rest of a tick: ending a session can
 * take a device's whole request timeout, and a renewal held behind it lapsed every lease of the replica
 * on a busy machine. Its statement takes the store's first lane (`Store.first()`: on the embedded store
 * it waits for no other caller's work but the one running), and a renewal that comes after a lease's time
 * ran out still keeps it while no other replica took it over (`renewLeases`). A renewal that comes later
 * than two ticks after the one before says so at warn.
 */
import type { Logger } from 'pino';
import { centralSite } from '@scada/contracts';
import type { Bus, Store } from '@scada/platform';
import { acquireLease, releaseLease, renewLeases, startedConnections, type StartedConnection } from '../store/sessions.ts';
import { DeliveryJournal } from './delivery_journal.ts';
import type { Connector, DeviceTarget } from './live_device.ts';
import { expectedModelOf } from './model_check.ts';
import { Session, type ObservedValue } from './session.ts';

export type SupervisorOptions = {
  store: Store;
  bus: Bus;
  log: Logger;
  /** This replica's instance id: the owner name on its leases. */
  owner: string;
  connector: Connector;
  /** The site whose connections this replica holds (`central` unless the service runs at a site). */
  site?: string;
  /** How long a lease lasts unrenewed (default 10 s); a dead replica's connections move after this. */
  leaseMs?: number;
  /** How often leases are renewed and started connections looked for (default 2 s). */
  tickMs?: number;
  backoff?: { baseMs?: number; capMs?: number };
  /** Where and how to reach a connection's device (its password and TLS settings opened); address and port alone when not given. */
  target?: (connection: StartedConnection) => Promise<DeviceTarget>;
  /** Every value a report delivered or a read answered on a connection held here (the alarm evaluator). */
  onValues?: (connection: StartedConnection, values: readonly ObservedValue[]) => void;
  /** Device requests of the API one connection takes at once (DEVICE_REQUESTS_PER_CONNECTION). */
  maxDeviceRequests?: number;
};

export type Supervisor = {
  /** The session this replica holds for a connection. */
  local(space: string, id: string): Session | undefined;
  /** The connections this replica holds now. */
  held(): StartedConnection[];
  /** Runs a tick now (after a start or a stop), resolving when it is done. */
  kick(): Promise<void>;
  /**
   * Ends the session of a connection held here, resolving once its association is over and its lease
   * given up (a connection about to be deleted; its `started` flag must already be cleared). A tick
   * already running finishes first, so that no tick that read the connection as started takes it again.
   */
  end(space: string, id: string): Promise<void>;
  /** Ends every session and gives every lease up, so that another replica takes over at once. */
  stop(): Promise<void>;
};

const key = (space: string, id: string) => `${space}/${id}`;

export function startSupervisor(options: SupervisorOptions): Supervisor {
  const leaseMs = options.leaseMs ?? 10_000;
  const tickMs = options.tickMs ?? 2000;
  const sessions = new Map<string, Session>();
  const log = options.log.child({ part: 'supervisor' });
  // One journal for every session held here: what they deliver is saved in one statement at a time.
  const journal = new DeliveryJournal({ store: options.store, owner: options.owner, log });
  let lastRenewal = Date.now();
  let stopped = false;
  let ticking: Promise<void> | null = null;
  let renewing: Promise<void> | null = null;
  /** Sessions being ended (dropped or stopped), so that stopping the supervisor waits for them. */
  const ending = new Set<Promise<void>>();

  const drop = async (k: string, release: boolean) => {
    const session = sessions.get(k);
    if (!session) return;
    sessions.delete(k);
    await session.stop();
    if (release) await releaseLease(options.store, session.connection.space, session.connection.id, options.owner).catch(() => undefined);
  };

  /** Ends a session without the caller waiting for it (its device may take a request timeout to let go). */
  const dropLater = (k: string, release: boolean) => {
    const done = drop(k, release).catch((err: unknown) => log.warn({ err, connection: k }, 'a session did not end cleanly'));
    ending.add(done);
    void done.finally(() => ending.delete(done));
  };

  /** Renews every lease held here; a session whose lease is gone is dropped (not waited for). */
  const renew = async () => {
    const before = lastRenewal;
    // The store's first lane: a renewal never queues behind history batches, reads or other writes.
    const held = await renewLeases(options.store.first(), options.owner, leaseMs);
    lastRenewal = Date.now();
    const lateMs = lastRenewal - before - tickMs;
    if (sessions.size > 0 && lateMs > tickMs)
      log.warn({ lateMs, leaseMs }, `leases renewed ${lateMs} ms later than due; the process is slow to answer its timers`);
    for (const k of [...sessions.keys()]) {
      if (!held.has(k)) {
        log.warn({ connection: k }, 'lease lost; dropping the association');
        dropLater(k, false);
      }
    }
  };

  /**
   * A renewal bounded by the safety margin: one that neither answers nor fails (a half-open socket, a lock
   * held elsewhere) fails once the last renewal is older than the margin, so the associations are dropped
   * before another replica can take the leases over; the statement may still complete later, harmlessly.
   */
  const boundedRenewal = () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waitMs = Math.max(tickMs, lastRenewal + leaseMs * 0.7 - Date.now());
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`lease renewal not answered within ${Math.round(leaseMs * 0.7)} ms of the last one`)),
        waitMs,
      );
      timer.unref?.();
    });
    return Promise.race([renew(), overdue]).finally(() => clearTimeout(timer));
  };

  const renewNow = () => {
    renewing ??= boundedRenewal()
      .catch((err: unknown) => {
        // The store is away: keep what is held only while the leases surely have not expired.
        if (Date.now() - lastRenewal > leaseMs * 0.7 && sessions.size > 0) {
          log.warn({ err }, 'leases could not be renewed in time; dropping every association');
          for (const k of [...sessions.keys()]) dropLater(k, false);
        } else log.debug({ err }, 'lease renewal failed');
      })
      .finally(() => (renewing = null));
    return renewing;
  };

  const tick = async () => {
    try {
      await renewNow();
      const started = await startedConnections(options.store, options.site ?? centralSite);
      const wanted = new Set(started.map((c) => key(c.space, c.id)));
      for (const k of [...sessions.keys()]) if (!wanted.has(k)) dropLater(k, true);
      for (const c of started) {
        const k = key(c.space, c.id);
        sessions.get(k)?.retarget(c);
        if (stopped || sessions.has(k)) continue;
        if (!(await acquireLease(options.store, c.space, c.id, options.owner, leaseMs))) continue;
        const session = new Session(c, {
          store: options.store,
          bus: options.bus,
          log: options.log,
          owner: options.owner,
          connector: options.connector,
          backoff: options.backoff,
          journal,
          ...(options.target ? { target: options.target } : {}),
          ...(options.onValues ? { onValues: options.onValues } : {}),
          ...(options.maxDeviceRequests === undefined ? {} : { maxDeviceRequests: options.maxDeviceRequests }),
          expectedModel: (conn, domains) => expectedModelOf(options.store, conn.space, conn.id, domains),
        });
        sessions.set(k, session);
        session.start();
        log.info({ connection: k }, 'holding the connection');
      }
    } catch (err) {
      log.debug({ err }, 'supervisor tick failed');
    }
  };

  const run = () => {
    ticking ??= tick().finally(() => (ticking = null));
    return ticking;
  };
  const timer = setInterval(() => void run(), tickMs);
  timer.unref();
  const renewer = setInterval(() => void renewNow(), tickMs);
  renewer.unref();
  void run();

  return {
    local: (space, id) => sessions.get(key(space, id)),
    held: () => [...sessions.values()].map((s) => s.connection),
    kick: async () => {
      await ticking;
      await run();
    },
    end: async (space, id) => {
      await ticking;
      await drop(key(space, id), true);
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      clearInterval(renewer);
      await ticking;
      await renewing;
      await Promise.all([...sessions.keys()].map((k) => drop(k, true)));
      await Promise.all([...ending]);
    },
  };
}
