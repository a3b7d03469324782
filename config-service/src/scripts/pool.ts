/**
 * The script workers of a replica: a fixed number of worker threads, each running one script at a time in
 * a fresh sandbox, fed from one queue. The main thread serves the scripts' host calls (the plant, over the
 * bus) and watches every run: a worker that has not answered by the run's deadline plus a grace time is
 * terminated, the run ends `timeout`, and a new worker takes its place, so that nothing a script does can
 * hold a thread, the queue or the service.
 *
 * Runs that say whose they are (`Admission`) are admitted fairly: a space's runs of one lane hold at most
 * `perSpace` workers at once, so one space flooding the replica with endless loops leaves the other
 * workers to the rest; scheduled runs are taken before runs by hand and checks, so that hand runs cannot
 * starve them; past `queuePerSpace` runs of a space (or `queueMax` in all) waiting for a worker, one more
 * is refused at once (`PoolRefusal` 'overloaded'). A run's deadline counts from when a worker takes it;
 * one that must end by a time (its caller's deadline) and cannot start in time is not started ('expired').
 */
import { Worker } from 'node:worker_threads';
import { workerEntry } from '@scada/platform';
import type { Logger } from 'pino';
import {
  maxCallsInFlight,
  type CompileProblem,
  type HostApi,
  type HostCall,
  type HostFailure,
  type RunResult,
  type SandboxLimits,
} from './limits.ts';
import type { SandboxJob } from './sandbox.ts';
import type { ToWorker } from './sandbox_worker.ts';

export type PoolOptions = {
  size: number;
  /** Workers the admitted runs of one space and lane may hold at once (default: half the workers, at least one). */
  perSpace?: number;
  /** Admitted runs by hand and checks of one space that may wait for a worker (default 4). */
  queuePerSpace?: number;
  /** Admitted runs by hand and checks of all spaces that may wait for a worker (default 64). */
  queueMax?: number;
  log: Logger;
  /** The memory limit of the runs (`SandboxLimits.memoryBytes`): each worker's WebAssembly memory is bounded by it. */
  memoryBytes: number;
  /** How long past a run's deadline its worker may take to answer before it is terminated (default 250 ms). */
  graceMs?: number;
  /** Lets tests make a worker hang (`hang`). */
  testHooks?: boolean;
};

/**
 * Whose a run is and how it queues: its space, its lane (`schedule` runs are taken first; `hand` covers
 * runs by hand and checks), and optionally the time by which it must have ended (its caller's deadline):
 * a worker that takes it later than that does not start it, and its deadline is cut to what is left.
 */
export type Admission = { space: string; lane: 'schedule' | 'hand'; finishBy?: number };

/** Why the pool did not run a job: its queue was full (answer 503 `overloaded`), or its caller's time ran out first. */
export class PoolRefusal extends Error {
  readonly reason: 'overloaded' | 'expired';
  constructor(reason: 'overloaded' | 'expired', message: string) {
    super(message);
    this.name = 'PoolRefusal';
    this.reason = reason;
  }
}

/** Less time than this left before a run's `finishBy` when a worker takes it, and it is not started. */
const minRunMs = 50;

type Queued = {
  admission?: Admission;
  reject: (err: PoolRefusal) => void;
  /** Told the deadline (epoch ms) a run got when a worker took it. */
  onStart?: (deadlineAt: number) => void;
  expiry?: NodeJS.Timeout;
};

type Task = Queued &
  (
    | { type: 'run'; job: SandboxJob; host: HostApi; resolve: (r: RunResult) => void; hang?: boolean }
    | { type: 'check'; job: SandboxJob; resolve: (r: CompileProblem) => void }
  );

type Slot = {
  worker: Worker;
  ready: Promise<void>;
  task: Task | null;
  id: number;
  startedAt: number;
  watchdog: NodeJS.Timeout | null;
  abort: AbortController | null;
  /** Calls to the plant of the running task not answered yet. */
  calls: number;
  /** The running task's deadline as it started. */
  deadlineMs: number;
};

