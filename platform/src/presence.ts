import { presence, ReplicaBeat, validate, type ServiceName } from '@scada/contracts';
import type { Logger } from 'pino';
import type { Bus, BusSubscription } from './bus/bus.ts';
import type { Store } from './store/store.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A live replica as its last beat described it. */
export type ReplicaInfo = { instance: string; version: string; store: 'ok' | 'down' };

/** The live replicas of every service. */
export type LiveReplicas = Record<ServiceName, ReplicaInfo[]>;

/** The services whose replicas are counted, in the order they are listed. */
const serviceNames: readonly ServiceName[] = ['auth', 'config', 'protocol', 'history'];

/**
 * Makes one service replica present on the bus: a beat at once, every `presence.intervalMs` after
 * that and whenever a process asks; `stop()` sends the last beat, `stopping`, so watchers count the
 * replica gone at once rather than after its beats are missed.
 */
export function announcePresence(deps: { bus: Bus; store: Store; log: Logger; service: ServiceName; version: string; instance: string }): {
  stop(): void;
} {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const beat = async (state: ReplicaBeat['state']) => {
    const store = state === 'up' && (await deps.store.ping()) ? 'ok' : 'down';
    // A beat that was checking the store while the replica began to stop must not follow its last word.
    if (state === 'up' && stopped) return;
    const body: ReplicaBeat = { service: deps.service, instance: deps.instance, version: deps.version, store, state };
    try {
      deps.bus.publish(presence.subject(deps.service), encoder.encode(JSON.stringify(body)));
    } catch (err) {
      // A closed or disconnected bus: the next beat tries again, watchers meanwhile count this replica gone.
      deps.log.debug({ err }, 'presence beat not sent');
    }
  };
  const loop = async () => {
    await beat('up');
    if (!stopped) timer = setTimeout(() => void loop(), presence.intervalMs);
  };
  const asked = deps.bus.subscribe(presence.querySubject, () => (stopped ? undefined : beat('up')));
  void loop();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      void asked.unsubscribe();
      void beat('stopping');
    },
  };
}

/**
 * Follows the beats of every service's replicas. `live()` lists the replicas heard within the last
 * `presence.missedBeats` intervals that have not said they are stopping.
 */
export class ReplicaWatch {
  private readonly bus: Bus;
  private readonly seen = new Map<string, { service: ServiceName; info: ReplicaInfo; at: number }>();
  private subscription: BusSubscription | null = null;

  constructor(bus: Bus) {
    this.bus = bus;
  }

  /** Starts listening and asks every replica to beat now. */
  start(): void {
    if (this.subscription) return;
    this.subscription = this.bus.subscribe(presence.anySubject, (msg) => this.note(msg.data));
    this.bus.publish(presence.querySubject, new Uint8Array());
  }

  /** The live replicas of every service (a service with none has an empty list). */
  live(): LiveReplicas {
    const cutoff = Date.now() - presence.intervalMs * presence.missedBeats;
    const out = Object.fromEntries(serviceNames.map((s) => [s, [] as ReplicaInfo[]])) as LiveReplicas;
    for (const [instance, entry] of this.seen) {
      if (entry.at < cutoff) this.seen.delete(instance);
      else out[entry.service].push(entry.info);
    }
    for (const list of Object.values(out)) list.sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0)); // by code unit: no locale data
    return out;
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    this.subscription = null;
  }

  private note(data: Uint8Array): void {
    let beat: unknown;
    try {
      beat = JSON.parse(decoder.decode(data));
    } catch {
      return;
    }
    const checked = validate(ReplicaBeat, beat);
    if (!checked.ok) return;
    const { service, instance, version, store, state } = checked.value;
    if (state === 'stopping') this.seen.delete(instance);
    else this.seen.set(instance, { service, info: { instance, version, store }, at: Date.now() });
  }
}

/** What a process's readiness check found. */
export type Readiness = { ready: boolean; failing: string[]; services: LiveReplicas };

/**
 * Readiness of a process: it can do its own work when it is not draining, its bus is connected, and
 * its store (when it runs services) answers. Other services' replicas are listed, never required: a
 * service with no replica fails its own requests with 503, not this process's readiness.
 */
export async function checkReadiness(deps: {
  bus: Bus;
  store: Store | null;
  isDraining: () => boolean;
  replicas: ReplicaWatch;
}): Promise<Readiness> {
  const failing: string[] = [];
  if (deps.isDraining()) failing.push('draining');
  if (!deps.bus.isConnected()) failing.push('bus');
  if (deps.store && !(await deps.store.ping().catch(() => false))) failing.push('store');
  return { ready: failing.length === 0, failing, services: deps.replicas.live() };
}
