/**
 * The config service on every bus and store the environment offers, for contract tests that call its
 * operations over the bus as the gateway would: with a space and an actor in the call context. One store
 * of each kind per test file (shared by the buses: spaces keep the tests apart), one service per bus and
 * store; everything is closed when the file's tests end.
 */
import { randomUUID } from 'node:crypto';
import type { Actor, Operation, RequestOf, ResponseOf } from '@scada/contracts';
import { call, EnvReader, startService, type Bus, type BusMessage, type RunningService, type Store } from '@scada/platform';
import { pino } from 'pino';
import type { Test } from 'tap';
import { busTargets } from '@scada/testkit/buses';
import { storeTargets } from '@scada/testkit/stores';
import { configService } from '../src/service.ts';

/** The parts of a request message a test gives; the rest defaults to empty. */
export type CallInput = { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };

/** Calls operations as one user in one space. */
export type Caller = {
  space: string;
  actor: Actor;
  /** Calls an operation; bad input is sent as given (the service must refuse it). */
  call<O extends Operation>(op: O, input?: CallInput): Promise<ResponseOf<O>>;
};

/** One running config service, its bus and its store. */
export type Harness = {
  name: string;
  bus: Bus;
  store: Store;
  /** A caller in `space` (a fresh one by default), as a user named `name`. */
  as(space?: string, name?: string): Caller;
  /** Collects every config event published from now on. */
  events(): Promise<{ seen: { subject: string; body: Record<string, unknown> }[]; stop(): Promise<void> }>;
};

const decoder = new TextDecoder();

/** A space id no other test uses. */
export function freshSpace(): string {
  return `space-${randomUUID().slice(0, 8)}`;
}

/** An editor of `space` as the gateway would describe them. */
export function actorIn(space: string, name: string): Actor {
  return { id: randomUUID(), name, roles: ['editor'], spaces: [space] };
}

/**
 * Starts the service on every bus × store pair, each pair with a bus of its own (two services on one bus
 * would share its requests between their stores); stops and closes all of it in `t`'s teardown.
 */
export async function startHarnesses(t: Test): Promise<Harness[]> {
  const log = pino({ level: 'silent' });
  const stores = await Promise.all(storeTargets().map(async (target) => ({ name: target.name, made: await target.make() })));
  const buses: Bus[] = [];
  const running: RunningService[] = [];
  t.teardown(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await Promise.all(buses.map((b) => b.close()));
    await Promise.all(stores.map((s) => s.made.cleanup()));
  });
  const harnesses: Harness[] = [];
  for (const { name: storeName, made } of stores) {
    for (const target of busTargets()) {
      const bus = await target.make({ defaultTimeoutMs: 10_000 });
      buses.push(bus);
      running.push(await startService(configService, { bus, store: made.store, log, config: configService.readConfig(new EnvReader({})) }));
      harnesses.push(harness(`${target.name} bus, ${storeName} store`, bus, made.store));
    }
  }
  return harnesses;
}

function harness(name: string, bus: Bus, store: Store): Harness {
  return {
    name,
    bus,
    store,
    as(space = freshSpace(), user = 'editor-1') {
      const actor = actorIn(space, user);
      return {
        space,
        actor,
        call: (op, input = {}) =>
          call(bus, op, { params: {}, query: {}, ...input } as RequestOf<typeof op>, { requestId: randomUUID(), space, actor }),
      };
    },
    async events() {
      const seen: { subject: string; body: Record<string, unknown> }[] = [];
      const sub = bus.subscribe('events.config.>', (m: BusMessage) => {
        seen.push({ subject: m.subject, body: JSON.parse(decoder.decode(m.data)) as Record<string, unknown> });
      });
      await bus.flush();
      return { seen, stop: () => sub.unsubscribe() };
    },
  };
}

/** Waits until `check` holds, up to two seconds: events travel asynchronously. */
export async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** Minimal valid bodies of each resource, with a name. */
export const bodies = {
  project: (name: string) => ({ name, isActive: true }),
  boardGroup: (name: string) => ({ name }),
  board: (name: string) => ({ name, type: 'Html', header: false }),
  faceplate: (name: string, projectId: string) => ({ name, projectId }),
  placeholder: (name: string) => ({ name, type: 'text' }),
  script: (name: string, projectId: string) => ({ name, projectId, type: 'None', log: false, code: '' }),
};