type FromWorker =
  | { type: 'ready' }
  | { type: 'call'; job: number; call: number; kind: string; args: unknown }
  | { type: 'done'; job: number; result: RunResult | CompileProblem; retire?: boolean };

let nextJob = 0;

/** A refusal of a host call as the script gets it. */
function failureOf(err: unknown): HostFailure {
  const e = err as { message?: unknown; code?: unknown; status?: unknown; extensions?: { deviceError?: unknown }; detail?: unknown };
  const message = typeof e?.detail === 'string' ? e.detail : typeof e?.message === 'string' ? e.message : 'the call failed';
  return {
    message,
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
    ...(e?.extensions?.deviceError !== undefined ? { deviceError: e.extensions.deviceError } : {}),
  };
}

export class ScriptPool {
  readonly #options: PoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: Task[] = [];
  #workerUrl: Promise<{ url: URL; marker: string }> | null = null;
  #stopped = false;
  #warm = false;
  #replaced = 0;

  constructor(options: PoolOptions) {
    this.#options = options;
  }

  /** Workers terminated and replaced so far (a run that did not come back). */
  get replaced(): number {
    return this.#replaced;
  }

  /** Runs waiting for a worker. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Runs a script; answers how it ended, whatever the script does. With an admission it queues fairly and
   * may be refused (`PoolRefusal`); `onStart` hears the deadline the run got when a worker took it.
   */
  run(job: SandboxJob, host: HostApi, admission?: Admission, onStart?: (deadlineAt: number) => void): Promise<RunResult> {
    return new Promise((resolve, reject) => this.#enqueue({ type: 'run', job, host, resolve, reject, admission, onStart }));
  }

  /** Compiles a script without running it: null, or where and why it does not compile. */
  check(code: string, limits: SandboxLimits, admission?: Admission): Promise<CompileProblem> {
    return new Promise((resolve, reject) =>
      this.#enqueue({ type: 'check', job: { code, limits, state: null }, resolve, reject, admission }),
    );
  }

  /** Tests only: the next worker to take a job stops answering, as one stuck outside the interpreter would. */
  runHanging(job: SandboxJob): Promise<RunResult> {
    if (!this.#options.testHooks) throw new Error('the pool was not started with test hooks');
    return new Promise((resolve, reject) => this.#enqueue({ type: 'run', job, host: async () => null, resolve, reject, hang: true }));
  }

  /** Starts every worker now, so that the first runs do not wait for a thread to load QuickJS; settles once they are ready. */
  async warm(): Promise<void> {
    if (!this.#warm && !this.#stopped) {
      this.#warm = true;
      await this.#pump();
    }
    await Promise.all(this.#slots.map((s) => s.ready));
  }

  /** Terminates every worker; queued and running jobs end as errors. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const task of this.#queue.splice(0)) {
      if (task.expiry) clearTimeout(task.expiry);
      this.#fail(task, 'the service is stopping');
    }
    await Promise.all(
      this.#slots.splice(0).map(async (slot) => {
        if (slot.task) this.#fail(slot.task, 'the service is stopping');
        if (slot.watchdog) clearTimeout(slot.watchdog);
        await slot.worker.terminate();
      }),
    );
  }

  #enqueue(task: Task): void {
    if (this.#stopped) return this.#fail(task, 'the service is stopping');
    const refusal = this.#refusal(task);
    if (refusal) return task.reject(refusal);
    const finishBy = task.admission?.finishBy;
    if (finishBy !== undefined) {
      // A run whose caller gives up while it waits leaves the queue then, not when a worker frees.
      task.expiry = setTimeout(() => this.#expire(task), Math.max(0, finishBy - Date.now() - minRunMs));
      task.expiry.unref();
    }
    this.#queue.push(task);
    void this.#pump();
  }

  /** Why an admitted run by hand or check cannot wait: its space's share of the queue, or the whole queue, is full. */
  #refusal(task: Task): PoolRefusal | null {
    const a = task.admission;
    if (!a || a.lane === 'schedule') return null;
    const waiting = this.#queue.filter((q) => q.admission && q.admission.lane !== 'schedule');
    const ofSpace = waiting.filter((q) => q.admission!.space === a.space).length;
    const perSpace = this.#options.queuePerSpace ?? 4;
    const max = this.#options.queueMax ?? 64;
    if (ofSpace >= perSpace) return new PoolRefusal('overloaded', `${ofSpace} runs of this space wait for a worker on this replica`);
    if (waiting.length >= max) return new PoolRefusal('overloaded', `${waiting.length} runs wait for a worker on this replica`);
    return null;
  }

  #expire(task: Task): void {
    const at = this.#queue.indexOf(task);
    if (at === -1) return;
    this.#queue.splice(at, 1);
    task.reject(new PoolRefusal('expired', 'the caller gave up before a worker was free'));
  }

  /** Workers held by admitted runs of a space in a lane. */
  #holding(space: string, lane: Admission['lane']): number {
    return this.#slots.filter((s) => s.task?.admission?.space === space && s.task.admission.lane === lane).length;
  }

  /** The next task a free worker takes: scheduled runs first, then the rest, in order, each space within its share. */
  #next(): Task | undefined {
    const cap = this.#options.perSpace ?? Math.max(1, Math.ceil(this.#options.size / 2));
    const may = (t: Task) => !t.admission || this.#holding(t.admission.space, t.admission.lane) < cap;
    const at =
      this.#queue.findIndex((t) => t.admission?.lane === 'schedule' && may(t)) !== -1
        ? this.#queue.findIndex((t) => t.admission?.lane === 'schedule' && may(t))
        : this.#queue.findIndex(may);
    return at === -1 ? undefined : this.#queue.splice(at, 1)[0];
  }

