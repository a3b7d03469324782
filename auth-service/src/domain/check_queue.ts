import { ProblemError } from '@scada/contracts';

/** Settings of the password-check queue of one auth replica. */
export type CheckQueueOptions = {
  /** Checks hashed at once. */
  concurrency: number;
  /** Checks waiting for a turn, beyond those running. */
  queueLength: number;
  /** Seconds a refused client is told to wait (`Retry-After`). */
  retryAfterSeconds?: number;
  /** What one check takes before any has been timed here (a hash timed at start-up). */
  estimateMs?: number;
  /** The clock, for tests. */
  now?: () => number;
};

/** A check admitted to the queue: wait for its turn, then say when it is done. */
export type CheckTicket = {
  /** Resolves when the check may run; rejects with `overloaded` when it was pushed out of the queue, or the caller's timeout when its deadline passed while it waited. */
  turn(): Promise<void>;
  /** Gives the turn (or the place in the queue) back; call exactly once, whatever happened. */
  done(): void;
};

type Waiting = {
  seq: number;
  address: string;
  deadline: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  state: 'waiting' | 'running' | 'out';
  timer?: ReturnType<typeof setTimeout>;
  startedAt?: number;
};

const failureHalfLifeMs = 60_000;
/** How much a refusal for a full queue counts against an address, against 1 for a failed check. */
const refusalWeight = 0.25;
/** Room kept when judging whether a check can finish before its deadline. */
const margin = 1.25;
const maxTrackedAddresses = 10_000;

/**
 * The password checks of one auth replica: at most `concurrency` hashes at once and `queueLength`
 * waiting, so a burst of sign-ins costs bounded memory and CPU and is refused at once (503 `overloaded`)
 * instead of piling up until every caller times out. Requests whose deadline passes while they wait are
 * dropped before their hash. Waiting checks are served by how much their client address has been failing
 * lately (fewest failures first, then in order of arrival), and a full queue makes room for a newcomer
 * from a cleaner address by pushing out the worst-placed waiting check: an address sending wrong passwords
 * cannot keep the others from signing in.
 */
export class CheckQueue {
  readonly #concurrency: number;
  readonly #queueLength: number;
  readonly #retryAfter: number;
  readonly #now: () => number;
  readonly #waiting: Waiting[] = [];
  readonly #runningChecks = new Set<Waiting>();
  readonly #failures = new Map<string, { score: number; at: number }>();
  #seq = 0;
  /** Moving average of a check's duration, to refuse at once what could not start before its deadline. */
  #checkMs = 0;

  constructor(options: CheckQueueOptions) {
    this.#concurrency = options.concurrency;
    this.#queueLength = options.queueLength;
    this.#retryAfter = options.retryAfterSeconds ?? 1;
    this.#now = options.now ?? Date.now;
    this.#checkMs = options.estimateMs ?? 0;
  }