  async #pump(): Promise<void> {
    this.#workerUrl ??= import('./sandbox_worker.ts').then((m) => ({
      url: workerEntry(m.sandboxWorkerUrl, 'sandbox_worker_tsx.mjs'),
      marker: m.workerMarker,
    }));
    const where = await this.#workerUrl;
    if (this.#stopped) return;
    const wanted = this.#warm ? this.#options.size : Math.min(this.#options.size, this.#queue.length + this.#busy());
    while (this.#slots.length < wanted) {
      this.#slots.push(this.#spawn(where));
    }
    for (const slot of this.#slots) {
      if (slot.task || this.#queue.length === 0) continue;
      const task = this.#next();
      if (!task) break;
      this.#start(slot, task);
    }
  }

  #busy(): number {
    return this.#slots.filter((s) => s.task !== null).length;
  }

  #spawn({ url, marker }: { url: URL; marker: string }): Slot {
    const worker = new Worker(url, {
      workerData: { kind: marker, testHooks: this.#options.testHooks === true, memoryBytes: this.#options.memoryBytes },
    });
    worker.unref();
    let ready!: () => void;
    const slot: Slot = {
      worker,
      ready: new Promise((r) => (ready = r)),
      task: null,
      id: -1,
      startedAt: 0,
      watchdog: null,
      abort: null,
      calls: 0,
      deadlineMs: 0,
    };
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'ready') return ready();
      if (msg.type === 'call') return void this.#serveCall(slot, msg);
      if (msg.type === 'done' && msg.job === slot.id) this.#done(slot, msg.result, msg.retire === true);
    });
    worker.on('error', (err) => this.#options.log.error({ err }, 'a script worker failed'));
    worker.on('exit', () => this.#lost(slot, 'the script worker ended'));
    return slot;
  }

  #start(slot: Slot, task: Task): void {
    slot.task = task;
    slot.id = ++nextJob;
    slot.abort = new AbortController();
    slot.calls = 0;
    if (task.expiry) clearTimeout(task.expiry);
    void slot.ready.then(() => {
      if (slot.task !== task) return;
      // The deadline counts from here, when the worker can start: neither the wait for a worker nor a slow
      // worker start is the script's time; only what is left of its caller's is a bound on it.
      const finishBy = task.admission?.finishBy;
      const deadlineMs = finishBy === undefined ? task.job.limits.deadlineMs : Math.min(task.job.limits.deadlineMs, finishBy - Date.now());
      if (finishBy !== undefined && finishBy - Date.now() < minRunMs) {
        this.#release(slot);
        task.reject(new PoolRefusal('expired', 'the caller gave up before a worker was free'));
        return void this.#pump();
      }
      slot.startedAt = performance.now();
      slot.deadlineMs = deadlineMs;
      task.onStart?.(Date.now() + deadlineMs);
      slot.watchdog = setTimeout(() => this.#hung(slot), deadlineMs + (this.#options.graceMs ?? 250));
      const job = { ...task.job, limits: { ...task.job.limits, deadlineMs } };
      const message: ToWorker =
        task.type === 'run' && task.hang ? { type: 'hang', job: slot.id } : { type: task.type, job: slot.id, ...job };
      slot.worker.postMessage(message);
    });
  }

  async #serveCall(slot: Slot, msg: Extract<FromWorker, { type: 'call' }>): Promise<void> {
    const task = slot.task;
    if (task?.type !== 'run' || msg.job !== slot.id) return;
    const signal = slot.abort!.signal;
    let answer: { json: string } | { failure: HostFailure };
    if (slot.calls >= maxCallsInFlight) {
      answer = {
        failure: { message: `at most ${maxCallsInFlight} calls to the plant may wait for their answers at once`, code: 'too_many_calls' },
      };
    } else {
      slot.calls++;
      try {
        answer = { json: JSON.stringify((await task.host(msg.args as HostCall, signal)) ?? null) };
      } catch (err) {
        answer = { failure: failureOf(err) };
      } finally {
        if (slot.task === task) slot.calls--;
      }
    }
    if (slot.task === task) slot.worker.postMessage({ type: 'reply', job: msg.job, call: msg.call, answer } satisfies ToWorker);
  }

  #done(slot: Slot, result: RunResult | CompileProblem, retire: boolean): void {
    const task = slot.task;
    if (!task) return;
    this.#release(slot);
    if (retire) this.#replace(slot);
    if (task.type === 'run') task.resolve(result as RunResult);
    else task.resolve(result as CompileProblem);
    void this.#pump();
  }

  #release(slot: Slot): void {
    if (slot.watchdog) clearTimeout(slot.watchdog);
    slot.abort?.abort();
    slot.watchdog = null;
    slot.abort = null;
    slot.task = null;
  }

  /** A worker that did not answer in time: terminated, its run ended `timeout`, a new worker in its place. */
  #hung(slot: Slot): void {
    const task = slot.task;
    if (!task) return;
    this.#options.log.warn({ deadlineMs: slot.deadlineMs }, 'a script worker did not come back; terminating it');
    const ms = performance.now() - slot.startedAt;
    this.#replace(slot);
    this.#resolveAs(task, 'timeout', ms, `the run did not end by its deadline of ${slot.deadlineMs} ms; its worker was terminated`);
  }

  /** A worker that ended on its own (a crash in the WebAssembly module): its run fails, a new worker takes its place. */
  #lost(slot: Slot, why: string): void {
    if (!this.#slots.includes(slot)) return;
    const task = slot.task;
    this.#replace(slot);
    if (task) this.#resolveAs(task, 'error', performance.now() - slot.startedAt, why);
  }

  #replace(slot: Slot): void {
    const at = this.#slots.indexOf(slot);
    if (at === -1) return;
    this.#slots.splice(at, 1);
    this.#release(slot);
    this.#replaced++;
    void slot.worker.terminate();
    if (!this.#stopped) void this.#pump();
  }

  #resolveAs(task: Task, outcome: 'timeout' | 'error', ms: number, message: string): void {
    if (task.type === 'check') return task.resolve({ name: 'InternalError', message, line: null, column: null });
    task.resolve({
      outcome,
      result: null,
      logs: [],
      durationMs: Math.round(ms * 100) / 100,
      error: { name: 'InternalError', message, line: null, column: null },
    });
  }

  #fail(task: Task, message: string): void {
    this.#resolveAs(task, 'error', 0, message);
  }
}