  /** What one check takes, timed elsewhere (a hash at start-up); ignored once a check has been timed here. */
  estimate(ms: number): void {
    if (this.#checkMs === 0) this.#checkMs = ms;
  }

  /** Checks running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.#runningChecks.size, waiting: this.#waiting.length };
  }

  /**
   * Admits a check from an address with a deadline (epoch ms, `Infinity` for none), or refuses it at once
   * with 503 `overloaded`: when the queue is full of checks from addresses failing as much or more, or when
   * the checks ahead would take it past its deadline.
   */
  admit(address: string | null, deadline: number): CheckTicket {
    const key = address ?? '';
    const score = this.#score(key);
    if (this.#runningChecks.size < this.#concurrency && this.#waiting.length === 0) {
      const entry: Waiting = {
        seq: this.#seq++,
        address: key,
        deadline,
        resolve: () => undefined,
        reject: () => undefined,
        state: 'running',
      };
      this.#start(entry);
      return this.#ticket(entry);
    }
    if (this.#now() + this.#finishIn(score) * margin > deadline) throw this.#refuse(key);
    if (this.#waiting.length >= this.#queueLength) {
      const worst = this.#worst();
      if (!worst || this.#score(worst.address) <= score) throw this.#refuse(key);
      this.#pushOut(worst);
    }
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const turn = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // The rejection is read by whoever awaits the turn; never an unhandled rejection meanwhile.
    turn.catch(() => undefined);
    const waiting: Waiting = { seq: this.#seq++, address: key, deadline, resolve, reject, state: 'waiting' };
    this.#waiting.push(waiting);
    // A check that can no longer finish in time is answered 503 while its caller still listens, not 504.
    if (Number.isFinite(deadline)) {
      waiting.timer = setTimeout(
        () => waiting.state === 'waiting' && this.#pushOut(waiting),
        Math.max(0, deadline - this.#now() - this.#checkMs * margin),
      );
      waiting.timer.unref?.();
    }
    return this.#ticket(waiting, turn);
  }

  /**
   * Counts a failed check against its client address, which then waits behind cleaner ones for a while.
   * Refusals count too, by `weight`: an address sending more than the queue holds is pushing the others out.
   */
  noteFailure(address: string | null, weight = 1): void {
    const key = address ?? '';
    const score = this.#score(key) + weight;
    this.#failures.delete(key);
    this.#failures.set(key, { score, at: this.#now() });
    if (this.#failures.size > maxTrackedAddresses) this.#failures.delete(this.#failures.keys().next().value as string);
  }

  /**
   * The waiting checks with their address's standing now, not when they arrived: an address that has
   * been refused or has failed since waits behind cleaner ones, even with checks queued before them.
   */
  #standing(): { w: Waiting; score: number }[] {
    const scores = new Map<string, number>();
    return this.#waiting.map((w) => {
      let score = scores.get(w.address);
      if (score === undefined) scores.set(w.address, (score = this.#score(w.address)));
      return { w, score };
    });
  }

  #score(key: string): number {
    const entry = this.#failures.get(key);
    if (!entry) return 0;
    return entry.score * 0.5 ** ((this.#now() - entry.at) / failureHalfLifeMs);
  }

  #ticket(entry: Waiting, turn: Promise<void> = Promise.resolve()): CheckTicket {
    let started = entry.state === 'running' ? this.#now() : 0;
    let finished = false;
    return {
      turn: async () => {
        await turn;
        started = this.#now();
      },
      done: () => {
        if (finished) return;
        finished = true;
        if (entry.state === 'waiting') {
          // Its caller gave up before its turn: it leaves the queue without running.
          this.#remove(entry);
          clearTimeout(entry.timer);
          entry.state = 'out';
          return;
        }
        if (entry.state === 'out') return; // pushed out or dropped: it never held a turn
        entry.state = 'out';
        this.#runningChecks.delete(entry);
        if (started > 0) {
          const took = this.#now() - started;
          this.#checkMs = this.#checkMs === 0 ? took : this.#checkMs * 0.8 + took * 0.2;
        }
        this.#next();
      },
    };
  }

  #next(): void {
    while (this.#runningChecks.size < this.#concurrency && this.#waiting.length > 0) {
      const best = this.#standing().reduce((a, b) => (b.score < a.score || (b.score === a.score && b.w.seq < a.w.seq) ? b : a)).w;
      this.#remove(best);
      clearTimeout(best.timer);
      if (this.#now() >= best.deadline) {
        best.state = 'out';
        best.reject(new ProblemError('upstream_timeout', 'The password check was not started: its deadline had passed'));
        continue;
      }
      this.#start(best);
      best.resolve();
    }
  }

  #start(entry: Waiting): void {
    entry.state = 'running';
    entry.startedAt = this.#now();
    this.#runningChecks.add(entry);
  }

  /**
   * How long from now a new check of this score would take to finish: each lane is free when its running
   * check has had its usual time, the waiting checks served before this one take the earliest free lanes,
   * then this one runs.
   */
  #finishIn(score: number): number {
    const now = this.#now();
    const lanes = [...this.#runningChecks].map((r) => Math.max(0, this.#checkMs - (now - (r.startedAt ?? now))));
    while (lanes.length < this.#concurrency) lanes.push(0);
    const earliest = () => lanes.indexOf(Math.min(...lanes));
    const ahead = this.#standing().filter((w) => w.score <= score).length;
    for (let i = 0; i < ahead; i++) lanes[earliest()] += this.#checkMs;
    return (lanes[earliest()] as number) + this.#checkMs;
  }

  #pushOut(waiting: Waiting): void {
    this.#remove(waiting);
    clearTimeout(waiting.timer);
    waiting.state = 'out';
    waiting.reject(this.#refuse(waiting.address));
  }

  #refuse(key: string): ProblemError {
    this.noteFailure(key, refusalWeight);
    return this.#overloaded();
  }

  #worst(): Waiting | undefined {
    if (this.#waiting.length === 0) return undefined;
    return this.#standing().reduce((a, b) => (b.score > a.score || (b.score === a.score && b.w.seq > a.w.seq) ? b : a)).w;
  }

  #remove(waiting: Waiting): void {
    const at = this.#waiting.indexOf(waiting);
    if (at >= 0) this.#waiting.splice(at, 1);
  }

  #overloaded(): ProblemError {
    return new ProblemError('overloaded', 'Too many sign-ins are being checked: try again shortly', { retryAfter: this.#retryAfter });
  }
}
